"""benchmarks/bench_qp.py's timing rules: interleaving, medians, the re-time rule."""

from __future__ import annotations

import itertools
import statistics

import numpy as np
import pytest
from sklearn.svm import SVC

from benchmarks import bench_qp
from methods import SVM
from methods._kernels import pairwise_kernel


def _fake_timer(monkeypatch, durations: dict[str, list[float]]) -> list[str]:
    """Replace ``bench_qp.timed``: functions return their name, times are scripted."""
    log: list[str] = []
    left = {k: list(v) for k, v in durations.items()}

    def timed(fn):
        name = fn()
        log.append(name)
        return left[name].pop(0), name

    monkeypatch.setattr(bench_qp, "timed", timed)
    return log


@pytest.mark.parametrize("repeats", range(1, 10))
def test_spread_rounds_are_distinct_and_in_range(repeats):
    for count in range(1, repeats + 3):
        rounds = bench_qp.spread_rounds(repeats, count)
        assert len(rounds) == min(count, repeats)
        assert len(set(rounds)) == len(rounds)
        assert all(0 <= r < repeats for r in rounds)
    assert bench_qp.spread_rounds(repeats, repeats) == list(range(repeats))
    assert bench_qp.spread_rounds(repeats, 1) == [repeats // 2]


def test_spread_rounds_examples():
    assert bench_qp.spread_rounds(7, 3) == [1, 3, 5]
    assert bench_qp.spread_rounds(7, 1) == [3]


def test_measure_interleaves_and_returns_medians(monkeypatch):
    durations = {
        "ours": [5.0, 1.0, 2.0, 9.0, 3.0],
        "svc": [4.0, 4.0, 1.0, 2.0, 8.0],
        "cvx": [7.0, 6.0],
    }
    log = _fake_timer(monkeypatch, durations)
    fns = {name: (lambda name=name: name) for name in durations}
    m = bench_qp.measure(fns, 5, {"cvx": 2})
    # round-robin; the cheap-to-repeat pair in every round, cvxopt in rounds 1 and 3
    assert log == [
        "ours", "svc",
        "ours", "svc", "cvx",
        "ours", "svc",
        "ours", "svc", "cvx",
        "ours", "svc",
    ]  # fmt: skip
    for name, v in durations.items():
        median, spread, result = m[name]
        assert median == statistics.median(v)
        assert spread == max(v) / min(v)
        assert result == name


def test_measure_without_counts_is_plain_round_robin(monkeypatch):
    durations = {"a": [1.0, 2.0, 3.0], "b": [3.0, 2.0, 1.0]}
    log = _fake_timer(monkeypatch, durations)
    m = bench_qp.measure({k: (lambda k=k: k) for k in durations}, 3)
    assert log == ["a", "b"] * 3
    assert m["a"][0] == m["b"][0] == 2.0


def test_retime_rule_is_symmetric():
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(2, 8))
        a = list(np.exp(rng.normal(scale=0.4, size=n)))
        b = list(np.exp(rng.normal(scale=0.4, size=n)) * rng.uniform(0.2, 5.0))
        c = list(np.exp(rng.normal(scale=0.4, size=n)))
        base = bench_qp.needs_retime({"ours": a, "svc": b, "svc_tol": c})
        assert base == bench_qp.needs_retime({"ours": b, "svc": a, "svc_tol": c})
        for order in itertools.permutations([("ours", a), ("svc", b), ("svc_tol", c)]):
            assert base == bench_qp.needs_retime(dict(order))


def test_retime_rule_ignores_which_side_wins():
    steady = [1.0, 1.1, 1.05, 1.0, 1.1]
    # ours slower than SVC but steady: the old rule re-timed it, this one does not
    assert not bench_qp.needs_retime({"ours": [3 * t for t in steady], "svc": steady})
    assert not bench_qp.needs_retime({"ours": steady, "svc": [3 * t for t in steady]})
    # one unlucky draw of either side gets a second chance
    unlucky = [1.0, 1.1, 3.5, 1.0, 1.1]
    assert bench_qp.needs_retime({"ours": steady, "svc": unlucky})
    assert bench_qp.needs_retime({"ours": unlucky, "svc": steady})
    # each side within 2x, but the per-round ratio moves 2.25x: a load swing
    assert bench_qp.needs_retime({"ours": [1.0, 1.5, 1.0], "svc": [1.5, 1.0, 1.5]})


@pytest.fixture(scope="module")
def small_kernel():
    X, y = bench_qp.wdbc(60)
    return pairwise_kernel(X, kernel="gaussian", sigma=1.0, normalize="cosine"), y


@pytest.mark.parametrize("retime", [False, True])
def test_csvm_cell_times_estimator_against_estimator(monkeypatch, small_kernel, retime):
    K, y = small_kernel
    seen = {}

    def summarize(times, results):
        seen.update({k: len(v) for k, v in times.items()})
        return real(times, results)

    real = bench_qp.summarize
    monkeypatch.setattr(bench_qp, "summarize", summarize)
    monkeypatch.setattr(bench_qp, "needs_retime", lambda times: retime)
    m, path, gap = bench_qp.run_cell(K, y, 10.0, "csvm", 3, 2)
    assert isinstance(m["ours"][2], SVM)
    assert isinstance(m["svc"][2], SVC) and isinstance(m["svc_tol"][2], SVC)
    cvx = m["cvxopt"][2]
    assert isinstance(cvx, SVM) and cvx.solver == "cvxopt"
    assert path in ("smo", "ipm")
    assert gap < 1e-6
    # every repeat of both sides is pooled; cvxopt ran in 2 of the first 3 rounds
    both = 3 + (9 if retime else 0)
    assert seen == {"ours": both, "svc": both, "svc_tol": both, "cvxopt": 2}


def test_svmm_cell_interleaves_cvxopt(monkeypatch, small_kernel):
    K, y = small_kernel
    log = []
    real = bench_qp.timed

    def timed(fn):
        t, out = real(fn)
        log.append(out.solver)
        return t, out

    monkeypatch.setattr(bench_qp, "timed", timed)
    m, path, gap = bench_qp.run_cell(K, y, 1.0, "eps3", 3, 1)
    assert path == m["ours"][2].solver
    assert gap < 1e-6
    assert log[-1] != "cvxopt" and "cvxopt" in log  # inside the loop, not after it
    assert log.count("cvxopt") == 1 and len(log) == 4
