"""benchmarks/bench_cell.py's scikit-learn script fits what the harness fits."""

from __future__ import annotations

import numpy as np
from omegaconf import OmegaConf

import datasets
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
