"""Protocol options added for kdml: class balancing, a fixed training size."""

from __future__ import annotations

import numpy as np

from runners.protocols import balanced_subsample, outer_splits

PROTOCOL = {
    "kind": "repeated_splits",
    "repetitions": 3,
    "train_fraction": 0.1,
    "stratified": True,
    "balance_classes": True,
}


def _y():
    return np.array([0] * 50 + [1] * 120 + [2] * 30)


def test_balanced_splits_use_equal_class_counts_per_run():
    y = _y()
    splits = outer_splits(y, PROTOCOL, "toy", 0)
    assert len(splits) == 3
    pools = []
    for _, _, tr, te in splits:
        pool = np.concatenate([tr, te])
        assert len(np.unique(pool)) == len(pool) == 90  # 3 classes x 30
        np.testing.assert_array_equal(np.bincount(y[pool]), [30, 30, 30])
        assert len(tr) == 9 and np.all(np.bincount(y[tr]) == 3)
        pools.append(set(pool.tolist()))
    assert pools[0] != pools[1]  # a new subsample per run
    again = outer_splits(y, PROTOCOL, "toy", 0)
    for a, b in zip(splits, again):  # seeded
        np.testing.assert_array_equal(a[2], b[2])


def test_train_size_overrides_the_fraction():
    y = _y()
    splits = outer_splits(y, {**PROTOCOL, "train_size": 12}, "toy", 0)
    assert all(len(tr) == 12 and len(te) == 78 for _, _, tr, te in splits)


def test_unbalanced_default_is_unchanged():
    y = _y()
    p = {**PROTOCOL, "balance_classes": False}
    for _, _, tr, te in outer_splits(y, p, "toy", 0):
        assert len(tr) + len(te) == len(y)


def test_balanced_subsample_counts():
    idx = balanced_subsample(_y(), 1)
    np.testing.assert_array_equal(np.bincount(_y()[idx]), [30, 30, 30])
