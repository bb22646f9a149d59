"""One harness cell against the plain scikit-learn nested CV of that cell (issue 14).

Target: "One harness cell <= 1.2x the plain scikit-learn nested CV of the same cell."
A user runs one cell as one command, so both sides are timed as fresh subprocesses,
interleaved, ``--repeats`` times each, one BLAS thread (``OMP_NUM_THREADS=1`` & co.;
the harness with each ``KML_JOBS`` of ``--jobs``, default 1):

(a) the harness::

        python -m runners.run experiment=mlsvm_table1 dataset=D method=svm kernel=K \\
            paths.results=<tmp> force=true

(b) a plain scikit-learn script (``--sklearn-child``, this file): the project's
    dataset loader and standardization (mlsvm Sec. VII, as the protocol says), the
    same cosine-normalized Gram matrix (``methods/_kernels.py``, loaded as a file so
    that numba and the estimators are not imported), the same
    outer ``StratifiedKFold`` splits and inner ``StratifiedKFold`` splits (their seeds
    from ``runners.seeds.seed_from`` as in ``runners.protocols``), then
    ``GridSearchCV(SVC(kernel="precomputed"), {"C": <the experiment's grid>})``
    refitted on each outer training part and predicting its test part. The grid
    and the protocol are read from ``conf/``; a protocol this script does not
    mirror (not a stratified, standardized 10 x 10 nested CV) stops it.

Wall time (``perf_counter`` around the subprocess) and CPU time (user + sys of the
child, ``resource.getrusage(RUSAGE_CHILDREN)`` deltas); the ratio harness / sklearn
of medians, plus the test errors of both and how many test predictions and selected
C differ (our SVM solves the dual to tol 1e-4 with its own SMO/IPM, LIBSVM to 1e-3:
a tie in the inner CV error can then select another C).

The harness's time split (unless ``--no-split``): in-process runs of the same
command with timers wrapped around its stages, after a warm-up run (numba caches):
interpreter start, imports of ``runners.run``, the cached-rerun probe of ``main``,
Hydra's compose and the config check of the sweep, the launcher, data loading, the
kernel (with ``check_psd``), the nested CV itself, and writing the record.

Usage::

    python benchmarks/bench_cell.py                       # sonar linear, musk1 gauss1
    python benchmarks/bench_cell.py --repeats 5 --cells sonar:linear wdbc:gauss1
    python benchmarks/bench_cell.py --split-only          # the time split only
    python benchmarks/bench_cell.py --jobs 1 2 2old       # worker count variants
    python benchmarks/bench_cell.py --sklearn-frozen      # + the script, GC frozen

``--sklearn-frozen`` also times the scikit-learn script with ``atexit.register(
gc.freeze)``, the exit ``kml-run`` takes since issue 14's session 10 (the
interpreter skips its final collection, ~0.3 s of the script): a second ratio, of
the harness to a plain script that exits the same way. The target's ratio stays
the one against the script as a user writes it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

try:
    from benchmarks._cli import positive_int, run
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from _cli import positive_int, run

ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "KML_JOBS": "1",
}


# ---------------------------------------------------------------- the sklearn child
def table1_grid() -> list[float]:
    """The C grid of mlsvm Table I's SVM, after checking the protocol mirrored here."""
    import yaml

    conf = ROOT / "conf"
    exp = yaml.safe_load((conf / "experiment" / "mlsvm_table1.yaml").read_text())
    proto = yaml.safe_load((conf / "protocol" / "nested_cv_10x10.yaml").read_text())
    mirrored = {"kind": "nested_cv", "outer_folds": 10, "inner_folds": 10,
                "repetitions": 1, "stratified": True, "preprocess": "standardize",
                "preprocess_scope": "dataset"}
    if {k: proto.get(k) for k in mirrored} != mirrored or (
        exp["kernel"]["normalize"] != "cosine"
    ):
        raise SystemExit("bench_cell: the protocol of mlsvm_table1 changed; update "
                         "sklearn_cell to mirror it")
    grids = exp["search"]["grids"]
    return list(grids.get("svm", grids["default"])["C"])


def plain_splits(y, dataset: str):
    """``(train, test, inner_cv)`` per outer split, drawn as ``runners.protocols``
    draws them for seed 0: outer stratified 10-fold seeded by ``("outer", dataset,
    0, 0)``, inner stratified 10-fold by ``("inner", dataset, 0, 0, j)``."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from runners.seeds import seed_from

    outer = StratifiedKFold(
        10, shuffle=True, random_state=seed_from("outer", dataset, 0, 0)
    )
    for j, (tr, te) in enumerate(outer.split(np.zeros(len(y)), y)):
        inner = StratifiedKFold(
            10, shuffle=True, random_state=seed_from("inner", dataset, 0, 0, j)
        )
        yield tr, te, inner


def sklearn_cell(dataset: str, kernel: str, out: str, freeze: bool = False) -> None:
    """The plain scikit-learn nested CV of one mlsvm Table I SVM cell.

    Mirrors ``conf/protocol/nested_cv_10x10.yaml``: standardized data (whole
    dataset), outer stratified 10-fold CV seeded by ``("outer", dataset, 0, 0)``,
    inner stratified 10-fold CV seeded by ``("inner", dataset, 0, 0, j)`` on each
    outer training part, the Table I C grid, accuracy. ``freeze``: exit as
    ``kml-run`` does, without the interpreter's final collection.
    """
    if freeze:
        import atexit
        import gc

        atexit.register(gc.freeze)
    import numpy as np
    import yaml
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    import datasets

    # methods/_kernels.py (numpy only) loaded as a file: the same Gram matrix, bit
    # for bit, without the package's estimators and numba, which a plain
    # scikit-learn script would not import (~0.35 s)
    spec = importlib.util.spec_from_file_location(
        "kml_kernels", ROOT / "methods" / "_kernels.py"
    )
    kernels = importlib.util.module_from_spec(spec)
    sys.modules["kml_kernels"] = kernels  # dataclasses look their module up
    spec.loader.exec_module(kernels)
    pairwise_kernel = kernels.pairwise_kernel

    kcfg = yaml.safe_load((ROOT / "conf" / "kernel" / f"{kernel}.yaml").read_text())
    c_grid = table1_grid()
    ds = datasets.load(dataset)
    X = datasets.preprocess(np.asarray(ds.X, dtype=np.float64), "standardize")
    y = np.asarray(ds.y)
    K = pairwise_kernel(
        X, kernel=kcfg["kernel"], degree=kcfg["degree"], sigma=kcfg["sigma"],
        normalize="cosine",
    )
    index, y_pred, best_c = [], [], []
    for tr, te, inner in plain_splits(y, dataset):
        search = GridSearchCV(
            SVC(kernel="precomputed"), {"C": c_grid}, cv=inner, scoring="accuracy"
        )
        search.fit(K[np.ix_(tr, tr)], y[tr])
        index.append(te)
        y_pred.append(search.predict(K[np.ix_(te, tr)]))
        best_c.append(search.best_params_["C"])
    index = np.concatenate(index)
    y_pred = np.concatenate(y_pred)
    Path(out).write_text(json.dumps({
        "index": index.tolist(),
        "y_pred": [v.item() if hasattr(v, "item") else v for v in y_pred],
        "n_errors": int(np.sum(y_pred != y[index])),
        "best_C": best_c,
    }))


# ---------------------------------------------------------------- subprocess timing
def harness_argv(dataset: str, kernel: str, results: str) -> list[str]:
    return [
        sys.executable, "-m", "runners.run", "experiment=mlsvm_table1",
        f"dataset={dataset}", "method=svm", f"kernel={kernel}",
        f"paths.results={results}", f"paths.outputs={results}/outputs", "force=true",
    ]


def child_env(jobs: str = "1") -> dict[str, str]:
    """One BLAS thread; bytecode written as on a user's machine (this sandbox sets
    PYTHONDONTWRITEBYTECODE, which would recompile every project module per run)."""
    env = {**os.environ, **ONE_THREAD, "KML_JOBS": jobs}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


class ChildFailed(RuntimeError):
    """A timed child process (kml-run, the scikit-learn script) failed; its
    output says why (e.g. a dataset the data mirror lacks)."""


def timed(argv: list[str], jobs: str = "1") -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one child process run to completion."""
    env = child_env(jobs)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise ChildFailed(f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def harness_record(results: str) -> dict:
    from runners.store import ResultStore

    found = [
        r for r in ResultStore(results).records("mlsvm_table1")
        if r.get("status") == "ok"
    ]
    if len(found) != 1:
        raise RuntimeError(
            f"expected one ok record under {results}, found {len(found)}"
        )
    return found[0]


def compare(record: dict, plain: dict) -> str:
    """Test errors of both, predictions and selected C that differ."""
    ours = dict(zip(record["predictions"]["index"], record["predictions"]["y_pred"]))
    theirs = dict(zip(plain["index"], plain["y_pred"]))
    if set(ours) != set(theirs):
        return "DIFFERENT TEST INDICES"
    n_diff = sum(ours[i] != theirs[i] for i in ours)
    c_ours = [f["best_params"]["C"] for f in sorted(
        record["folds"], key=lambda f: f["split"])]
    c_diff = sum(a != b for a, b in zip(c_ours, plain["best_C"]))
    n = len(ours)
    return (
        f"test error harness {100 * record['n_errors'] / n:.2f}% "
        f"({record['n_errors']}/{n}), sklearn {100 * plain['n_errors'] / n:.2f}% "
        f"({plain['n_errors']}/{n}); {n_diff} predictions and {c_diff}/10 selected C "
        "differ"
    )


def bench_cells(
    cells: list[tuple[str, str]], repeats: int, jobs: list[str], frozen: bool = False
) -> None:
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; "
          f"uptime: {os.popen('uptime').read().strip()}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_cell-") as tmp:
        for dataset, kernel in cells:
            results = f"{tmp}/{dataset}-{kernel}"
            out = f"{tmp}/{dataset}-{kernel}-sklearn.json"
            plain = [sys.executable, __file__, "--sklearn-child", dataset, kernel, out]
            variants = [
                (f"KML_JOBS={j}", harness_argv(dataset, kernel, results), j)
                if j.isdigit() else
                # "2old": n_jobs forced on the command line, as before the
                # launcher capped it at the sweep size (a worker is started)
                (f"KML_JOBS={j[:-3]}, n_jobs forced",
                 [*harness_argv(dataset, kernel, results),
                  f"hydra.launcher.n_jobs={j[:-3]}"], j[:-3])
                for j in jobs
            ] + [("sklearn", plain, "1")]
            if frozen:
                variants.append(("sklearn frozen", [*plain, "--freeze-at-exit"], "1"))
            walls = {name: [] for name, *_ in variants}
            cpus = {name: [] for name, *_ in variants}
            # one untimed run each first: numba's on-disk caches and the page cache
            timed(variants[0][1])
            timed(plain)
            for r in range(repeats):
                order = variants if r % 2 == 0 else variants[::-1]
                for name, argv, j in order:
                    wall, cpu = timed(argv, j)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            check = compare(harness_record(results), json.loads(Path(out).read_text()))
            med = statistics.median
            s_wall, s_cpu = med(walls["sklearn"]), med(cpus["sklearn"])
            for name, *_ in variants[: len(jobs)]:
                rows.append((dataset, kernel, name, med(walls[name]), s_wall,
                             med(cpus[name]), s_cpu, check))
            if frozen:
                f_wall = med(walls["sklearn frozen"])
                f_cpu = med(cpus["sklearn frozen"])
                for name, *_ in variants[: len(jobs)]:
                    rows.append((dataset, kernel, f"{name} / sklearn frozen",
                                 med(walls[name]), f_wall, med(cpus[name]), f_cpu,
                                 check))
            print(f"{dataset} {kernel}: wall {walls} cpu {cpus}", flush=True)
    print(f"\nmedians of {repeats} interleaved repeats (fresh processes, one BLAS "
          "thread; the sklearn script with KML_JOBS=1, unused)\n")
    print("| cell | harness | harness wall s | sklearn wall s | wall ratio "
          "| harness CPU s | sklearn CPU s | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for d, k, name, hw, sw, hc, sc, _ in rows:
        print(f"| {d} svm {k} | {name} | {hw:.2f} | {sw:.2f} | {hw / sw:.2f} | "
              f"{hc:.2f} | {sc:.2f} | {hc / sc:.2f} |")
    print()
    for d, k, *_, check in rows[:: len(jobs) * (2 if frozen else 1)]:
        print(f"{d} svm {k}: {check}")
    print(f"\n# uptime: {os.popen('uptime').read().strip()}")


# ---------------------------------------------------------------- the time split
def split_child(dataset: str, kernel: str, results: str, out: str) -> None:
    """One harness run in this process with timers around its stages."""
    t_import = time.perf_counter()
    import runners.run as rr
    t_imported = time.perf_counter()
    import hydra._internal.hydra as hydra_internal
    from hydra_plugins.hydra_joblib_launcher import _core as joblib_core

    import runners.callbacks as cb
    import runners.rerun as rerun
    from runners.store import ResultStore

    spent: dict[str, float] = {}

    def wrap(owner, name: str, label: str) -> None:
        fn = getattr(owner, name)

        def timed_fn(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t0

        setattr(owner, name, timed_fn)

    wrap(rerun, "cached_sweep", "cached-rerun probe")
    wrap(hydra_internal.Hydra, "multirun", "hydra multirun (all)")
    wrap(cb.ConfigCheck, "on_multirun_start", "config check of the sweep")
    wrap(joblib_core, "launch", "launcher (all)")
    wrap(rr, "run_job_outcome", "job (all)")
    wrap(rr, "_load_data", "data")
    wrap(rr, "build_input", "kernel + check_psd")
    wrap(rr, "evaluate", "nested CV")
    wrap(ResultStore, "write", "record writing")
    sys.argv = harness_argv(dataset, kernel, results)[2:]
    sys.argv[0] = "runners/run.py"
    t0 = time.perf_counter()
    try:
        rr.main()
    except SystemExit:
        pass
    spent["main (all)"] = time.perf_counter() - t0
    spent["import runners.run"] = t_imported - t_import
    Path(out).write_text(json.dumps(spent))


def time_split(dataset: str, kernel: str, repeats: int) -> None:
    env = child_env()
    with tempfile.TemporaryDirectory(prefix="bench_cell-split-") as tmp:
        runs, walls, bare = [], [], []
        for r in range(repeats + 1):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            bare.append(time.perf_counter() - t0)
            out = f"{tmp}/split{r}.json"
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, __file__, "--split-child", dataset, kernel,
                 f"{tmp}/res", out],
                cwd=ROOT, env=env, check=True, capture_output=True,
            )
            walls.append(time.perf_counter() - t0)
            runs.append(json.loads(Path(out).read_text()))
        runs, walls, bare = runs[1:], walls[1:], bare[1:]  # the first warms up
    med = statistics.median
    s = {k: med(run[k] for run in runs) for k in runs[0]}
    total = med(walls)
    interp = med(bare)
    job = s["job (all)"]
    inner = s.get("data", 0) + s.get("kernel + check_psd", 0) + s.get("nested CV", 0) \
        + s.get("record writing", 0)
    parts = [
        ("interpreter start (python -c pass)", interp),
        ("import runners.run (hydra, numpy, sklearn, ...)", s["import runners.run"]),
        ("other imports + exit (rest of the process)",
         total - interp - s["import runners.run"] - s["main (all)"]),
        ("cached-rerun probe (runners.rerun)", s["cached-rerun probe"]),
        ("Hydra compose + sweep setup", s["hydra multirun (all)"]
         - s["launcher (all)"] - s["config check of the sweep"]
         + (s["main (all)"] - s["cached-rerun probe"] - s["hydra multirun (all)"])),
        ("config check of the sweep (callbacks.ConfigCheck)",
         s["config check of the sweep"]),
        ("launcher around the job (compose job, logging, callbacks)",
         s["launcher (all)"] - job),
        ("job: key, provenance, checkpoints, imports", job - inner),
        ("job: data", s.get("data", 0)),
        ("job: kernel + check_psd", s.get("kernel + check_psd", 0)),
        ("job: nested CV", s.get("nested CV", 0)),
        ("job: record writing", s.get("record writing", 0)),
    ]
    print(f"\ntime split of the harness, {dataset} svm {kernel} (wall, medians of "
          f"{repeats} in-process runs after one warm-up; process wall {total:.2f} s)\n")
    print("| stage | s | share |")
    print("|---|---|---|")
    for name, sec in parts:
        print(f"| {name} | {sec:.3f} | {100 * sec / total:.0f}% |")


def parse_cell(text: str) -> tuple[str, str]:
    """``dataset:kernel`` of ``--cells`` as a pair; argparse's error otherwise.

    Checked when the options are parsed, so a malformed cell stops the script
    with a usage line instead of an unpacking error after the first timings.

    Parameters
    ----------
    text : str
        One word of ``--cells``, e.g. ``sonar:linear``.

    Returns
    -------
    (str, str)
        The dataset and the kernel.
    """
    dataset, sep, kernel = text.partition(":")
    if not (dataset and sep and kernel) or ":" in kernel:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not dataset:kernel (e.g. sonar:linear, musk1:gauss1)"
        )
    # a name outside the table failed after the first timings, in a traceback
    # around kml-run's own message
    names, kernels = table1_cells()
    for name, known, what in (
        (dataset, names, "dataset of mlsvm Table I with a public copy"),
        (kernel, kernels, "kernel of mlsvm Table I"),
    ):
        if name not in known:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {name} is not a {what} ({', '.join(known)})"
            )
    return dataset, kernel


def table1_cells() -> tuple[list[str], list[str]]:
    """The datasets (those with a public copy) and kernels of mlsvm Table I's sweep
    (``conf/experiment/mlsvm_table1.yaml``)."""
    import yaml

    from datasets import REGISTRY

    conf = ROOT / "conf" / "experiment" / "mlsvm_table1.yaml"
    params = yaml.safe_load(conf.read_text())["hydra"]["sweeper"]["params"]
    datasets = [d for d in params["dataset"].split(",") if REGISTRY[d].available]
    return datasets, params["kernel"].split(",")


def parse_jobs(text: str) -> str:
    """One word of ``--jobs``: ``N`` or ``Nold`` with N >= 1; argparse's error
    otherwise (a bad word would fail only after the first timings, in Hydra)."""
    count = text[:-3] if text.endswith("old") else text
    if not (count.isdigit() and int(count) >= 1):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not N or Nold with N >= 1 (e.g. 1, 2, 2old)"
        )
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", nargs="+", type=parse_cell,
                        default=[("sonar", "linear"), ("musk1", "gauss1")],
                        help="dataset:kernel pairs of mlsvm Table I (method svm)")
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--jobs", nargs="+", default=None, type=parse_jobs,
                        help="KML_JOBS of the harness runs (one timed variant each); "
                        "N + 'old' (e.g. 2old) forces hydra.launcher.n_jobs=N, the "
                        "worker start of a one-job sweep before issue 14's fix "
                        "(default 1)")
    parser.add_argument("--sklearn-frozen", action="store_true",
                        help="also time the sklearn script exiting with gc.freeze, "
                        "as kml-run does (a second, informational ratio)")
    parser.add_argument("--freeze-at-exit", action="store_true", help=argparse.SUPPRESS)
    # both would time nothing, silently
    split = parser.add_mutually_exclusive_group()
    split.add_argument("--split-only", action="store_true",
                       help="only the harness's time split (no ratio)")
    split.add_argument("--no-split", action="store_true",
                       help="only the ratios (no time split)")
    parser.add_argument("--sklearn-child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--split-child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sklearn_child:
        sklearn_cell(*args.sklearn_child, freeze=args.freeze_at_exit)
        return
    if args.split_child:
        split_child(*args.split_child)
        return
    if args.split_only and (args.jobs or args.sklearn_frozen):
        # the time split is one in-process run: no worker count, no sklearn script
        parser.error("--jobs and --sklearn-frozen time the ratios, which "
                     "--split-only leaves out")
    cells = args.cells
    if not args.split_only:
        bench_cells(cells, args.repeats, args.jobs or ["1"], args.sklearn_frozen)
    if not args.no_split:
        for dataset, kernel in cells:
            time_split(dataset, kernel, args.repeats)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(run(main, ChildFailed))
