"""Time WRBF-SVM fits and extrapolate the protocol of wrbf Table 1 to 2 workers.

wrbf Sec. 5: 7 datasets x 6 noise donors x 100 random 80/20 splits = 4200
experiments; each fits a WRBF-SVM (101 SVM solves: ``v = 1`` plus 100 gradient
steps, Sec. 4.3) and the RBF-SVM of the other column (``WRBFSVM(n_iter=0)``), and
predicts the test rows with both. The target is the whole protocol in 30 minutes
on 2 worker processes with one BLAS thread each.

The script times one experiment at the largest size (pima: 768 rows, 8 + 8
features after noise, 615 training rows) and

- extrapolates from it alone with a per-iteration cost proportional to the kernel
  entries touched (``n_train^2`` for the kernel plus ``n_train^2`` per binary
  problem for solve and gradient; one problem per class under the default
  one-vs-rest rule), and
- times one experiment at every dataset's shape (real data through
  ``datasets.load`` when available, else synthetic data of the same shape and
  class counts) and adds them up, the estimate to trust;
- runs pima experiments on ``--workers`` processes at once to measure the
  throughput that 2 shared cores actually give.

The reference timed in the same run is scikit-learn's ``SVC(kernel="rbf")`` fit on
the same pima training set, timed in the same loop as the pima experiments (one
SVC fit, then one experiment, ``--repeat`` times); the WRBF fit is printed as a
ratio to it, both medians of those interleaved repeats. Every per-dataset time
(the model's pima time and each dataset's measured time) and so the 30-minute
verdicts are medians of ``--repeat`` experiments too. One BLAS thread for every
BLAS and OpenMP library the timings load (scipy's OpenBLAS included: it is loaded
before the limit is set), in the parent and in each worker.

Run: ``python benchmarks/bench_wrbf.py [--solver auto] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

try:
    from benchmarks._cli import positive_int
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from _cli import positive_int

# shape of every dataset of wrbf Table 1 (rows, features, class counts), from
# shared/datasets/MANIFEST.md; the synthetic fallback reproduces these
SHAPES = {
    "breast_w": (699, 9, (458, 241)),
    "ecoli": (336, 7, (143, 77, 2, 2, 35, 20, 5, 52)),
    "glass": (214, 9, (70, 76, 13, 29, 9, 17)),
    "ionosphere": (351, 34, (126, 225)),
    "iris": (150, 4, (50, 50, 50)),
    "pima": (768, 8, (500, 268)),
    "house_votes": (435, 16, (267, 168)),
}
N_DONORS = 6
N_SPLITS = 100
TARGET_MIN = 30.0
#: WRBFSVM's solver options (its _parameter_constraints, a test keeps them equal)
SOLVERS = ("auto", "auto_path", "libsvm", "smo", "ipm", "cvxopt")

# run as a script from anywhere: the packages live at the repository root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _synthetic(name: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian classes with the dataset's shape and class counts."""
    _, d, counts = SHAPES[name]
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=1.5, size=(len(counts), d))
    X = np.vstack([rng.normal(loc=m, size=(c, d)) for m, c in zip(means, counts)])
    y = np.repeat(np.arange(len(counts)), counts)
    return X, y


def _load(name: str) -> tuple[np.ndarray, np.ndarray, str]:
    try:
        from datasets import load

        ds = load(name)
        return ds.X, np.unique(ds.y, return_inverse=True)[1], "real"
    except Exception:  # noqa: BLE001 - any loader failure falls back to synthetic
        X, y = _synthetic(name, seed=0)
        return X, y, "synthetic"


def noisy_split(name: str, donor: str) -> tuple:
    """One noisy set (Sec. 5.1) and one 80/20 split of it (test = floor(n / 5))."""
    from datasets._noisy import make_noisy, noise_seed

    X, y, kind = _load(name)
    X_donor, _, _ = _load(donor)
    Xn = make_noisy(X, X_donor, seed=noise_seed(name, donor))
    rng = np.random.default_rng(noise_seed(name, donor, 0))
    perm = rng.permutation(Xn.shape[0])
    n_test = Xn.shape[0] // 5  # Table 1 totals: 83400 = 600 x floor(699 / 5)
    test, train = perm[:n_test], perm[n_test:]
    return Xn[train], y[train], Xn[test], y[test], kind


def experiment(data: tuple, solver: str) -> dict:
    """One experiment of Table 1: WRBF and RBF fits plus test predictions."""
    from methods import WRBFSVM

    X, y, Xt, yt, _ = data
    t0 = time.perf_counter()
    wrbf = WRBFSVM(solver=solver).fit(X, y)
    t1 = time.perf_counter()
    rbf = WRBFSVM(solver=solver, n_iter=0).fit(X, y)
    acc = (wrbf.score(Xt, yt), rbf.score(Xt, yt))
    t2 = time.perf_counter()
    return {
        "wrbf_fit": t1 - t0,
        "total": t2 - t0,
        "acc": acc,
        "dual": (wrbf.dual_objective_, wrbf.dual_objective_rbf_),
    }


def _problems(class_counts: tuple) -> int:
    """Binary problems of the default rule: 1 for two classes, else one per class."""
    return 1 if len(class_counts) == 2 else len(class_counts)


def _workload(n_train: int, class_counts: tuple) -> float:
    """Kernel entries touched per iteration: the kernel plus one block per problem.

    The default ``multiclass="ovr"`` solves every problem on all training rows.
    """
    return (1 + _problems(class_counts)) * float(n_train) ** 2


def round_robin(fns: dict, repeat: int) -> dict[str, list]:
    """Each function's outputs over ``repeat`` rounds, one call of each per round."""
    out: dict[str, list] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            out[k].append(fn())
    return out


def median_run(runs: list[dict]) -> dict:
    """Median of each time of ``experiment`` over runs (the rest from the last run).

    The accuracies and dual objectives do not vary between runs of the same data.
    """
    return {
        **runs[-1],
        "wrbf_fit": float(np.median([r["wrbf_fit"] for r in runs])),
        "total": float(np.median([r["total"] for r in runs])),
    }


def _median(data: tuple, solver: str, repeat: int) -> dict:
    return median_run([experiment(data, solver) for _ in range(repeat)])


def _svc_fit_time(X: np.ndarray, y: np.ndarray) -> float:
    from sklearn.svm import SVC

    t = time.perf_counter()
    SVC(kernel="rbf", C=1.0, gamma=1.0).fit(X, y)
    return time.perf_counter() - t


def reference_and_pima(data: tuple, solver: str, repeat: int) -> tuple[float, dict]:
    """SVC fit and pima experiment interleaved: (median SVC time, median run)."""
    out = round_robin(
        {
            "svc": lambda: _svc_fit_time(data[0], data[1]),
            "wrbf": lambda: experiment(data, solver),
        },
        repeat,
    )
    return float(np.median(out["svc"])), median_run(out["wrbf"])


def one_blas_thread() -> threadpool_limits:
    """``threadpool_limits(1)`` over every BLAS/OpenMP library the timings use.

    threadpoolctl limits only the libraries loaded when it is called: scipy's
    OpenBLAS (a second copy beside numpy's) and scikit-learn's OpenMP are loaded
    here first, or they would run at their default thread count.
    """
    import scipy.linalg  # noqa: F401  (scipy's OpenBLAS)
    import sklearn.svm  # noqa: F401  (scikit-learn's OpenMP)

    import methods  # noqa: F401  (numba, the solvers)

    return threadpool_limits(limits=1)


def _init_worker() -> None:
    one_blas_thread()


def _worker_run(args: tuple) -> float:
    data, solver, count = args
    experiment(data, solver)  # numba/JIT warm-up inside this process
    t = time.perf_counter()
    for _ in range(count):
        experiment(data, solver)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", default="auto", choices=SOLVERS)
    parser.add_argument("--repeat", type=positive_int, default=3)
    parser.add_argument("--workers", type=positive_int, default=2)
    parser.add_argument(
        "--parallel-runs",
        type=positive_int,
        default=4,
        help="pima experiments per worker",
    )
    args = parser.parse_args()
    one_blas_thread()

    print(f"solver={args.solver!r}")
    data = noisy_split("pima", "iris")
    X, y = data[0], data[1]
    print(f"pima + iris noise: {data[4]} data, train {X.shape}, test {data[2].shape}")
    experiment(data, args.solver)  # warm-up (numba compilation, imports)
    _svc_fit_time(X, y)

    t_ref, pima = reference_and_pima(data, args.solver, args.repeat)
    print(
        f"reference SVC(rbf).fit {t_ref * 1e3:.1f} ms; WRBF fit (101 solves) "
        f"{pima['wrbf_fit'] * 1e3:.0f} ms = {pima['wrbf_fit'] / t_ref:.0f}x the "
        f"reference, {pima['wrbf_fit'] / 101 * 1e3:.2f} ms per iteration; whole "
        f"experiment {pima['total'] * 1e3:.0f} ms"
    )
    print(
        f"  dual objective WRBF {pima['dual'][0]:.2f} vs RBF {pima['dual'][1]:.2f}; "
        f"test accuracy WRBF {pima['acc'][0]:.3f} vs RBF {pima['acc'][1]:.3f}"
    )

    n_pima = X.shape[0]
    w_pima = _workload(n_pima, SHAPES["pima"][2])
    model_cpu = measured_cpu = 0.0
    print(
        f"\n{'dataset':12s} {'n_train':>7s} {'d':>3s} {'probs':>5s} {'data':>9s} "
        f"{'model s':>8s} {'measured s':>10s} {'x600 cpu s':>10s}"
    )
    names = list(SHAPES)
    for name in names:
        n, d, counts = SHAPES[name]
        n_train = n - n // 5
        model = pima["total"] * _workload(n_train, counts) / w_pima
        donor = names[(names.index(name) + 1) % len(names)]
        split = noisy_split(name, donor)
        run = _median(split, args.solver, args.repeat)
        kind = split[4]
        model_cpu += model * N_DONORS * N_SPLITS
        measured_cpu += run["total"] * N_DONORS * N_SPLITS
        print(
            f"{name:12s} {n_train:7d} {2 * d:3d} {_problems(counts):5d} {kind:>9s} "
            f"{model:8.3f} {run['total']:10.3f} {run['total'] * 600:10.0f}"
        )

    runs = args.parallel_runs
    with ProcessPoolExecutor(args.workers, initializer=_init_worker) as pool:
        t = time.perf_counter()
        walls = list(pool.map(_worker_run, [(data, args.solver, runs)] * args.workers))
        wall = time.perf_counter() - t
    per_exp_parallel = max(walls) / runs
    slowdown = per_exp_parallel / pima["total"]
    print(
        f"\n{args.workers} workers at once: {per_exp_parallel * 1e3:.0f} ms per pima "
        f"experiment per worker ({slowdown:.2f}x the serial time; pool wall "
        f"{wall:.1f} s incl. start-up)"
    )
    for label, cpu in (("pima-only model", model_cpu), ("measured", measured_cpu)):
        minutes = cpu * max(slowdown, 1.0) / args.workers / 60
        verdict = "meets" if minutes <= TARGET_MIN else "MISSES"
        print(
            f"{label:16s}: 4200 experiments = {cpu / 60:.1f} CPU min -> "
            f"{minutes:.1f} min on {args.workers} workers (x{max(slowdown, 1.0):.2f} "
            f"contention) {verdict} the {TARGET_MIN:.0f}-minute target "
            f"({minutes / TARGET_MIN:.0%})"
        )
    print(
        f"cores seen: {os.cpu_count()}; load average {os.getloadavg()[0]:.2f} (other "
        "processes on a shared machine inflate the contention factor)"
    )


if __name__ == "__main__":
    main()
