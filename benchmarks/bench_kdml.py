"""Structured C-step solves of kdml Methods 1-2 against the naive dense solve.

The paper states O((mn)^3) per block coordinate step (kdml Secs. 3-4): Method 1's
eq. 12 pseudo-inverts the (mn x mn) Hessian of eq. 11; Method 2's eq. 20 inverts an
(mn x mn) Kronecker system. The structured solves (methods/metric_learning/_kdml.py)

- Method 1: SPD system ``I + G^T Kbar G`` by block-Jacobi-preconditioned CG on
  per-kernel blocks ``W_t = R K_t R^T`` computed once per fit;
- Method 2: one eigendecomposition of ``K`` and of ``K^1/2 P K^1/2`` per fit, then
  ``m`` diagonal solves per step (O(m n^2)).

For growing ``n`` (m fixed) the script times, with one BLAS thread and repeats
interleaved (best of ``--repeat``): the naive dense solve, the structured per-step
solve, and the structured per-fit setup; it prints the ratio naive / structured
and the exponent of ``n`` fitted on the log-log timings.

Run: ``python benchmarks/bench_kdml.py [--sizes 50 100 200 400] [--m 3] [--repeat 3]``.

``--grid`` times instead what a kdml Fig. 1-2 cell spends per training part: the
grid search of ``conf/experiment/kdml_fig*.yaml`` (sigma in {2, 4, 8} x rho in
{0.1, 1} for Method 1, x {0.1, 1, 10} for Method 2, kappa = 3, stratified 3-fold CV,
refit) on a synthetic 3-class set of n points, with the per-fit setups shared
across the rho grid ("shared", the default path) and without ("old": every fit
builds its own setup, as before). CPU seconds (one BLAS thread), repeats
interleaved, best of ``--repeat``; it checks that both paths give the same CV
scores, best parameters and predictions. A third row times Method 1 with the
named option ``c_solver="cg_coupled"`` (shared setups too) and says whether its
selected parameters and predictions equal the default's (they may differ only
through fits that run off, see ``KDMLFixedKernel``).
Run: ``python benchmarks/bench_kdml.py --grid --sizes 150 300 600 --repeat 2``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from threadpoolctl import threadpool_limits

try:
    from benchmarks._cli import int_at_least, positive_int, sample_size
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from _cli import int_at_least, positive_int, sample_size

from methods.metric_learning import MetricKNN
from methods.metric_learning._kdml import (
    KDMLFixedKernel,
    KDMLParamKernel,
    _gaussian,
    _Method1System,
    _Method2System,
    clear_setup_cache,
    method1_c_step_naive,
    method2_c_step_dense,
    prototype_targets,
    set_setup_cache_size,
    spreads,
)

# the grids of conf/experiment/kdml_fig1.yaml and kdml_fig2.yaml
GRIDS = {
    "method1": (
        KDMLFixedKernel(max_iter=30, tol=1e-5, max_metric_norm=1e8),
        {"metric_learner__sigma": [2.0, 4.0, 8.0], "metric_learner__rho": [0.1, 1.0]},
    ),
    "method2": (
        KDMLParamKernel(max_iter=30, tol=1e-5, b_max_iter=50),
        {
            "metric_learner__sigma": [2.0, 4.0, 8.0],
            "metric_learner__rho": [0.1, 1.0, 10.0],
        },
    ),
}

GAMMA, LAM = 1.0, 1.0


def problem(n: int, m: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    c = m
    X = rng.normal(size=(n, 8))
    codes = np.arange(n) % c
    X[:, 0] += codes
    Y = prototype_targets(c, m)[codes].T
    Q, _ = np.linalg.qr(rng.normal(size=(m, m)))
    A = (Q * rng.uniform(0.5, 2.0, size=m)) @ Q.T
    Ks = np.stack([_gaussian(X, X, s) for s in spreads(3.0, m, 4.0)])
    return Ks, codes, Y, A


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def time_size(n: int, m: int) -> dict[str, float]:
    Ks, codes, Y, A = problem(n, m)
    K = Ks[m // 2]
    out = {}
    out["m1_naive"] = _time(lambda: method1_c_step_naive(Ks, A, Y, codes, GAMMA, LAM))
    s1: list = []
    out["m1_setup"] = _time(lambda: s1.append(_Method1System(Ks, codes, GAMMA, LAM)))
    out["m1_step"] = _time(lambda: s1[0].solve(A, Y, method="cg"))
    out["m2_naive"] = _time(lambda: method2_c_step_dense(K, A, Y, codes, GAMMA, LAM))
    s2: list = []
    out["m2_setup"] = _time(lambda: s2.append(_Method2System(K, codes, GAMMA, LAM)))
    out["m2_step"] = _time(lambda: s2[0].solve(A, Y))
    return out


def slope(ns, ts) -> float:
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def grid_problem(n: int, seed: int = 0):
    """A standardized synthetic 3-class set (kdml's protocol standardizes features)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, 10))
    X[:, :3] += 1.0 * np.eye(3)[y]
    return (X - X.mean(0)) / X.std(0), y


def run_grid(method: str, X, y, shared: bool, c_solver: str | None = None):
    """One cell's grid search and refit; returns (CPU seconds, search)."""
    learner, grid = GRIDS[method]
    if c_solver is not None:
        learner = learner.set_params(c_solver=c_solver)
    clear_setup_cache()
    old = set_setup_cache_size((3 << 30) if shared else 0)
    search = GridSearchCV(
        MetricKNN(learner, n_neighbors=3),
        grid,
        cv=StratifiedKFold(3, shuffle=True, random_state=0),
        error_score="raise",
    )
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)
    cpu = time.process_time() - t
    set_setup_cache_size(old)
    clear_setup_cache()
    return cpu, search


def main_grid(args) -> None:
    best: dict[tuple, float] = {}
    same_pred: dict[int, bool] = {}
    same_best: dict[int, bool] = {}
    for _ in range(args.repeat):  # interleaved: every case once per round
        for n in args.sizes:
            X, y = grid_problem(n)
            for method in GRIDS:
                res = {}
                for shared in (False, True):
                    cpu, search = run_grid(method, X, y, shared)
                    key = (n, method, shared)
                    best[key] = min(best.get(key, np.inf), cpu)
                    res[shared] = search
                if method == "method1":  # the named option, on top of sharing
                    cpu, search = run_grid(method, X, y, True, "cg_coupled")
                    key = (n, "method1 cg_coupled", True)
                    best[key] = min(best.get(key, np.inf), cpu)
                    pred = res[True].predict(X)
                    same_pred[n] = np.array_equal(search.predict(X), pred)
                    same_best[n] = search.best_params_ == res[True].best_params_
                    GRIDS[method][0].set_params(c_solver="cg")
                a, b = res[False], res[True]
                same = (
                    np.array_equal(
                        a.cv_results_["mean_test_score"],
                        b.cv_results_["mean_test_score"],
                    )
                    and a.best_params_ == b.best_params_
                    and np.array_equal(a.predict(X), b.predict(X))
                )
                if not same:
                    raise AssertionError(f"{method} n={n}: shared setups changed it")
    print(
        "kdml Fig. 1-2 grid search per training part (3-fold CV + refit), CPU s, "
        f"one BLAS thread, best of {args.repeat}; identical CV scores and predictions"
    )
    print(f"{'n':>5} {'method':>8} {'old (s)':>9} {'new (s)':>10} {'ratio':>7}")
    for n in args.sizes:
        for method in GRIDS:
            o, s = best[(n, method, False)], best[(n, method, True)]
            print(f"{n:5d} {method:>8} {o:9.3f} {s:10.3f} {s / o:7.3f}")
        c = best[(n, "method1 cg_coupled", True)]
        o = best[(n, "method1", False)]
        print(
            f"{n:5d} {'method1 cg_coupled':>8} {o:9.3f} {c:10.3f} {c / o:7.3f}"
            f"  same best params {same_best[n]}, same predictions {same_pred[n]}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=sample_size, nargs="+", default=[50, 100, 200, 400])
    ap.add_argument(
        "--m",
        type=int_at_least(2),
        default=None,
        help="classes of the C-step problems (default 3; not read by --grid, whose "
        "sets have 3)",
    )
    ap.add_argument("--repeat", type=positive_int, default=3)
    ap.add_argument("--grid", action="store_true", help="time the CV grid search")
    args = ap.parse_args()
    if args.grid and args.m is not None:
        ap.error("--m is not read by --grid (its synthetic sets have 3 classes)")
    args.m = args.m or 3
    threadpool_limits(1)
    if args.grid:
        main_grid(args)
        return
    best: dict[int, dict[str, float]] = {}
    for _ in range(args.repeat):  # interleaved: every size once per round
        for n in args.sizes:
            t = time_size(n, args.m)
            b = best.setdefault(n, t)
            for k, v in t.items():
                b[k] = min(b[k], v)
    ns = np.array(args.sizes, dtype=float)
    print(f"kdml C-step solves, m = {args.m}, one BLAS thread, best of {args.repeat}")
    print(
        f"{'n':>5} {'m1 naive':>9} {'m1 step':>9} {'m1 setup':>9} {'ratio':>7} "
        f"{'m2 naive':>9} {'m2 step':>9} {'m2 setup':>9} {'ratio':>7}"
    )
    for n in args.sizes:
        b = best[n]
        print(
            f"{n:5d} {b['m1_naive']:9.4f} {b['m1_step']:9.4f} {b['m1_setup']:9.4f} "
            f"{b['m1_naive'] / b['m1_step']:7.1f} {b['m2_naive']:9.4f} "
            f"{b['m2_step']:9.5f} {b['m2_setup']:9.4f} "
            f"{b['m2_naive'] / b['m2_step']:7.1f}"
        )
    if len(set(args.sizes)) < 2:  # a line through one point: a made-up slope
        print("fitted exponent of n: needs two sizes or more (--sizes)")
        return
    print("fitted exponent of n (log-log slope):")
    for key in ("m1_naive", "m1_step", "m1_setup", "m2_naive", "m2_step", "m2_setup"):
        print(f"  {key:9s} {slope(ns, [best[n][key] for n in args.sizes]):5.2f}")


if __name__ == "__main__":
    main()
