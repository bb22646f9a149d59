"""One log line when the numba QP solvers are being compiled, and only then."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Each stage runs in a fresh process on one numba cache folder, as successive
# kml-run commands do. `smo`: what an SVM run that never leaves SMO compiles;
# `ipm`: an SVM_m run that goes to the interior point (low-rank, then dense K).
CODE = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
import numpy as np
from runners import numba_cache
from methods._qp import csvm_dual, solve_ipm, solve_smo
numba_cache.announce_compilation()
rng = np.random.default_rng(0)
X = rng.standard_normal((24, 2))
y = np.repeat([-1.0, 1.0], 12)
for stage in sys.argv[1:]:
    if stage == "smo":
        solve_smo(csvm_dual(X @ X.T, y, 1.0))
    else:
        solve_ipm(csvm_dual(X @ X.T, y, 1.0))  # rank 2: pivoted Cholesky
        solve_ipm(csvm_dual(np.exp(-((X[:, None] - X) ** 2).sum(-1)), y, 1.0))
    print("done", stage)
"""


def _run(cache: Path, *stages: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", CODE, *stages],
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


NOTICE = "compiling the QP solvers (first use only, up to ~120 s)"


@pytest.mark.slow
def test_notice_only_in_the_runs_that_compile_a_solver(tmp_path):
    cache = tmp_path / "numba"
    # fresh cache: the first SMO run compiles, and says so once
    assert _run(cache, "smo") == [NOTICE, "done smo"]
    # SMO cached, the interior-point solver not: an SMO-only run compiles nothing
    # and is silent (it used to be announced by every run after the first)
    assert _run(cache, "smo") == ["done smo"]
    # the first run that reaches the interior point compiles it, and says so once
    assert _run(cache, "smo", "ipm") == ["done smo", NOTICE, "done ipm"]
    # everything cached: silent
    assert _run(cache, "smo", "ipm") == ["done smo", "done ipm"]


def test_other_numba_compilations_are_not_announced(caplog, monkeypatch):
    """KOMD's and the metric learners' numba code, a user's: not the QP solvers."""
    from numba import njit

    from runners import numba_cache

    monkeypatch.setattr(numba_cache, "_announced", False)
    numba_cache.announce_compilation()
    assert numba_cache.announce_compilation() is False  # one listener per process

    @njit
    def twice(x):
        return 2 * x

    with caplog.at_level(logging.INFO, logger="kml"):
        assert twice(3) == 6
    assert not caplog.records
    assert numba_cache._announced is False
    # the modules named exist: a renamed solver module would silence the notice
    for module in numba_cache.QP_MODULES:
        __import__(module)
