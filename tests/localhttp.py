"""A throwaway HTTP server on 127.0.0.1 for download tests: serves a folder or a handler class until the block ends."""

from __future__ import annotations

import functools
import os
import threading
import time
import urllib.request
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@contextmanager
def serve(what: Path | type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve a folder (its files) or a request-handler class on a free port; yields the base URL."""
    handler = functools.partial(QuietFiles, directory=str(what)) if isinstance(what, (str, os.PathLike)) else what
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def wait_for_health(port: int, alive, *, timeout: float = 120) -> str | None:
    """Poll a Streamlit server's /_stcore/health until it answers (its text) or ``alive()`` turns False (None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                return response.read().decode()
        except OSError:
            time.sleep(0.5)
    return None
