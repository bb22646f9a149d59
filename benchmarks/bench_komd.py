"""KOMD's compiled SMO against the dense cvxopt QP; ARBF's cost per iteration.

Part 1 (target: >= 20x faster than cvxopt at n = 500 with the same objective):
arbf eq. 2 solved by ``solve_komd(solver="smo")`` and ``solver="cvxopt"`` on
a real kernel (splice_libsvm scaled to [-1, 1], RBF beta0 = 0.1, the first n rows;
splice has 1000 rows, so the real kernel stops there) and a synthetic one
(two Gaussian classes in 10 dimensions, same RBF), n = 200, 500, 1000, 2000,
lam = 0.1 and 0.5. Each cell prints the best of ``--repeat`` interleaved timings,
the ratio cvxopt / SMO and the relative objective gap.

Part 2: one ARBF iteration against recomputing K_beta from scratch
(``anisotropic_rbf``), on splice at n = 800 (its training size in the protocol),
lam = 0.1, from beta = beta0 = 0.1 with gamma the KOMD solution on K_beta. The
parts are timed as ARBF runs them (``methods/komd/_arbf.py``): the beta gradient
at (beta, gamma); the incremental kernel update to the beta of ARBF's beta step
(``mu = 10``, ``tau = 100``, ``mu_role="step"``, the protocol's defaults), i.e.
``exp(-update_exponent(E, ...))``; and the gamma step, ``solve_komd`` on that
updated kernel warm-started from the previous gamma (the SMO iterations it takes
are printed below the table). Each part is the best of ``--repeat`` interleaved
timings.

One BLAS thread for every BLAS and OpenMP library the timings load (scipy's
OpenBLAS included: it is loaded before the limit is set). Run:
``python benchmarks/bench_komd.py [--repeat 3] [--sizes 200,500,1000,2000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    from benchmarks._cli import positive_int, sample_size
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from _cli import positive_int, sample_size


def _splice() -> tuple[np.ndarray, np.ndarray] | None:
    try:
        import datasets

        ds = datasets.load("splice_libsvm")
    except Exception as exc:  # no data mirror: synthetic only
        print(f"(splice_libsvm unavailable: {exc}; real-kernel rows skipped)")
        return None
    X = datasets.preprocess(np.asarray(ds.X, float), "minmax_pm1")
    y = np.asarray(ds.y)
    return X, np.where(y == np.unique(y)[1], 1.0, -1.0)


def _synthetic(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 10)) + 0.5 * y[:, None]
    return X, y


def _time(fn, repeat: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def part1(repeat: int, sizes: list[int]) -> None:
    from methods.komd import anisotropic_rbf, komd_objective, solve_komd

    real = _splice()
    print("\n## KOMD: SMO vs cvxopt (best of interleaved repeats, seconds)\n")
    print("| kernel | n | lam | SMO s | cvxopt s | cvxopt/SMO | rel. objective gap |")
    print("|---|---|---|---|---|---|---|")
    solve_komd(np.eye(4), np.array([1.0, 1.0, -1.0, -1.0]), 0.5)  # compile
    for name in ("splice", "synthetic"):
        for n in sizes:
            if name == "splice":
                if real is None or n > len(real[1]):
                    continue
                X, y = real[0][:n], real[1][:n]
            else:
                X, y = _synthetic(n)
            K = anisotropic_rbf(X, X, np.full(X.shape[1], 0.1))
            for lam in (0.1, 0.5):
                reps = repeat if n <= 1000 else 1
                t_smo, t_cvx = np.inf, np.inf
                for _ in range(reps):  # interleaved
                    t0 = time.perf_counter()
                    g_smo = solve_komd(K, y, lam)[0]
                    t_smo = min(t_smo, time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    g_cvx = solve_komd(K, y, lam, solver="cvxopt")[0]
                    t_cvx = min(t_cvx, time.perf_counter() - t0)
                f_s = komd_objective(K, y, lam, g_smo)
                f_c = komd_objective(K, y, lam, g_cvx)
                print(
                    f"| {name} | {n} | {lam} | {t_smo:.4f} | {t_cvx:.3f} | "
                    f"{t_cvx / t_smo:.0f}x | {(f_s - f_c) / abs(f_c):+.1e} |",
                    flush=True,
                )


def part2(repeat: int) -> None:
    from methods.komd import anisotropic_rbf, feature_correlation, solve_komd
    from methods.komd._arbf import (
        MAX_LOG_STEP,
        game_gradient_terms,
        update_exponent,
    )

    real = _splice()
    X, y = (real[0][:800], real[1][:800]) if real else _synthetic(800)
    # without the data mirror the part still runs, on data of another width (m = 10
    # against splice's 60): the heading says which, so the table is not read as
    # splice's
    data = "splice" if real else "synthetic data (splice_libsvm unavailable)"
    m = X.shape[1]
    lam, mu, tau = 0.1, 10.0, 100.0  # ARBF's defaults for mu and tau (step rule)
    beta = np.full(m, 0.1)
    C = feature_correlation(X, tau)
    K = anisotropic_rbf(X, X, beta)
    E = -np.log(K)
    gamma = solve_komd(K, y, lam)[0]

    def gradient():
        a = y * gamma
        return beta * (game_gradient_terms(X, K, a) + C @ beta)

    # ARBF's beta step from (beta, gamma), as in ARBF.fit
    log_delta = np.clip(-mu * gradient(), -MAX_LOG_STEP, MAX_LOG_STEP)
    new_beta = beta * np.exp(log_delta)
    K_new = np.exp(-update_exponent(E, X, beta, new_beta))

    def gamma_step():
        # the next iteration's gamma step: the updated kernel, warm start from the
        # previous gamma (ARBF solves on K_{beta_{t+1}} from gamma_t)
        return solve_komd(K_new, y, lam, gamma.copy())

    def incremental():
        return np.exp(-update_exponent(E, X, beta, new_beta))

    def recompute():
        return anisotropic_rbf(X, X, new_beta)

    times = {k: np.inf for k in ("gamma", "gradient", "incremental", "recompute")}
    n_smo = None
    for _ in range(repeat):
        for k, fn in (
            ("gamma", gamma_step),
            ("gradient", gradient),
            ("incremental", incremental),
            ("recompute", recompute),
        ):
            t, out = _time(fn, 1)
            times[k] = min(times[k], t)
            if k == "gamma":
                n_smo = out[1]
    it = times["gamma"] + times["gradient"] + times["incremental"]
    print(f"\n## ARBF iteration on {data}, n = {len(y)}, m = {m} (seconds)\n")
    print("| part | s |")
    print("|---|---|")
    for k, v in times.items():
        print(f"| {k} | {v:.4f} |")
    print(f"| one iteration (gamma + gradient + incremental) | {it:.4f} |")
    print(
        f"\nincremental update / recompute of K_beta: "
        f"{times['incremental'] / times['recompute']:.2f}"
    )
    print(
        f"gamma step: {n_smo} SMO iterations on the updated kernel (beta step "
        f"mu = {mu:g}: beta changed by a factor {np.exp(log_delta.min()):.3f}-"
        f"{np.exp(log_delta.max()):.3f}), warm-started from the previous gamma"
    )


def one_blas_thread() -> threadpool_limits:
    """``threadpool_limits(1)`` over every BLAS/OpenMP library the timings use.

    threadpoolctl limits only the libraries loaded when it is called: scipy's
    OpenBLAS (a second copy beside numpy's), cvxopt's and scikit-learn's OpenMP are
    loaded here first, or they would run at their default thread count.
    """
    import cvxopt  # noqa: F401  (its own OpenBLAS)
    import scipy.linalg  # noqa: F401  (scipy's OpenBLAS)

    import methods.komd  # noqa: F401  (scikit-learn's OpenMP, numba)

    return threadpool_limits(limits=1)


def parse_sizes(values: list[str]) -> list[int]:
    """The n of part 1 from ``--sizes``, comma- or space-separated.

    The README's commands write ``--sizes 200,500``; the other benchmarks take
    ``--sizes 200 500``, so both forms (and a mix) are accepted.

    Parameters
    ----------
    values : list of str
        The words given after ``--sizes``.

    Returns
    -------
    list of int
        The sizes in the order given.
    """
    return [sample_size(s.strip()) for v in values for s in v.split(",") if s.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=positive_int, default=3)
    ap.add_argument(
        "--sizes",
        nargs="+",
        default=["200,500,1000,2000"],
        help="n of part 1, e.g. 200,500 or 200 500 (default 200,500,1000,2000); "
        "splice rows stop at its 1000 rows, part 2 always uses n = 800",
    )
    args = ap.parse_args()
    try:
        sizes = parse_sizes(args.sizes)
    except argparse.ArgumentTypeError as exc:  # a usage error, before any timing
        ap.error(f"argument --sizes: {exc}")
    with one_blas_thread():
        part1(args.repeat, sizes)
        part2(args.repeat)


if __name__ == "__main__":
    main()
