"""Time one SimpleMKL fit at n = 500 with the fast inner solver and with cvxopt.

mlsvm Table II runs SimpleMKL, MKL_m and ε-MKL on 20 kernels (``bank20``) for
datasets of up to 569 rows. This script fits SimpleMKL on wdbc (scikit-learn's
``load_breast_cancer``, 569 x 30) subsampled to 500 rows and standardized, on the
20-kernel bank with unit-trace normalization (the estimator's default), for
C in {1, 100}. The bank is computed once and passed as a precomputed stack, so the
timings are the MKL descent alone.

The reference timed in the same run is the same fit with ``solver="cvxopt"`` (the
dense interior-point reference of ``methods._qp``); each fast fit is printed as a
ratio to it, with the number of inner solves of both and the relative difference of
the final objectives ``J`` (they stop on the same duality gap, ``tol``, so they may
stop at slightly different weights). The two fits alternate, one cvxopt fit then
one fast fit per repeat, and the times are the medians over ``--repeat`` repeats
(with the default of 1, one fit of each, back to back).

Run: ``python benchmarks/bench_mkl.py [--fast auto] [--repeat 1] [--tol 1e-2]``.
One BLAS thread (threadpoolctl), as the workers of the harness run.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

# run as a script from anywhere: the packages live at the repository root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    from benchmarks._cli import positive_float, positive_int
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from _cli import positive_float, positive_int

N_ROWS = 500
CS = (1.0, 100.0)
#: SimpleMKL's solver options (a test keeps them equal to its constraints)
FAST_SOLVERS = ("auto", "smo", "ipm", "cvxopt")


def wdbc_500(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """wdbc subsampled to 500 rows (fixed seed), standardized."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(seed).choice(X.shape[0], N_ROWS, replace=False)
    return StandardScaler().fit_transform(X[rows]), y[rows]


def timed_fit(stack: np.ndarray, y: np.ndarray, C: float, solver: str, args):
    """Wall time of one fit, and the fitted estimator."""
    from methods import SimpleMKL

    clf = SimpleMKL(
        C=C, kernel="precomputed", normalize="unit_trace", solver=solver,
        tol=args.tol, check_psd=False,  # named kernels: PSD by construction
    )  # fmt: skip
    t0 = time.perf_counter()
    clf.fit(stack, y)
    return time.perf_counter() - t0, clf


def alternated(fits: dict, repeat: int) -> dict[str, tuple[float, object]]:
    """(median time, last estimator) of each fit, one call of each per repeat.

    ``fits`` maps a name to a function returning ``(seconds, estimator)``; the calls
    alternate in the order of ``fits``, so both solvers see the same machine load.
    """
    times: dict[str, list[float]] = {k: [] for k in fits}
    last: dict[str, object] = {}
    for _ in range(repeat):
        for name, fit in fits.items():
            t, last[name] = fit()
            times[name].append(t)
    return {k: (float(np.median(v)), last[k]) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fast",
        default="auto",
        choices=FAST_SOLVERS,
        help="fast inner solver",
    )
    parser.add_argument(
        "--repeat", type=positive_int, default=1, help="median of N alternated fits"
    )
    parser.add_argument(
        "--tol", type=positive_float, default=1e-2, help="duality-gap tol"
    )
    args = parser.parse_args()

    from methods._kernels import bank20, kernel_stack

    fast = args.fast
    if fast == "cvxopt":
        print("note: --fast cvxopt: the ratio below compares cvxopt with itself.")
    with threadpool_limits(limits=1):
        X, y = wdbc_500()
        t0 = time.perf_counter()
        stack = kernel_stack(X, None, bank20(normalize=None))
        t_bank = time.perf_counter() - t0
        # Compile / warm both paths (numba, cvxopt's import) once so the timings
        # are the steady state.
        for solver in ("cvxopt", fast):
            timed_fit(stack[:50, :50], y[:50], 1.0, solver, args)
        print(
            f"SimpleMKL on wdbc[{N_ROWS}] x bank20 (unit trace), tol={args.tol}; "
            f"bank computed once in {t_bank:.2f} s; one BLAS thread"
        )
        head = (
            f"{'C':>6} {'solver':>7} {'fit s':>8} {'ratio':>7} {'iters':>5} "
            f"{'solves':>6} {'J':>14} {'rel gap':>9} {'|dJ|/J':>9} {'max|dmu|':>9}"
        )
        print(head)
        print("-" * len(head))
        for C in CS:
            out = alternated(
                {
                    "cvxopt": partial(timed_fit, stack, y, C, "cvxopt", args),
                    "fast": partial(timed_fit, stack, y, C, fast, args),
                },
                max(1, args.repeat),
            )
            (t_ref, ref), (t_fast, clf) = out["cvxopt"], out["fast"]
            dJ = abs(clf.objective_[0] - ref.objective_[0]) / abs(ref.objective_[0])
            dmu = np.max(np.abs(clf.kernel_weights_ - ref.kernel_weights_))
            for name, t, est in (("cvxopt", t_ref, ref), (fast, t_fast, clf)):
                ratio = t / t_ref
                print(
                    f"{C:>6g} {name:>7} {t:>8.3f} {ratio:>7.3f} {est.n_iter_[0]:>5d} "
                    f"{est.n_inner_solves_[0]:>6d} {est.objective_[0]:>14.6f} "
                    f"{est.duality_gap_[0]:>9.2e} "
                    + (f"{dJ:>9.2e} {dmu:>9.2e}" if est is clf else "")
                )
            print(
                f"{'':>6} speed-up of {fast} over cvxopt at C={C:g}: "
                f"{t_ref / t_fast:.1f}x"
            )


if __name__ == "__main__":
    main()
