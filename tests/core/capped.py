"""Run a snippet in a child process with a capped address space, so a memory regression fails cleanly (a
MemoryError or a non-zero exit) instead of swapping the shared machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GIB = 2**30

# The peak is the child's own VmHWM: ru_maxrss survives exec, so a child forked from a pytest process that has
# grown to 600 MB would report the parent's high-water mark instead of its own.
_PRELUDE = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
def _peak_mb():
    with open('/proc/self/status') as status:
        for line in status:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""


def run_capped(code: str, *, cap: int = GIB, timeout: float = 120.0) -> dict:
    """Run ``code`` (which sets ``result``, a JSON-able dict) under an address-space cap of ``cap`` bytes.

    Returns ``result`` with ``seconds`` (wall time of the snippet) and ``peak_mb`` (peak RSS of the child) added.
    A child that fails (MemoryError included) raises AssertionError with its stderr."""
    script = _PRELUDE.format(cap=int(cap)) + "_start = time.perf_counter()\n" + textwrap.dedent(code) + (
        "\nresult['seconds'] = time.perf_counter() - _start"
        "\nresult['peak_mb'] = _peak_mb()"
        "\nprint('RESULT ' + json.dumps(result))\n")
    # pyarrow's default allocator (mimalloc) reserves about a GB of address space it never touches: the system
    # allocator keeps the cap meaningful
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "2"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, f"child failed ({done.returncode}): {done.stderr[-2000:]}"
    return json.loads(lines[-1][len("RESULT "):])
