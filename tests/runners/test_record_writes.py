"""What a job stores when its numbers are not plain finite JSON, and when a worker
sharing its cell finished it first: the job never crashes, and the record says what
happened (runners/store.py, runners/run.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import runners.protocols as protocols
from runners.checkpoints import SUFFIX
from runners.run import SHARED, compose_config, run_job, run_job_outcome
from runners.store import ResultStore

MODULE = "kml_test_own_methods"
# Methods of one's own (outside methods/), as a user writes them: a kNN whose
# diagnostic objective diverged, one with NaN decision values (the numbers a test
# AUC is computed from), one whose check measure JSON cannot hold.
SOURCE = '''
import numpy as np

from methods.metric_learning import MetricKNN


class DivergedObjective(MetricKNN):
    def fit(self, X, y):
        super().fit(X, y)
        self.objective_ = float("nan")
        return self


class NaNDecision(MetricKNN):
    def decision_function(self, X):
        d = np.asarray(super().decision_function(X), dtype=float)
        d[0] = np.nan
        return d


class InterruptedInSolver(MetricKNN):
    def fit(self, X, y):
        # Ctrl-C inside a compiled solver: numba hands it on as a SystemError
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("CPUDispatcher(...) returned a result with an "
                              "exception set") from exc


class OddCheck(MetricKNN):
    def fit(self, X, y):
        super().fit(X, y)
        self.check_ = {"measure": object()}
        return self
'''
CELL = ["protocol=smoke", "dataset=sonar", "method=knn", "kernel=none"]


@pytest.fixture(scope="module")
def own_methods(tmp_path_factory):
    folder = tmp_path_factory.mktemp("own")
    (folder / f"{MODULE}.py").write_text(SOURCE)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(folder))
        yield
        sys.modules.pop(MODULE, None)


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("KML_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def _own(name: str, *overrides: str):
    return compose_config([*CELL, f"method._target_={MODULE}.{name}", *overrides])


def _stored(results: Path) -> dict:
    (path,) = [p for p in results.rglob("*.json") if not p.name.startswith(".")]
    return json.loads(path.read_text())


def test_a_diverged_diagnostic_is_stored_as_null_in_an_ok_record(
    own_methods, results
):
    rec = run_job(_own("DivergedObjective"))
    assert rec["status"] == "ok", rec.get("reason")
    assert [f["solver"]["objective"] for f in rec["folds"]] == [None, None]
    assert _stored(results)["status"] == "ok"
    assert not [p for p in results.rglob(f"*{SUFFIX}")]  # finished: checkpoints go


def test_a_non_finite_result_makes_an_error_record_naming_the_field(
    own_methods, results
):
    rec, outcome = run_job_outcome(_own("NaNDecision"))
    assert rec["status"] == "error" and outcome["status"] == "error"
    assert "predictions.decision (2 non-finite)" in rec["reason"]  # one per fold
    assert rec["predictions"]["decision"].count(None) == 2  # kept, for diagnosis
    assert _stored(results)["status"] == "error"


def test_an_unstorable_value_makes_an_error_record_naming_file_and_field(
    own_methods, results
):
    rec = run_job(_own("OddCheck"))
    assert rec["status"] == "error"
    path = next(results.rglob("*.json"))
    assert str(path) in rec["reason"]
    assert "folds[0].solver.check.measure" in rec["reason"]
    assert "folds" not in rec  # the results could not be stored; the failure is
    assert _stored(results)["reason"] == rec["reason"]


def _fail_every_split(monkeypatch) -> None:
    def evaluate_split(*args, **kwargs):
        raise RuntimeError("this worker's split failed")

    monkeypatch.setattr(protocols, "evaluate_split", evaluate_split)


def test_a_failed_worker_does_not_replace_the_record_of_the_one_that_finished(
    results, monkeypatch
):
    """Worker B's split fails and B finds no finished record; worker A writes its
    ok record before B writes its error record, which must not replace it."""
    cfg = compose_config([*CELL[:3], "method=fda", "kernel=linear"])
    _fail_every_split(monkeypatch)
    real = ResultStore.write

    def a_finishes_first(self, path, record, **kwargs):
        if record["status"] == "error":  # B's, after its finished_elsewhere()
            real(self, path, {"status": "ok", "by": "A", "error_pct": 1.0})
        return real(self, path, record, **kwargs)

    monkeypatch.setattr(ResultStore, "write", a_finishes_first)
    rec, outcome = run_job_outcome(cfg)
    assert outcome["status"] == "cached" and outcome["reason"] == SHARED
    assert rec == {"status": "ok", "by": "A", "error_pct": 1.0}
    assert _stored(results) == rec


def test_a_failed_forced_recomputation_still_replaces_the_record(results, monkeypatch):
    """force=true redoes a finished cell: its failure is recorded (and rerun), not
    hidden behind the record it was asked to replace."""
    cell = [*CELL[:3], "method=fda", "kernel=linear"]
    assert run_job(compose_config(cell))["status"] == "ok"
    _fail_every_split(monkeypatch)
    rec = run_job(compose_config([*cell, "force=true"]))
    assert rec["status"] == "error" and "split failed" in rec["reason"]
    assert _stored(results)["status"] == "error"


def test_a_store_that_cannot_be_written_fails_the_job_not_the_sweep(
    results, monkeypatch
):
    """Disk full (or the results folder unmounted) under a sweep: the OSError went
    up to Hydra, which ended the sweep with a traceback and no summary."""
    import errno

    def full(self, path, record, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(ResultStore, "write", full)
    rec, outcome = run_job_outcome(compose_config([*CELL[:3], "method=fda"]))
    assert outcome["status"] == "error" and rec["status"] == "error"
    assert outcome["record"] == "none written"
    assert outcome["reason"].startswith(
        "the record could not be written (OSError: [Errno 28] No space left on "
        "device: "
    ), outcome["reason"]
    assert not list(results.rglob("*.json"))
    with pytest.raises(OSError):  # raise_errors=true: the sweep stops on it
        run_job_outcome(compose_config([*CELL[:3], "method=fda", "raise_errors=true"]))


def test_a_results_folder_behind_a_dangling_symlink_is_named(tmp_path, monkeypatch):
    """A Ray or SLURM node without the share mounted (no up-front check there):
    each job failed with "File exists: '.../results'" twice over."""
    link = tmp_path / "results"
    link.symlink_to(tmp_path / "not-mounted")
    monkeypatch.setenv("KML_RESULTS", str(link))
    _, outcome = run_job_outcome(compose_config([*CELL[:3], "method=fda"]))
    assert outcome["status"] == "error" and outcome["record"] == "none written"
    assert outcome["reason"] == (
        f"the record could not be written: cannot write records under the results "
        f"folder {link} (paths.results; KML_RESULTS sets it; {link} is a symlink "
        f"to {tmp_path / 'not-mounted'}, which does not exist). Create or mount "
        "it, or set KML_RESULTS to a folder you can write."
    ), outcome["reason"]


def test_an_interrupt_inside_a_solver_stops_the_job_and_records_nothing(
    own_methods, results
):
    """It used to be recorded as a failed run, and the sweep went on."""
    with pytest.raises(KeyboardInterrupt):
        run_job_outcome(_own("InterruptedInSolver"))
    assert not [p for p in results.rglob("*.json") if not p.name.startswith(".")]
