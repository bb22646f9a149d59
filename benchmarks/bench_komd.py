"""KOMD's compiled SMO against the dense cvxopt QP; ARBF's cost per iteration.

Part 1 (target: >= 20x faster than cvxopt at n = 500 with the same objective):
arbf eq. 2 solved by ``solve_komd(solver="smo")`` and ``solver="cvxopt"`` on
a real kernel (splice_libsvm scaled to [-1, 1], RBF beta0 = 0.1, the first n rows;
splice has 1000 rows, so the real kernel stops there) and a synthetic one
(two Gaussian classes in 10 dimensions, same RBF), n = 200, 500, 1000, 2000,
lam = 0.1 and 0.5. Each cell prints the best of ``--repeat`` interleaved timings,
the ratio cvxopt / SMO and the relative objective gap.

Part 2: one ARBF iteration (gamma step warm-started, beta gradient, incremental
kernel update) against recomputing K_beta from scratch (``anisotropic_rbf``), on
splice at n = 800 (its training size in the protocol).

One BLAS thread. Run: ``python benchmarks/bench_komd.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


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
    from methods.komd._arbf import game_gradient_terms, update_exponent

    real = _splice()
    X, y = (real[0][:800], real[1][:800]) if real else _synthetic(800)
    m = X.shape[1]
    beta = np.full(m, 0.1)
    C = feature_correlation(X, 100.0)
    K = anisotropic_rbf(X, X, beta)
    E = -np.log(K)
    gamma = solve_komd(K, y, 0.1)[0]
    new_beta = beta * np.exp(np.random.default_rng(0).normal(scale=0.05, size=m))

    def gamma_step():
        return solve_komd(K, y, 0.1, gamma.copy())

    def gradient():
        a = y * gamma
        return beta * (game_gradient_terms(X, K, a) + C @ beta)

    def incremental():
        return np.exp(-update_exponent(E, X, beta, new_beta))

    def recompute():
        return anisotropic_rbf(X, X, new_beta)

    times = {k: np.inf for k in ("gamma", "gradient", "incremental", "recompute")}
    for _ in range(repeat):
        for k, fn in (
            ("gamma", gamma_step),
            ("gradient", gradient),
            ("incremental", incremental),
            ("recompute", recompute),
        ):
            times[k] = min(times[k], _time(fn, 1)[0])
    it = times["gamma"] + times["gradient"] + times["incremental"]
    print(f"\n## ARBF iteration on splice, n = {len(y)}, m = {m} (seconds)\n")
    print("| part | s |")
    print("|---|---|")
    for k, v in times.items():
        print(f"| {k} | {v:.4f} |")
    print(f"| one iteration (gamma + gradient + incremental) | {it:.4f} |")
    print(
        f"\nincremental update / recompute of K_beta: "
        f"{times['incremental'] / times['recompute']:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="200,500,1000,2000")
    args = ap.parse_args()
    with threadpool_limits(limits=1):
        part1(args.repeat, [int(s) for s in args.sizes.split(",")])
        part2(args.repeat)


if __name__ == "__main__":
    main()
