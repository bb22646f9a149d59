"""Timing helpers of benchmarks/bench_{wrbf,mkl,komd,lmnn}.py.

Interleaved repeats and medians (wrbf, mkl), one BLAS thread for every BLAS loaded
(wrbf, komd), ARBF's gamma step timed on the updated kernel (komd), an untimed fit
per configuration before any timed one (lmnn).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ bench_wrbf
def test_wrbf_round_robin_interleaves():
    from benchmarks import bench_wrbf

    log = []
    out = bench_wrbf.round_robin(
        {"a": lambda: log.append("a") or len(log), "b": lambda: log.append("b")}, 3
    )
    assert log == ["a", "b"] * 3
    assert out["a"] == [1, 3, 5] and len(out["b"]) == 3


def test_wrbf_median_run():
    from benchmarks import bench_wrbf

    runs = [
        {"wrbf_fit": 3.0, "total": 4.0, "acc": (0.7, 0.6), "dual": (1.0, 2.0)},
        {"wrbf_fit": 1.0, "total": 9.0, "acc": (0.7, 0.6), "dual": (1.0, 2.0)},
        {"wrbf_fit": 2.0, "total": 5.0, "acc": (0.7, 0.6), "dual": (1.0, 2.0)},
    ]
    m = bench_wrbf.median_run(runs)
    assert m["wrbf_fit"] == 2.0 and m["total"] == 5.0
    assert m["acc"] == (0.7, 0.6) and m["dual"] == (1.0, 2.0)


def test_wrbf_reference_interleaved_with_pima(monkeypatch):
    from benchmarks import bench_wrbf

    log = []
    svc_times = iter([0.3, 0.1, 0.2])
    fits = iter([5.0, 7.0, 6.0])

    def svc(X, y):
        log.append("svc")
        return next(svc_times)

    def experiment(data, solver):
        log.append("wrbf")
        t = next(fits)
        return {"wrbf_fit": t, "total": t + 1.0, "acc": (1.0, 1.0), "dual": (0, 0)}

    monkeypatch.setattr(bench_wrbf, "_svc_fit_time", svc)
    monkeypatch.setattr(bench_wrbf, "experiment", experiment)
    t_ref, pima = bench_wrbf.reference_and_pima((None, None), "auto", 3)
    assert log == ["svc", "wrbf"] * 3
    assert t_ref == 0.2  # median, not mean or best
    assert pima["wrbf_fit"] == 6.0 and pima["total"] == 7.0


# ------------------------------------------------------------------- bench_mkl
def test_mkl_alternated_medians():
    from benchmarks import bench_mkl

    log = []
    times = {"cvxopt": iter([9.0, 3.0, 4.0]), "fast": iter([1.0, 0.2, 0.3])}

    def fit(name):
        def run():
            log.append(name)
            return next(times[name]), f"{name}-{len(log)}"

        return run

    out = bench_mkl.alternated({"cvxopt": fit("cvxopt"), "fast": fit("fast")}, 3)
    assert log == ["cvxopt", "fast"] * 3
    assert out["cvxopt"] == (4.0, "cvxopt-5")
    assert out["fast"] == (0.3, "fast-6")


# ------------------------------------------------------- one BLAS thread, all
_THREADS = """
import sys
sys.path.insert(0, "benchmarks")
import {module} as bench
from threadpoolctl import threadpool_info
with bench.one_blas_thread():
    import cvxopt, scipy.linalg, sklearn.svm, methods, methods.komd  # what is timed
    info = threadpool_info()
print([(i["filepath"].rsplit("/", 1)[-1], i["num_threads"]) for i in info])
assert len(info) >= 2 and all(i["num_threads"] == 1 for i in info), info
"""


@pytest.mark.parametrize("module", ["bench_komd", "bench_wrbf"])
def test_one_blas_thread_covers_every_library(module):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(var, None)  # the limit itself must do it
    proc = subprocess.run(
        [sys.executable, "-c", _THREADS.format(module=module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------------------------ bench_komd
def test_komd_gamma_step_solves_on_the_updated_kernel(monkeypatch, capsys):
    from benchmarks import bench_komd

    monkeypatch.setattr(bench_komd, "_splice", lambda: None)  # synthetic, n = 800
    bench_komd.part2(1)
    out = capsys.readouterr().out
    n_iter = int(re.search(r"gamma step: (\d+) SMO iterations", out).group(1))
    # warm-started from the optimum of the same kernel it would take 0 iterations
    assert n_iter > 0


# ------------------------------------------------------------------ bench_lmnn
class _FakeLMNN:
    """Records (max_iter, configuration) per fit; no solving."""

    calls: list = []

    def __init__(self, **params):
        self.params = params

    def fit(self, X, y):
        from methods.metric_learning import _lmnn_solver

        config = (id(X), _lmnn_solver.GEMM_MIN_FEATURES, _lmnn_solver.lbfgs)
        _FakeLMNN.calls.append((self.params.get("max_iter"), config))
        self.components_ = np.eye(2)
        self.n_iter_ = self.params.get("max_iter") or 1
        self.objective_ = 1.0
        return self


@pytest.fixture
def fake_lmnn(monkeypatch):
    from benchmarks import bench_lmnn  # sets OMP_NUM_THREADS etc.: after the fixture

    _FakeLMNN.calls = []
    monkeypatch.setattr(bench_lmnn, "LMNN", _FakeLMNN)
    rng = np.random.default_rng(0)
    maps = [(rng.normal(size=(30, 30)), np.arange(30) % 3) for _ in range(2)]
    it = iter(maps)
    monkeypatch.setattr(bench_lmnn, "_mfeat_kernel_map", lambda: next(it))
    return bench_lmnn


def _warmed_first(calls, warm_iter):
    """Every configuration's first fit is an untimed warm-up, before any timed fit."""
    configs = {c for _, c in calls}
    warm = [c for m, c in calls[: len(configs)]]
    assert all(m == warm_iter for m, _ in calls[: len(configs)]), calls
    assert set(warm) == configs
    assert all(m != warm_iter for m, _ in calls[len(configs) :])


def test_lmnn_lbfgs_mode_warms_each_configuration(fake_lmnn):
    fake_lmnn._lbfgs_timings(2, 7)
    _warmed_first(_FakeLMNN.calls, fake_lmnn.WARMUP_ITER)
    assert len({c for _, c in _FakeLMNN.calls}) == 2


def test_lmnn_gemm_mode_warms_each_configuration(fake_lmnn):
    fake_lmnn._gemm_path_timings(2, max_iter=7)
    _warmed_first(_FakeLMNN.calls, fake_lmnn.WARMUP_ITER)
    assert len({c for _, c in _FakeLMNN.calls}) == 4  # 2 kernel maps x 2 paths


def test_lmnn_floor_mode_warms_first(fake_lmnn):
    fake_lmnn._floor_timings(1)
    calls = _FakeLMNN.calls
    assert calls[0][0] == fake_lmnn.WARMUP_ITER
    assert [m for m, _ in calls[1:]] == [20, 100]
