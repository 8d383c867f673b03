"""Downloads against a hostile or absent server: size cap, deadline, trickles, file:// and redirects, no leftovers.

Every case runs against a server on 127.0.0.1 started inside the test, which stops itself (each response is
bounded in bytes and seconds, and every handler quits when the test ends).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
import urllib.error
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from metaeval_core.data import registry
from metaeval_core.data.registry import DownloadError, dataset_info, fetch_dataset
from tests.localhttp import serve

PAYLOAD = b"system,input,score\n" + b"".join(f"s{k % 4},d{k},{k / 7:.4f}\n".encode() for k in range(200))
SHA = hashlib.sha256(PAYLOAD).hexdigest()
REL = "tiny/nested/scores.csv"
HARD_STOP = 20.0  # no handler ever runs longer than this, whatever the client does


def _entry(size: int | None = len(PAYLOAD)) -> dict:
    file = {"path": REL, "url": "https://example.invalid/scores.csv", "sha256": SHA}
    if size is not None:
        file["bytes"] = size
    return {"id": "tiny", "title": "t", "citation": "c", "licence": "l", "description": "d", "loader": "rose",
            "files": [file], "optional_files": []}


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    """A registry holding one 3 kB dataset 'tiny' (the file's size and sha256 recorded)."""
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"datasets": [_entry()]}))
    monkeypatch.setattr(registry, "REGISTRY_PATH", path)
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("METAEVAL_DATA_BASE_URL", raising=False)
    return tmp_path / "cache"


class _Hostile(BaseHTTPRequestHandler):
    """``/<mode>/<path>``: ok, forever, drip, stall, big (announces too much), liar (sends too much), wrong,
    redirect-file, redirect-ok, 404."""

    stop: threading.Event

    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, data: bytes, *, length: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        if data:
            self.wfile.write(data)

    def _until_stopped(self, step) -> None:
        start = time.monotonic()
        try:
            while not self.stop.is_set() and time.monotonic() - start < HARD_STOP:
                step()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should
        self.close_connection = True

    def do_GET(self):  # noqa: N802 - http.server API
        mode = self.path.strip("/").split("/", 1)[0]
        if mode == "ok":
            self._send(PAYLOAD, length=len(PAYLOAD))
        elif mode == "wrong":
            self._send(PAYLOAD.replace(b"s1", b"s9"), length=len(PAYLOAD))
        elif mode == "big":
            self._send(b"", length=10 ** 9)
        elif mode == "liar":  # no length announced, then more than the registry's size
            self._send(b"")
            self._until_stopped(lambda: self.wfile.write(b"x" * 4096))
        elif mode == "forever":
            self.send_response(200)
            self.end_headers()
            self._until_stopped(lambda: (self.wfile.write(b"0" * 64), self.wfile.flush(), time.sleep(0.01)))
        elif mode == "drip":  # one byte every 0.3 s: never silent long enough for a read timeout
            self._send(b"", length=len(PAYLOAD))
            self._until_stopped(lambda: (self.wfile.write(b"s"), self.wfile.flush(), self.stop.wait(0.3)))
        elif mode == "stall":
            self._send(b"", length=len(PAYLOAD))
            self.stop.wait(HARD_STOP)
        elif mode == "redirect-file":
            self.send_response(302)
            self.send_header("Location", "file:///etc/passwd")
            self.end_headers()
        elif mode == "trickle-headers":  # the status line and headers a byte every 0.2 s, never complete
            line = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 4000
            self._until_stopped(lambda: (self.wfile.write(line[:1]), self.wfile.flush(), self.stop.wait(0.2)))
        elif mode == "hop":  # /hop/<k>/...: a slow redirect to hop k - 1, then the file
            _, k, rest = self.path.strip("/").split("/", 2)
            self.stop.wait(0.8)
            self.send_response(302)
            self.send_header("Location", f"/hop/{int(k) - 1}/{rest}" if int(k) > 0 else f"/ok/{rest}")
            self.end_headers()
        elif mode == "bad-status":
            self.wfile.write(b"HTTP/1.1 2OO Fine\r\n\r\n" + PAYLOAD)
        elif mode == "long-header":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
        elif mode == "many-headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 500 + b"\r\n")
        elif mode == "escape-reason":
            self.send_response(403, "Forbidden\x1b]0;pwned\x07\x1b[2J")
            self.end_headers()
        elif mode == "redirect-ok":
            self.send_response(302)
            self.send_header("Location", "/ok/" + self.path.split("/", 2)[2])
            self.end_headers()
        else:
            self.send_error(404)


@contextmanager
def hostile_server():
    stop = threading.Event()
    with serve(type("Handler", (_Hostile,), {"stop": stop})) as base:
        try:
            yield base
        finally:
            stop.set()  # every handler still running returns before the server closes


def _leftovers(root: Path) -> list[Path]:
    return sorted(root.rglob("*")) if root.exists() else []


def _fails(cache: Path, base: str, match: str, *, deadline: float = 30.0) -> float:
    start = time.monotonic()
    with pytest.raises(DownloadError, match=match) as info:
        fetch_dataset("tiny", data_dir=cache, base_url=base, deadline=deadline)
    elapsed = time.monotonic() - start
    assert "\n" not in str(info.value) and REL in str(info.value)
    assert not cache.exists(), f"left behind: {_leftovers(cache)}"  # not even the empty folders
    return elapsed


def test_a_good_mirror_and_an_http_redirect_download_and_verify(tiny):
    with hostile_server() as base:
        paths = fetch_dataset("tiny", data_dir=tiny, base_url=base + "/ok")
        assert paths == [tiny / REL] and paths[0].read_bytes() == PAYLOAD
        assert dataset_info("tiny", data_dir=tiny).available
        assert _leftovers(tiny) == [tiny / "tiny", tiny / "tiny/nested", tiny / REL]  # no temporary file
        paths[0].unlink()
        assert fetch_dataset("tiny", data_dir=tiny, base_url=base + "/redirect-ok")[0].read_bytes() == PAYLOAD


def test_a_server_that_streams_forever_is_cut_at_the_registry_size(tiny):
    with hostile_server() as base:
        assert _fails(tiny, base + "/forever", r"refused: the server sent more than the 3,039 bytes") < 10
        assert _fails(tiny, base + "/liar", "sent more than") < 10


def test_an_announced_size_above_the_registry_size_is_refused_before_reading(tiny):
    with hostile_server() as base:
        assert _fails(tiny, base + "/big", "announces 1,000,000,000 bytes, more than the 3,039") < 10


def test_a_trickle_and_a_stall_end_at_the_deadline(tiny):
    with hostile_server() as base:
        assert _fails(tiny, base + "/drip", r"timed out \(the overall deadline of 1.5 s", deadline=1.5) < 4
        assert _fails(tiny, base + "/stall", "timed out", deadline=1.5) < 4


def test_a_file_that_is_not_the_pinned_one_is_refused(tiny):
    with hostile_server() as base:
        _fails(tiny, base + "/wrong", "sha256 does not match the pinned")
        _fails(tiny, base + "/missing", "failed: HTTP 404")


def test_file_urls_are_refused_with_a_message_that_says_so(tiny):
    with pytest.raises(ValueError, match="is a file:// URL, which is not downloaded: point METAEVAL_DATA_DIR"):
        fetch_dataset("tiny", data_dir=tiny, base_url="file:///srv/mirror")
    with hostile_server() as base:
        _fails(tiny, base + "/redirect-file",
               r"refused: the server redirected to 'file:///etc/passwd'.*only http\(s\) downloads are followed")
    assert not tiny.exists()


def test_connection_failures_say_why_in_a_few_words(tiny, monkeypatch):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    _fails(tiny, f"http://127.0.0.1:{closed}", "failed: connection refused$")

    class Offline:
        def __init__(self, deadline):
            pass

        def open(self, request, timeout):
            raise urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(registry, "_opener", Offline)
    _fails(tiny, "https://example.org", r"failed: no network \(the server's name could not be resolved\)$")


def test_a_file_without_a_recorded_size_has_a_default_cap(tiny, monkeypatch):
    path = Path(registry.REGISTRY_PATH)
    path.write_text(json.dumps({"datasets": [_entry(size=None)]}))
    registry._read_registry.cache_clear()
    monkeypatch.setattr(registry, "UNSIZED_LIMIT", 10_000)
    with hostile_server() as base:
        assert fetch_dataset("tiny", data_dir=tiny, base_url=base + "/ok")[0].read_bytes() == PAYLOAD
        (tiny / REL).unlink()
        for folder in (tiny / "tiny/nested", tiny / "tiny", tiny):
            folder.rmdir()
        _fails(tiny, base + "/forever", "more than the 10,000 bytes")


def test_a_present_file_is_kept_and_folders_that_existed_stay(tiny):
    tiny.mkdir()
    with hostile_server() as base:
        with pytest.raises(DownloadError, match="sent more than"):
            fetch_dataset("tiny", data_dir=tiny, base_url=base + "/forever", deadline=10)
    assert tiny.is_dir() and _leftovers(tiny) == []  # the folder the user made stays; nothing inside


@pytest.mark.parametrize("deadline", [0, -1, float("inf"), float("nan"), "10", True])
def test_deadline_is_validated(tiny, deadline):
    with pytest.raises(ValueError, match="deadline must be a positive finite number"):
        fetch_dataset("tiny", data_dir=tiny, deadline=deadline)


# -- deadline on every phase, protocol errors, what is echoed (issue 23) -----------------------------------
def test_a_server_trickling_its_headers_is_cut_at_the_deadline(tiny):
    with hostile_server() as base:
        assert _fails(tiny, base + "/trickle-headers", r"timed out \(the overall deadline of 1.5 s", deadline=1.5) < 4


def test_slow_redirect_hops_count_against_one_deadline(tiny):
    with hostile_server() as base:
        assert fetch_dataset("tiny", data_dir=tiny, base_url=base + "/hop/1")[0].read_bytes() == PAYLOAD
        (tiny / REL).unlink()
        for folder in (tiny / "tiny/nested", tiny / "tiny", tiny):
            folder.rmdir()
        assert _fails(tiny, base + "/hop/4", r"timed out \(the overall deadline of 2 s", deadline=2) < 4


@pytest.mark.parametrize("mode, said", [
    ("bad-status", "malformed status line"),
    ("long-header", "line is too long"),
    ("many-headers", "too many header lines"),
])
def test_malformed_responses_are_one_line_download_errors(tiny, mode, said):
    with hostile_server() as base:
        assert _fails(tiny, base + f"/{mode}", f"failed: the server's response is not valid HTTP.*{said}") < 10


def test_the_reason_phrase_is_shown_without_its_escape_sequences(tiny):
    with hostile_server() as base:
        _fails(tiny, base + "/escape-reason", "failed: HTTP 403 Forbidden")
        with pytest.raises(DownloadError) as info:
            fetch_dataset("tiny", data_dir=tiny, base_url=base + "/escape-reason")
    assert "\x1b" not in str(info.value) and "\\x1b]0;pwned" in str(info.value)


def test_a_password_in_the_url_is_never_echoed(tiny):
    with hostile_server() as base:
        secret = base.replace("http://", "http://alice:s3cret-pw@") + "/missing"
        with pytest.raises(DownloadError) as info:
            fetch_dataset("tiny", data_dir=tiny, base_url=secret)
    assert "s3cret-pw" not in str(info.value) and "alice:***@127.0.0.1" in str(info.value)
    with pytest.raises(ValueError) as refused:
        fetch_dataset("tiny", data_dir=tiny, base_url="ftp://bob:hunter2@example.org/x")
    assert "hunter2" not in str(refused.value)
