"""ITML's Bregman projections: compiled passes against the numpy loop.

ITML (Davis et al. 2007, Algorithm 1; the kdml baseline) spends its time in cyclic
rank-one Bregman projections, O(d^2) each, on the ``d`` kernel coordinates of the
training points (d = rank of the Gram matrix, up to n). The numpy loop
(:func:`methods.metric_learning._itml.itml_solve_python`, one ``itml_projection``
call per constraint) was ~45% of the kdml sweep time; :func:`itml_solve` runs the
same projections compiled (numba, ``methods/metric_learning/_itml_kernels.py``).

Two sections, one BLAS thread, repeats interleaved (best of ``--repeat``):

- solver: ``20 c^2 = 180`` random constraints (c = 3), a fixed number of passes
  (``tol = 0``, so both do the same work) at growing ``d``;
- fit: ``ITML(kernel="gaussian")`` as configured for kdml (sigma = 4, max_iter =
  300) on a 3-class synthetic set of ``n`` points, with the compiled solver and with
  the numpy loop patched in (everything else, the eigendecomposition included,
  is shared).

Each line prints compiled / python (the time ratio; < 1 is faster) and the
largest relative difference of the learned matrices.

Run: ``nice -n 5 python benchmarks/bench_itml.py [--dims 50 100 200 400]
[--fit-sizes 100 300] [--passes 10] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from methods.metric_learning import _itml
from methods.metric_learning._itml import ITML, itml_solve, itml_solve_python

try:
    from benchmarks._cli import positive_int, sample_size
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from _cli import positive_int, sample_size


def constraints(d: int, n_con: int = 180, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = max(2 * d, 60)
    Z = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.arange(n) % 3
    Z[:, 0] += y
    i = rng.integers(0, n, n_con)
    j = (i + 1 + rng.integers(0, n - 1, n_con)) % n
    delta = np.where(y[i] == y[j], 1, -1)
    D = np.sum((Z[i] - Z[j]) ** 2, axis=1)
    bounds = np.where(delta == 1, np.percentile(D, 5), np.percentile(D, 95))
    return Z, np.column_stack([i, j]), delta, bounds


def fit_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, 8))
    X[:, 0] += 1.5 * y
    return X, y


def _time(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def _fit_metric(est, X, y):
    return est.fit(X, y).metric_.copy()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", type=positive_int, nargs="+", default=[50, 100, 200, 400])
    ap.add_argument("--fit-sizes", type=sample_size, nargs="+", default=[100, 300])
    ap.add_argument("--passes", type=positive_int, default=10)
    ap.add_argument("--repeat", type=positive_int, default=3)
    args = ap.parse_args()
    threadpool_limits(1)
    z = np.zeros((4, 2))
    itml_solve(z, np.array([[0, 1]]), np.array([1]), np.array([1.0]))  # compile
    best: dict[tuple, list[float]] = {}
    diff: dict[tuple, float] = {}
    for _ in range(args.repeat):  # interleaved: every case once per round
        for d in args.dims:
            prob = constraints(d)
            kw = dict(gamma=1.0, max_iter=args.passes, tol=0.0)
            tc, (Mc, _, _) = _time(itml_solve, *prob, **kw)
            tp, (Mp, _, _) = _time(itml_solve_python, *prob, **kw)
            b = best.setdefault(("solver", d), [np.inf, np.inf])
            b[0], b[1] = min(b[0], tc), min(b[1], tp)
            diff[("solver", d)] = float(np.abs(Mc - Mp).max() / np.abs(Mp).max())
        for n in args.fit_sizes:
            X, y = fit_data(n)
            est = ITML(kernel="gaussian", sigma=4.0, max_iter=300, random_state=0)
            tc, fc = _time(_fit_metric, est, X, y)
            with mock.patch.object(_itml, "itml_solve", itml_solve_python):
                tp, fp = _time(_fit_metric, est, X, y)
            b = best.setdefault(("fit", n), [np.inf, np.inf])
            b[0], b[1] = min(b[0], tc), min(b[1], tp)
            diff[("fit", n)] = float(np.abs(fc - fp).max() / np.abs(fp).max())
    print(f"ITML Bregman projections, one BLAS thread, best of {args.repeat}")
    print(f"{'case':>22} {'compiled (s)':>13} {'python (s)':>11} "
          f"{'compiled/python':>16} {'max rel diff':>13}")
    for (kind, size), (tc, tp) in best.items():
        label = (
            f"solver d={size}, {args.passes} passes"
            if kind == "solver"
            else f"fit n={size}"
        )
        print(f"{label:>22} {tc:13.4f} {tp:11.4f} {tc / tp:16.3f} "
              f"{diff[(kind, size)]:13.1e}")


if __name__ == "__main__":
    main()
