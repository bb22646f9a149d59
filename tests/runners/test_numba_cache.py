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


def test_only_methods_that_may_call_the_qp_solvers_announce_their_compilation():
    from omegaconf import OmegaConf

    from runners import numba_cache

    root = Path(__file__).resolve().parents[2]

    def uses(name):
        cfg = OmegaConf.load(root / "conf" / "method" / f"{name}.yaml")
        return numba_cache.uses_qp_solvers(cfg)

    for name in ("kdml_method1", "knn", "lmnn_mkl_p", "komd", "arbf_t20", "fda"):
        assert not uses(name), name
    for name in ("svm", "svmm", "band_check", "wrbf", "simplemkl", "svm_fda"):
        assert uses(name), name
    # nested targets count, and an unknown one is taken for a user
    mixed = {"_target_": "methods.metric_learning.MetricKNN",
             "metric_learner": {"_target_": "methods.SVM"}}
    assert numba_cache.uses_qp_solvers(mixed)
    assert numba_cache.uses_qp_solvers({"_target_": "no.such.Class"})
    # a QP-free run says nothing, even on a cold cache, and leaves the line to
    # the process's first QP run
    numba_cache._announced = False
    assert numba_cache.announce_compilation({"_target_": "methods.komd.KOMD"}) is False
    assert numba_cache._announced is False
    # the families called QP-free import no family that uses the solvers
    qp_users = ("methods._qp", "methods.svm", "methods.mkl", "methods.feature_weighted")
    for pkg in numba_cache.QP_FREE_PACKAGES:
        for path in (root / pkg.replace(".", "/")).glob("*.py"):
            text = path.read_text()
            assert not any(u in text for u in qp_users), path
            assert "from methods import" not in text, path
