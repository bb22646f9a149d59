"""A run that dies after some outer splits resumes from its split checkpoints.

The resumed record must equal an uninterrupted run's, prediction for prediction; a
damaged or foreign checkpoint is ignored and the split recomputed; the checkpoint
folder goes once the record is finished.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import runners.protocols as protocols
from runners.checkpoints import SUFFIX, SplitCheckpoints
from runners.run import compose_config, run_job

CELL = [
    "protocol=smoke",
    "protocol.outer_folds=4",
    "+search.grids.default.C=[0.1,10]",
    "dataset=sonar",
    "method=svm",
    "kernel=linear",
]


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("KML_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def _die_after(monkeypatch, n_splits: int) -> None:
    """Make the run fail in split ``n_splits + 1`` (as a killed worker would stop)."""
    real = protocols.evaluate_split
    calls = {"n": 0}

    def evaluate_split(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > n_splits:
            raise RuntimeError("killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(protocols, "evaluate_split", evaluate_split)


def _splits_dirs(results: Path) -> list[Path]:
    return [p for p in results.rglob(f"*{SUFFIX}") if p.is_dir()]


def _same_numbers(a: dict, b: dict) -> None:
    for field in ("index", "fold", "y_true", "y_pred", "decision"):
        np.testing.assert_array_equal(a["predictions"][field], b["predictions"][field])
    assert [f["best_params"] for f in a["folds"]] == [
        f["best_params"] for f in b["folds"]
    ]
    assert a["n_errors"] == b["n_errors"]


def test_killed_run_resumes_from_its_finished_splits(results, monkeypatch, tmp_path):
    whole = run_job(compose_config([*CELL, f"paths.results={tmp_path / 'ref'}"]))
    assert whole["status"] == "ok" and len(whole["folds"]) >= 3

    with monkeypatch.context() as m:
        _die_after(m, 2)
        dead = run_job(compose_config(CELL))
    assert dead["status"] == "error" and "killed" in dead["reason"]
    (folder,) = _splits_dirs(results)
    assert len(list(folder.glob("*.pkl"))) == 2

    computed = []
    real = protocols.evaluate_split
    monkeypatch.setattr(
        protocols,
        "evaluate_split",
        lambda *a, **k: computed.append(1) or real(*a, **k),
    )
    resumed = run_job(compose_config(CELL))
    assert resumed["status"] == "ok"
    assert resumed["resumed_splits"] == 2
    first_two = resumed["folds"][:2]
    assert resumed["resumed_seconds"] == pytest.approx(
        sum(f["search_seconds"] + f["predict_seconds"] for f in first_two)
    )
    assert len(computed) == len(whole["folds"]) - 2  # only the missing splits ran
    _same_numbers(resumed, whole)
    assert "resumed_splits" not in whole
    assert not _splits_dirs(results)  # finished: checkpoints removed


def test_damaged_or_foreign_checkpoint_is_recomputed(results, monkeypatch, caplog):
    with monkeypatch.context() as m:
        _die_after(m, 2)
        run_job(compose_config(CELL))
    (folder,) = _splits_dirs(results)
    first, second = sorted(folder.glob("*.pkl"))
    first.write_bytes(b"not a pickle")
    saved = pickle.loads(second.read_bytes())
    saved["key"] = "0" * 16
    second.write_bytes(pickle.dumps(saved))

    with caplog.at_level("WARNING", logger="kml.checkpoints"):
        rec = run_job(compose_config(CELL))
    assert rec["status"] == "ok" and "resumed_splits" not in rec
    assert sum("ignoring split checkpoint" in r.message for r in caplog.records) == 2
    whole = run_job(compose_config([*CELL, "force=true"]))
    _same_numbers(rec, whole)


def test_checkpoint_of_other_test_indices_is_ignored(tmp_path):
    cp = SplitCheckpoints(tmp_path / "x.splits", "k")
    fold = protocols.FoldResult(
        repetition=0, split=1, test_idx=np.array([1, 2, 3]), y_pred=np.array([0, 1, 0]),
        decision=None, best_params={}, inner_mean_test_error={}, fit_seconds=0.0,
        search_seconds=0.0, predict_seconds=0.0, solver={},
        inner_convergence_warnings=0,
    )
    cp.save(fold)
    assert cp.load(0, 1, np.array([1, 2, 3])) is not None
    assert cp.load(0, 1, np.array([1, 2, 4])) is None
    assert cp.load(0, 2, np.array([1, 2, 3])) is None
    other = SplitCheckpoints(tmp_path / "x.splits", "other")
    assert other.load(0, 1, np.array([1, 2, 3])) is None
    cp.clear()
    assert not (tmp_path / "x.splits").exists()


def _killed_run_leaves_two_checkpoints(monkeypatch, results) -> Path:
    with monkeypatch.context() as m:
        _die_after(m, 2)
        run_job(compose_config(CELL))
    (folder,) = _splits_dirs(results)
    assert len(list(folder.glob("*.pkl"))) == 2
    return folder


def _count_splits_computed(monkeypatch) -> list[int]:
    computed: list[int] = []
    real = protocols.evaluate_split
    monkeypatch.setattr(
        protocols, "evaluate_split", lambda *a, **k: computed.append(1) or real(*a, **k)
    )
    return computed


def test_force_recomputes_every_split(results, monkeypatch):
    """README: force=true recomputes; a killed run's checkpoints are not reused."""
    _killed_run_leaves_two_checkpoints(monkeypatch, results)
    computed = _count_splits_computed(monkeypatch)
    rec = run_job(compose_config([*CELL, "force=true"]))
    assert rec["status"] == "ok" and "resumed_splits" not in rec
    assert len(computed) == len(rec["folds"])


def test_checkpoints_of_other_package_versions_are_recomputed(results, monkeypatch):
    """Package versions are not in the key: a split computed under other versions
    (another Ray node, an upgrade between the killed run and its resumption) would
    make a record whose provenance names versions some splits were not run with."""
    import runners.provenance as provenance

    _killed_run_leaves_two_checkpoints(monkeypatch, results)
    real = provenance.package_versions
    monkeypatch.setattr(
        provenance, "package_versions", lambda: {**real(), "numpy": "0.0-other"}
    )
    computed = _count_splits_computed(monkeypatch)
    rec = run_job(compose_config(CELL))
    assert rec["status"] == "ok" and "resumed_splits" not in rec
    assert len(computed) == len(rec["folds"])


def _other_blas_kernel(monkeypatch) -> None:
    import threadpoolctl

    real = threadpoolctl.threadpool_info
    monkeypatch.setattr(
        threadpoolctl,
        "threadpool_info",
        lambda: [
            {**lib, "architecture": "Haswell"} if lib["user_api"] == "blas" else lib
            for lib in real()
        ],
    )


def _numpy_without_avx512(monkeypatch) -> None:
    import runners.checkpoints as checkpoints

    real = checkpoints._numpy_cpu_features
    monkeypatch.setattr(
        checkpoints,
        "_numpy_cpu_features",
        lambda: [f for f in real() if "512" not in f and f != "X86_V4"] + ["AVX2"],
    )


@pytest.mark.parametrize(
    "other_machine,stamp_key",
    [
        (_other_blas_kernel, "blas"),
        (_numpy_without_avx512, "cpu_features"),
        (lambda mp: mp.setenv("OPENBLAS_CORETYPE", "Haswell"), "kernel_env"),
        (lambda mp: mp.setenv("NPY_DISABLE_CPU_FEATURES", "X86_V4"), "kernel_env"),
    ],
)
def test_checkpoints_of_other_cpu_kernels_are_recomputed(
    results, monkeypatch, caplog, other_machine, stamp_key
):
    """README: the CPU (AVX-512 vs AVX2, i.e. the BLAS kernel and numpy's SIMD
    loops) and OPENBLAS_CORETYPE / NPY_DISABLE_CPU_FEATURES change some predictions;
    two workers on different CPUs sharing a cell would otherwise make a record
    matching neither machine."""
    _killed_run_leaves_two_checkpoints(monkeypatch, results)
    other_machine(monkeypatch)
    computed = _count_splits_computed(monkeypatch)
    with caplog.at_level("WARNING", logger="kml.checkpoints"):
        rec = run_job(compose_config(CELL))
    assert rec["status"] == "ok" and "resumed_splits" not in rec
    assert len(computed) == len(rec["folds"])
    why = f"written with other {stamp_key}"
    assert sum(why in r.message for r in caplog.records) == 2


def test_the_cpu_kernel_stamp_names_blas_and_numpy_features():
    import numpy as np
    from threadpoolctl import threadpool_info

    from runners.checkpoints import environment_stamp

    stamp = environment_stamp()
    assert stamp == environment_stamp()  # stable: a resumed run matches its own
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert {b["architecture"] for b in stamp["blas"]} == {
        str(lib.get("architecture")) for lib in blas
    }
    assert {b["internal_api"] for b in stamp["blas"]} == {
        lib["internal_api"] for lib in blas
    }
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        from numpy._core._multiarray_umath import __cpu_features__

        enabled = sorted(k for k, v in __cpu_features__.items() if v)
        assert stamp["cpu_features"] == enabled
    assert set(stamp["kernel_env"]) == {"OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES"}


def test_the_cpu_kernel_stamp_does_not_depend_on_earlier_imports():
    """threadpoolctl lists loaded libraries only, and cvxopt bundles an OpenBLAS of
    its own: a worker that ran a cvxopt method before must stamp as a fresh process
    resuming the cell does."""
    import json
    import subprocess
    import sys

    import cvxopt  # noqa: F401  (as an earlier job of this process would)

    from runners.checkpoints import cpu_kernels

    code = (
        "import json; from runners.checkpoints import cpu_kernels; "
        "print(json.dumps(cpu_kernels()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert json.loads(out.stdout) == cpu_kernels()


def test_checkpoints_of_other_data_are_recomputed(results, monkeypatch):
    """The data's content is not in the key (DATA_MIRROR, datasets/registry.yaml):
    a split computed on other data is not mixed into this run's record."""
    import runners.run as run

    _killed_run_leaves_two_checkpoints(monkeypatch, results)
    real = run._load_data

    def other_data(cfg, *args):
        name, X, y = real(cfg, *args)
        return name, X[:, ::-1].copy(), y  # same rows, other columns

    monkeypatch.setattr(run, "_load_data", other_data)
    computed = _count_splits_computed(monkeypatch)
    rec = run_job(compose_config(CELL))
    assert rec["status"] == "ok" and "resumed_splits" not in rec
    assert len(computed) == len(rec["folds"])


def test_a_worker_started_elsewhere_writes_the_same_record(
    results, monkeypatch, tmp_path
):
    order = []
    real = protocols.evaluate_split
    monkeypatch.setattr(
        protocols,
        "evaluate_split",
        lambda *a, **k: order.append(tuple(a[4])) or real(*a, **k),  # test part
    )
    whole = run_job(compose_config([*CELL, f"paths.results={tmp_path / 'ref'}"]))
    canonical, order[:] = list(order), []
    later = run_job(compose_config([*CELL, "split_start=2"]))
    assert order == canonical[2:] + canonical[:2]  # began at the third, wrapped round
    _same_numbers(later, whole)
    assert [(f["repetition"], f["split"]) for f in later["folds"]] == [
        (f["repetition"], f["split"]) for f in whole["folds"]
    ]


def test_split_start_must_be_a_non_negative_integer(results):
    from runners.config_schema import ConfigError

    with pytest.raises(ConfigError, match="split_start=-1: must be an integer >= 0"):
        run_job(compose_config([*CELL, "split_start=-1"]))


def test_split_start_does_not_make_a_variant():
    from reports.records import is_own_run

    rec = {"overrides": ["dataset=sonar", "split_start=3"]}
    assert is_own_run(rec, frozenset({"dataset"}))
