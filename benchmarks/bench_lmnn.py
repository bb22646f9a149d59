"""Benchmark: the project's LMNN against metric-learn 0.7's LMNN.

Same data (standardized), same k = 5 and push weight 0.5 (metric-learn's
``regularization`` is the pull weight, 1 - 0.5), identity start. Each method's metric
is scored by the SAME objective (methods.metric_learning.lmnn_loss's formula, through
the fast exact evaluator) on the training part, and by 1-NN accuracy on a stratified
30% test part. Times are fit times with one BLAS thread, repeats interleaved.

In every mode each timed configuration (solver path, L-BFGS implementation, data)
gets one untimed fit first (``WARMUP_ITER`` L-BFGS iterations on the same data, or a
tiny problem in the default mode), so no timed fit pays the loading of the
compiled code (~0.25 s of CPU).

metric-learn is installed by this script into a throwaway venv (``--venv``, default
/tmp/kml-bench-metric-learn) with the newest scikit-learn it accepts (<= 1.7); if that
fails, the reference is this project's ``solver="dense"`` path (every triplet at
every evaluation).

Run:  nice -n 5 .venv/bin/python benchmarks/bench_lmnn.py [--repeats 3]
      nice -n 5 .venv/bin/python benchmarks/bench_lmnn.py --kernel-map
      nice -n 5 .venv/bin/python benchmarks/bench_lmnn.py --gemm [--repeats 3]
      nice -n 5 .venv/bin/python benchmarks/bench_lmnn.py --lbfgs 40 [--repeats 3]
      nice -n 5 .venv/bin/python benchmarks/bench_lmnn.py --floor [--repeats 3]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402
from sklearn.datasets import (  # noqa: E402
    load_breast_cancer,
    load_wine,
    make_classification,
)
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from methods.metric_learning import LMNN, target_neighbors  # noqa: E402
from methods.metric_learning._lmnn_solver import _Objective  # noqa: E402

try:
    from benchmarks._cli import positive_int, run
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from _cli import positive_int, run

K_NEIGHBORS = 5
PUSH_WEIGHT = 0.5
#: L-BFGS iterations of the untimed warm-up fit a configuration gets before its
#: timed fits: enough for every compiled function of an iteration to be called (the
#: two-loop recursion needs a history, the GEMM path a screened evaluation after its
#: refresh), so the first timed fit does not pay their loading.
WARMUP_ITER = 5

_REF_SCRIPT = r"""
import sys, time, numpy as np
from metric_learn import LMNN
X = np.load(sys.argv[1]); y = np.load(sys.argv[2])
lmnn = LMNN(n_neighbors=int(sys.argv[4]), regularization=1 - float(sys.argv[5]),
            init="identity", max_iter=1000)
t = time.perf_counter(); c = time.process_time(); lmnn.fit(X, y)
c = time.process_time() - c; t = time.perf_counter() - t
np.save(sys.argv[3], lmnn.components_)
print(t, c, lmnn.n_iter_ if hasattr(lmnn, "n_iter_") else -1)
"""


def _kernel_lmnn(max_iter: int) -> LMNN:
    """LMNN on a kernel map the script built itself: PSD by construction, so the
    fit's PSD check (0.6 s of CPU on mfeat's 1000-point map) stays out of the
    per-iteration times."""
    return LMNN(kernel="precomputed", check_psd=False, max_iter=max_iter)


def _datasets():
    X, y = load_wine(return_X_y=True)
    yield "wine", X, y
    X, y = load_breast_cancer(return_X_y=True)
    yield "wdbc", X, y
    X, y = make_classification(
        n_samples=2000,
        n_features=50,
        n_informative=10,
        n_redundant=10,
        n_classes=3,
        n_clusters_per_class=2,
        class_sep=1.0,
        random_state=0,
    )
    yield "synthetic_2000x50", X, y


#: file that marks a venv made by :func:`_install_reference`
VENV_MARKER = ".kml-bench-reference"


def _venv_problem(venv: Path) -> str | None:
    """Why ``venv`` must not be the throwaway reference venv, or None.

    :func:`_install_reference` runs ``python -m venv`` on it and pip-installs
    metric-learn with ``scikit-learn<=1.7``: given the harness's own ``.venv``
    that downgraded its scikit-learn, and given a plain folder (``--venv ""``
    is the current one) it wrote ``bin/``, ``lib/`` and ``pyvenv.cfg`` there.
    """
    if venv.resolve() == Path(sys.prefix).resolve():
        return (
            "that is the environment running this script, whose scikit-learn the "
            "reference install would replace; give a throwaway folder (created if "
            "missing)"
        )
    if venv.is_dir() and any(venv.iterdir()) and not (venv / "pyvenv.cfg").exists():
        return (
            "that folder holds files and is no virtual environment; give a new "
            "folder (created if missing) or the one an earlier run made"
        )
    if venv.exists() and not venv.is_dir():
        return "that is a file; give a folder (created if missing)"
    if (venv / "pyvenv.cfg").exists() and not (venv / VENV_MARKER).exists():
        python = venv / "bin" / "python"
        probe = [python, "-c", "import metric_learn"]
        if not (python.exists() and subprocess.run(probe, capture_output=True)
                .returncode == 0):
            return (
                "that virtual environment was not made by this script and has no "
                "metric-learn: the install would change its packages "
                "(scikit-learn<=1.7); give a new folder (created if missing)"
            )
    return None


def _install_reference(venv: Path) -> Path | None:
    python = venv / "bin" / "python"
    if python.exists():
        ok = subprocess.run([python, "-c", "import metric_learn"], capture_output=True)
        if ok.returncode == 0:
            return python
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        (venv / VENV_MARKER).touch()  # ours: a later run may install into it
        subprocess.run(
            [
                python,
                "-m",
                "pip",
                "install",
                "-q",
                "metric-learn==0.7.0",
                "scikit-learn<=1.7",
            ],
            check=True,
        )
        return python
    except (subprocess.CalledProcessError, OSError) as err:
        print(f"metric-learn could not be installed ({err}); using solver='dense'")
        return None


def reference_fit(
    python: Path, script: Path, tmp: Path, venv: Path
) -> tuple[float, float]:
    """One metric-learn fit of ``tmp/X.npy``, ``tmp/y.npy`` in the reference venv.

    Parameters
    ----------
    python : Path
        The venv's interpreter (:func:`_install_reference`).
    script : Path
        ``_REF_SCRIPT`` written to a file; it saves the metric to ``tmp/L.npy``.
    tmp : Path
        The folder of the data and the metric.
    venv : Path
        The venv (``--venv``), named in the error message.

    Returns
    -------
    (float, float)
        Wall and CPU seconds of the fit.

    Raises
    ------
    SystemExit
        The fit failed. The venv passed the ``import metric_learn`` probe, so it is
        reused as it is (e.g. a venv of an earlier run whose packages no longer
        fit together): the message shows the reference's own error, which
        ``capture_output`` would otherwise hide behind a bare CalledProcessError.
    """
    out = subprocess.run(
        [python, script, tmp / "X.npy", tmp / "y.npy", tmp / "L.npy",
         str(K_NEIGHBORS), str(PUSH_WEIGHT)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    if out.returncode != 0:
        err = "\n".join(out.stderr.strip().splitlines()[-10:])
        raise SystemExit(
            f"bench_lmnn: the metric-learn reference fit failed in {venv} (exit "
            f"status {out.returncode}):\n{err}\nDelete {venv} (or pass another "
            "--venv) to have metric-learn 0.7.0 installed afresh."
        )
    wall, cpu_s = out.stdout.split()[:2]
    return float(wall), float(cpu_s)


def _objective(X, y, tn, L) -> float:
    return _Objective(X, tn, y, PUSH_WEIGHT, 1.0, False)(L.ravel())[0]


def _accuracy(L, Xtr, ytr, Xte, yte) -> float:
    knn = KNeighborsClassifier(1).fit(Xtr @ L.T, ytr)
    return float(np.mean(knn.predict(Xte @ L.T) == yte))


def warm_up(estimator, *data) -> None:
    """One untimed ``estimator.fit(*data)``, its ConvergenceWarning silenced."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.fit(*data)


def _kernel_map_timings() -> None:
    """Our LMNN alone on wdbc's Gaussian kernel maps (no reference runs them).

    Each kernel map gets an untimed ``WARMUP_ITER``-iteration fit first.
    """
    from methods.kernels import pairwise_kernel
    from methods.metric_learning import MetricKNN

    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.1, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    for sigma in (0.5, 5.0):
        Ktr = pairwise_kernel(Xtr, kernel="gaussian", sigma=sigma)
        scale = Ktr.diagonal().mean()
        Ktr, Kte = (
            Ktr / scale,
            pairwise_kernel(Xte, Xtr, kernel="gaussian", sigma=sigma) / scale,
        )
        warm_up(MetricKNN(_kernel_lmnn(WARMUP_ITER)), Ktr, ytr)
        for max_iter in (30, 100, 300):
            c, t = time.process_time(), time.perf_counter()
            clf = MetricKNN(_kernel_lmnn(max_iter))
            clf.fit(Ktr, ytr)
            lm = clf.metric_learner_
            cpu, wall = time.process_time() - c, time.perf_counter() - t
            print(
                f"kernel map wdbc sigma={sigma} n={len(Ktr)} max_iter={max_iter}: "
                f"cpu {cpu:.2f}s wall {wall:.2f}s"
                f" objective {lm.objective_:.4g} iterations {lm.n_iter_} converged "
                f"{lm.converged_} 1-NN test accuracy "
                f"{np.mean(clf.predict(Kte) == yte):.3f}",
                flush=True,
            )


def _mfeat_kernel_map() -> tuple[np.ndarray, np.ndarray]:
    """lmnnmkl Table 2's LMNN_H input: mfeat's six view kernels summed, 1000 rows."""
    from datasets import load
    from methods.metric_learning._view_kernels import VIEW_BANKS, view_kernel_stack

    data = load("mfeat")
    rows = np.random.default_rng(0).permutation(len(data.y))[:1000]
    Xm = StandardScaler().fit_transform(data.X)
    stack = view_kernel_stack(Xm, VIEW_BANKS["mfeat_views"])[np.ix_(rows, rows)]
    Km = sum(stack[:, :, v] / stack[:, :, v].diagonal().mean() for v in range(6))
    return Km, np.asarray(data.y)[rows]


def _lbfgs_timings(repeats: int, max_iter: int) -> None:
    """The solver's L-BFGS (compiled vector updates) against its numpy reference.

    Same fits on mfeat's kernel map (LMNN_H of lmnnmkl Table 2), alternated, CPU
    seconds of the whole fit; the two metrics must be equal bit for bit. Each
    L-BFGS gets an untimed ``WARMUP_ITER``-iteration fit first.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from methods.metric_learning import _lmnn_solver

    try:
        from benchmarks._lbfgs_reference import lbfgs_numpy
    except ImportError:  # run as a script: benchmarks/ is sys.path[0]
        from _lbfgs_reference import lbfgs_numpy

    K, y = _mfeat_kernel_map()
    compiled = _lmnn_solver.lbfgs
    times: dict[str, list[float]] = {"numpy": [], "compiled": []}
    metrics = {}
    try:
        for impl in (compiled, lbfgs_numpy):
            _lmnn_solver.lbfgs = impl
            warm_up(_kernel_lmnn(WARMUP_ITER), K, y)
        for _ in range(repeats):
            for label, impl in (("compiled", compiled), ("numpy", lbfgs_numpy)):
                _lmnn_solver.lbfgs = impl
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    c = time.process_time()
                    lm = _kernel_lmnn(max_iter).fit(K, y)
                    times[label].append(time.process_time() - c)
                metrics[label] = lm.components_
    finally:
        _lmnn_solver.lbfgs = compiled
    a, b = np.median(times["numpy"]), np.median(times["compiled"])
    same = np.array_equal(metrics["numpy"], metrics["compiled"])
    print("| max_iter | numpy s | compiled s | ratio | L |")
    print("|---|---|---|---|---|")
    print(
        f"| {max_iter} | {', '.join(f'{s:.2f}' for s in times['numpy'])} | "
        f"{', '.join(f'{s:.2f}' for s in times['compiled'])} | {b / a:.2f} | "
        f"{'identical' if same else 'DIFFERENT'} |"
    )


def _gemm_path_timings(repeats: int, max_iter: int = 40) -> None:
    """Kernel-map LMNN with the GEMM evaluation against the screen alone.

    wdbc (512 rows, Gaussian sigma = 5) and, if the data mirror has it, mfeat's
    Table 2 LMNN_H input (1000 rows, the six view kernels summed).

    Same fits (same data, targets, L-BFGS), the only difference being
    ``GEMM_MIN_FEATURES`` (128 against never); repeats interleaved, CPU time per
    L-BFGS iteration, objective of both at ``max_iter``. Each (kernel map, path)
    gets an untimed ``WARMUP_ITER``-iteration fit first.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from methods.kernels import pairwise_kernel
    from methods.metric_learning import _lmnn_solver

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rows = np.random.default_rng(0).choice(len(X), size=512, replace=False)
    K = pairwise_kernel(X[rows], kernel="gaussian", sigma=5.0)
    problems = [("wdbc gauss5", K / K.diagonal().mean(), y[rows])]
    try:
        problems.append(("mfeat sum of 6 views", *_mfeat_kernel_map()))
    except Exception as exc:  # noqa: BLE001 - the data mirror may be absent
        print(f"mfeat skipped: {exc}")
    default = _lmnn_solver.GEMM_MIN_FEATURES
    paths = (("gemm", default), ("screen", 10**9))
    for _, K, yn in problems:
        for _, threshold in paths:
            _lmnn_solver.GEMM_MIN_FEATURES = threshold
            warm_up(_kernel_lmnn(WARMUP_ITER), K, yn)
    times: dict = {}
    objectives: dict = {}
    for _ in range(repeats):
        for n, K, yn in problems:
            for label, threshold in paths:
                _lmnn_solver.GEMM_MIN_FEATURES = threshold
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    c = time.process_time()
                    lm = _kernel_lmnn(max_iter).fit(K, yn)
                    cpu = time.process_time() - c
                times.setdefault((n, label), []).append(cpu / lm.n_iter_)
                objectives[(n, label)] = lm.objective_
    _lmnn_solver.GEMM_MIN_FEATURES = default
    print(
        "| kernel map | n = d | screen s/iter | GEMM s/iter | speedup "
        "| objective screen | GEMM |"
    )
    print("|---|---|---|---|---|---|---|")
    for n, K, _ in problems:
        a, b = np.median(times[(n, "screen")]), np.median(times[(n, "gemm")])
        print(
            f"| {n} | {len(K)} | {a:.3f} | {b:.3f} | {a / b:.1f}x | "
            f"{objectives[(n, 'screen')]:.10g} | {objectives[(n, 'gemm')]:.10g} |"
        )


#: lmnnmkl Table 2's LMNN fits per outer split that run to the LMNN default cap of
#: 1000 L-BFGS iterations, as (fits, training rows): LMNN_H once; LMNN-MKL_CV on 6
#: view kernels x 2 inner folds with half of the 1000 training rows, then the refit.
#: LMNN-MKL_P's metric steps (one per alternation, at most 10, warm-started after
#: the first) are counted separately, as LMNN iterations at 1000 rows.
TABLE2_SPLITS = 10
TABLE2_FITS = [(1, 1000), (12, 500), (1, 1000)]
LMNN_CAP = 1000


def _floor_timings(repeats: int) -> None:
    """A floor under lmnnmkl Table 2's compute time on this machine.

    An LMNN iteration that evaluates the objective exactly over dense products on an
    n-dimensional kernel map (A is n x n) needs every pairwise distance under the
    current metric (``Z Z^T``, n^2 d) and the gradient mapped back to A (one n^3
    product); our solver also forms ``Z = X L^T`` (one more). The floor counts those
    two products per iteration, timed here on one core, times the iterations of the
    protocol; it leaves out the hinge terms, line searches, vector updates and
    LMNN-MKL_P's weight steps. LMNN-MKL_P's own iteration count is not in the
    records (its warm-started steps can stop before the cap), so it is a row. The
    solver's fits (max_iter 20 and 100, the same code on the same kernel map) get
    one untimed ``WARMUP_ITER``-iteration fit first.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    per_iter = {}
    for m in (500, 1000):
        A, B = rng.standard_normal((m, m)), rng.standard_normal((m, m))
        A @ B  # warm the BLAS
        gemm, syrk = [], []
        for _ in range(repeats):
            c = time.process_time()
            A @ B
            gemm.append(time.process_time() - c)
            c = time.process_time()
            A @ A.T
            syrk.append(time.process_time() - c)
        per_iter[m] = float(np.median(gemm) + np.median(syrk))
    K, y = _mfeat_kernel_map()
    warm_up(_kernel_lmnn(WARMUP_ITER), K, y)
    cpu = {20: [], 100: []}
    for _ in range(repeats):  # interleaved; the difference leaves out the setup
        for max_iter in cpu:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                c = time.process_time()
                _kernel_lmnn(max_iter).fit(K, y)
                cpu[max_iter].append(time.process_time() - c)
    ours = float(np.median(cpu[100]) - np.median(cpu[20])) / 80
    print(
        f"one core: floor per iteration {per_iter[1000]:.3f} s at n = 1000, "
        f"{per_iter[500]:.3f} s at n = 500; the solver {ours:.3f} s at n = 1000 "
        f"(mfeat's kernel map, iterations 21-100) = {ours / per_iter[1000]:.2f}x "
        "the floor"
    )
    print(
        "| LMNN-MKL_P iterations per split | floor, CPU s | floor on 2 cores | target |"
    )
    print("|---|---|---|---|")
    fixed = sum(k * LMNN_CAP * per_iter[m] for k, m in TABLE2_FITS)
    for p_iters in (1000, 5000, 10000):
        total = TABLE2_SPLITS * (fixed + p_iters * per_iter[1000])
        print(
            f"| {p_iters:,} | {total:,.0f} | {total / 2 / 60:.0f} min | "
            f"{'within' if total / 2 <= 1800 else 'above'} 30 min |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument(
        "--venv",
        type=Path,
        default=None,
        help="where the metric-learn 0.7 reference is installed, for the default "
        "comparison only (default /tmp/kml-bench-metric-learn)",
    )
    # one part per run: main() runs the first it finds, so a second was dropped
    part = parser.add_mutually_exclusive_group()
    part.add_argument(
        "--kernel-map",
        action="store_true",
        help="time our LMNN on wdbc's Gaussian kernel maps instead (no reference; "
        "one fit each, --repeats is not read)",
    )
    part.add_argument(
        "--gemm",
        action="store_true",
        help="kernel maps at n = 512 and 1000: the GEMM evaluation against the screen",
    )
    part.add_argument(
        "--lbfgs",
        type=positive_int,
        metavar="MAX_ITER",
        help="mfeat's kernel map: L-BFGS with compiled vector updates against numpy",
    )
    part.add_argument(
        "--floor",
        action="store_true",
        help="a floor under lmnnmkl Table 2's compute time (two n^3 products per "
        "LMNN iteration)",
    )
    args = parser.parse_args()
    if args.venv is not None and (
        args.floor or args.lbfgs or args.gemm or args.kernel_map
    ):
        parser.error("--venv is read by the default comparison only")
    if args.floor:
        _floor_timings(args.repeats)
        return
    if args.lbfgs:
        _lbfgs_timings(args.repeats, args.lbfgs)
        return
    if args.gemm:
        _gemm_path_timings(args.repeats)
        return
    if args.kernel_map:
        _kernel_map_timings()
        return
    venv = args.venv or Path("/tmp/kml-bench-metric-learn")
    problem = _venv_problem(venv)
    if problem:
        parser.error(f"--venv {venv}: {problem}")
    ref_python = _install_reference(venv)
    ref_name = "metric-learn 0.7" if ref_python else "dense"
    tmp = Path(tempfile.mkdtemp(prefix="bench_lmnn_"))
    # the reference's inputs and output (X.npy, y.npy, L.npy, ref.py): ~1 MB that
    # every run left in the temporary folder
    atexit.register(shutil.rmtree, tmp, True)
    script = tmp / "ref.py"
    script.write_text(_REF_SCRIPT)
    # compile / load the numba loops outside the timings: one untimed fit of each
    # configuration timed below (ours, and the dense path if it is the reference)
    Xw, yw = np.random.default_rng(0).normal(size=(20, 3)), [0, 1] * 10
    warm_up(LMNN(n_neighbors=2), Xw, yw)
    if not ref_python:
        warm_up(LMNN(n_neighbors=2, solver="dense"), Xw, yw)

    rows = []
    for name, X, y in _datasets():
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, test_size=0.3, stratify=y, random_state=0
        )
        scaler = StandardScaler().fit(Xtr)
        Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
        _, codes = np.unique(ytr, return_inverse=True)
        tn = target_neighbors(Xtr, codes, K_NEIGHBORS)
        np.save(tmp / "X.npy", Xtr)
        np.save(tmp / "y.npy", ytr)
        times = {"ours": [], "ref": []}
        cpu = {"ours": [], "ref": []}
        L_ours = L_ref = None
        for _ in range(args.repeats):  # interleaved
            t, c = time.perf_counter(), time.process_time()
            ours = LMNN(n_neighbors=K_NEIGHBORS, push_weight=PUSH_WEIGHT).fit(Xtr, ytr)
            times["ours"].append(time.perf_counter() - t)
            cpu["ours"].append(time.process_time() - c)
            L_ours = ours.components_
            if ref_python:
                wall, cpu_s = reference_fit(ref_python, script, tmp, venv)
                times["ref"].append(wall)
                cpu["ref"].append(cpu_s)
                L_ref = np.load(tmp / "L.npy")
            else:
                t, c = time.perf_counter(), time.process_time()
                ref = LMNN(
                    n_neighbors=K_NEIGHBORS, push_weight=PUSH_WEIGHT, solver="dense"
                ).fit(Xtr, ytr)
                times["ref"].append(time.perf_counter() - t)
                cpu["ref"].append(time.process_time() - c)
                L_ref = ref.components_
        t_ours, t_ref = np.median(times["ours"]), np.median(times["ref"])
        rows.append(
            {
                "dataset": name,
                "n_train": Xtr.shape[0],
                "d": Xtr.shape[1],
                "t_ours": t_ours,
                "t_ref": t_ref,
                "speedup": t_ref / t_ours,
                "cpu_ours": np.median(cpu["ours"]),
                "cpu_ref": np.median(cpu["ref"]),
                "cpu_speedup": np.median(cpu["ref"]) / np.median(cpu["ours"]),
                "obj_ours": _objective(Xtr, codes, tn, L_ours),
                "obj_ref": _objective(Xtr, codes, tn, L_ref),
                "obj_identity": _objective(Xtr, codes, tn, np.eye(Xtr.shape[1])),
                "acc1nn_ours": _accuracy(L_ours, Xtr, ytr, Xte, yte),
                "acc1nn_ref": _accuracy(L_ref, Xtr, ytr, Xte, yte),
                "acc1nn_euclid": _accuracy(np.eye(Xtr.shape[1]), Xtr, ytr, Xte, yte),
                "iter_ours": ours.n_iter_,
            }
        )
        r = rows[-1]
        print(
            f"{name:18s} n={r['n_train']:4d} d={r['d']:2d} | time ours {t_ours:7.3f}s "
            f"{ref_name} {t_ref:7.3f}s ratio {r['speedup']:6.1f}x (cpu "
            f"{r['cpu_ours']:.3f}s / {r['cpu_ref']:.3f}s = {r['cpu_speedup']:.1f}x) | "
            f"objective ours "
            f"{r['obj_ours']:10.4f} ref {r['obj_ref']:10.4f} (identity "
            f"{r['obj_identity']:.4f}) | 1-NN acc ours {r['acc1nn_ours']:.3f} ref "
            f"{r['acc1nn_ref']:.3f} euclid {r['acc1nn_euclid']:.3f}",
            flush=True,
        )
    speedups = [r["speedup"] for r in rows]
    cpu_speedups = [r["cpu_speedup"] for r in rows]
    no_worse = all(r["obj_ours"] <= r["obj_ref"] * (1 + 1e-9) for r in rows)
    print(
        f"median speedup {np.median(speedups):.1f}x wall, "
        f"{np.median(cpu_speedups):.1f}x cpu (target >= 5x); objective no worse "
        f"than the reference on every set: {no_worse}; reference: {ref_name}; "
        f"repeats {args.repeats}, one BLAS thread"
    )
    print(json.dumps(rows, default=float))


if __name__ == "__main__":
    sys.exit(run(main))
