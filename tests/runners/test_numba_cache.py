"""One log line when the numba QP solvers are about to be compiled (cold cache)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CODE = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
from runners import numba_cache
print("cold", len(numba_cache.cold_solvers()))
print("first", numba_cache.announce_compilation())
print("again", numba_cache.announce_compilation())
for disp in numba_cache._solver_dispatchers():  # as numba's cache would leave it
    index = disp._cache._cache_file._index_path
    __import__("os").makedirs(__import__("os").path.dirname(index), exist_ok=True)
    open(index, "wb").close()
print("after", len(numba_cache.cold_solvers()))
"""


def test_cold_cache_is_announced_once_and_warm_cache_is_silent(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    out = subprocess.run(
        [sys.executable, "-c", CODE],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    n_cold = int(lines[0].split()[1])
    assert n_cold > 10  # every njit solver function of methods._qp
    assert lines[1].startswith("compiling the QP solvers (first run only, ~")
    assert lines[2:] == ["first True", "again False", "after 0"]
