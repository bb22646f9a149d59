"""benchmarks/diff_records.py: a comparison that compared nothing must not pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import diff_records
from runners.store import ResultStore

EXPERIMENT = "mlsvm_table1"


def _store(root: Path, y_pred: list[int]) -> Path:
    """A results root holding one finished record of one cell of ``EXPERIMENT``."""
    store = ResultStore(root)
    record = {
        "status": "ok",
        "finished": "2026-01-01T00:00:00",
        "dataset": "sonar",
        "method": "svm",
        "kernel": "linear",
        "label": "SVM linear",
        "predictions": {"index": [0, 1], "fold": [0, 0], "y_true": [0, 1],
                        "y_pred": y_pred, "decision": [-1.0, 1.0]},
        "folds": [{"split": 0, "n_test": 2, "n_errors": 0}],
    }
    store.write(store.path(EXPERIMENT, "sonar", record["label"], "k"), record)
    return root


def test_identical_and_differing_stores(tmp_path, capsys):
    a = _store(tmp_path / "a", [0, 1])
    assert diff_records.main([str(a), str(_store(tmp_path / "b", [0, 1]))]) == 0
    assert diff_records.main([str(a), str(_store(tmp_path / "c", [1, 1]))]) == 1
    assert "DIFFERS sonar SVM linear: predictions.y_pred (1 differ)" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    "args",
    [
        ["{a}", "{tmp}/missing"],  # a mistyped path
        ["{tmp}/missing", "{a}"],
        ["{a}/mlsvm_table1", "{a}/mlsvm_table1"],  # not the results root
        ["{a}", "{a}", "--experiment", "mlsvm_tabel1"],  # a mistyped experiment
    ],
)
def test_a_store_without_records_is_an_error(tmp_path, capsys, args):
    a = _store(tmp_path / "a", [0, 1])
    argv = [arg.format(a=a, tmp=tmp_path) for arg in args]
    assert diff_records.main(argv) == 2
    err = capsys.readouterr().err
    assert "no finished record of" in err and "results root" in err


def _runs(root: Path, preds_by_seed: dict[int, list[int]], donor: str | None = None):
    """A results root with one record per seed of one cell (as kdml's 20 runs)."""
    store = ResultStore(root)
    for seed, y_pred in preds_by_seed.items():
        record = {
            "status": "ok", "finished": f"2026-01-01T00:00:{seed:02d}",
            "dataset": "iris", "noise_donor": donor, "method": "svm",
            "kernel": "linear", "seed": seed, "label": "SVM linear",
            "predictions": {"index": [0, 1], "fold": [0, 0], "y_true": [0, 1],
                            "y_pred": y_pred, "decision": [-1.0, 1.0]},
            "folds": [{"split": 0, "n_test": 2, "n_errors": 0}],
        }
        store.write(store.path(EXPERIMENT, "iris", f"svm-{donor}-{seed}", "k"), record)
    return root


def test_each_seed_and_donor_is_its_own_cell(tmp_path, capsys):
    """Keyed by (dataset, method, kernel), only the newest of a cell's runs was
    compared: a difference in seed 0 of two stores said "1 cells ..., 0 differ"."""
    a = _runs(tmp_path / "a", {0: [0, 1], 1: [0, 1]})
    b = _runs(tmp_path / "b", {0: [1, 1], 1: [0, 1]})
    assert diff_records.main([str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "DIFFERS iris SVM linear: predictions.y_pred (1 differ)" in out
    assert "2 cells in both stores (4 test predictions), 1 differ" in out
    c = _runs(tmp_path / "c", {0: [0, 1]}, donor="glass")
    d = _runs(tmp_path / "d", {0: [0, 1]}, donor="wine")
    assert diff_records.main([str(c), str(d)]) == 1
    out = capsys.readouterr().out
    assert "MISSING iris + glass noise SVM linear: only in store A" in out
    assert "MISSING iris + wine noise SVM linear: only in store B" in out
