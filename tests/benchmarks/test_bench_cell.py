"""benchmarks/bench_cell.py's scikit-learn script fits what the harness fits."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from omegaconf import OmegaConf

import datasets
from benchmarks import bench_cell
from benchmarks.bench_cell import plain_splits, table1_grid
from runners.protocols import nested_training_sets
from runners.run import compose_config, method_grid


def test_same_outer_and_inner_splits_as_the_runner():
    cfg = compose_config(["experiment=mlsvm_table1", "dataset=sonar", "method=svm"])
    protocol = OmegaConf.to_container(cfg.protocol, resolve=True, enum_to_str=True)
    y = np.asarray(datasets.load("sonar").y)
    ours = []
    for tr, te, inner in plain_splits(y, "sonar"):
        ours.append((tr, te))
        ours += [(tr[a], tr[b]) for a, b in inner.split(np.zeros(len(tr)), y[tr])]
    theirs = list(nested_training_sets(y, protocol, "sonar", 0))
    assert len(ours) == len(theirs) == 10 * 11
    for (a_tr, a_te), (b_tr, b_te) in zip(ours, theirs):
        np.testing.assert_array_equal(a_tr, b_tr)
        np.testing.assert_array_equal(a_te, b_te)


def test_same_c_grid_as_the_runner():
    cfg = compose_config(["experiment=mlsvm_table1", "dataset=sonar", "method=svm"])
    assert table1_grid() == method_grid(cfg)["C"]


def _cells_given(monkeypatch, *argv: str) -> list:
    seen = []
    monkeypatch.setattr(bench_cell, "bench_cells", lambda cells, *a: seen.append(cells))
    monkeypatch.setattr(sys, "argv", ["bench_cell.py", *argv, "--no-split"])
    bench_cell.main()
    return seen


def test_cells_parse_to_pairs(monkeypatch):
    assert _cells_given(monkeypatch) == [[("sonar", "linear"), ("musk1", "gauss1")]]
    assert _cells_given(monkeypatch, "--cells", "wdbc:gauss1") == [[("wdbc", "gauss1")]]


@pytest.mark.parametrize("cell", ["sonar", "sonar:", ":linear", "sonar:linear:x"])
def test_a_malformed_cell_is_a_usage_error(monkeypatch, capsys, cell):
    with pytest.raises(SystemExit) as exc:
        _cells_given(monkeypatch, "--cells", cell)
    assert exc.value.code == 2
    assert "is not dataset:kernel (e.g. sonar:linear" in capsys.readouterr().err


def test_split_only_and_no_split_together_are_a_usage_error(monkeypatch, capsys):
    """Together they would time nothing and say nothing."""
    with pytest.raises(SystemExit) as exc:
        _cells_given(monkeypatch, "--split-only")  # _cells_given adds --no-split
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
