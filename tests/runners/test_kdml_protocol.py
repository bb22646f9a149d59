"""Protocol options added for kdml: class balancing, a fixed training size."""

from __future__ import annotations

import numpy as np
import pytest

from runners.protocols import ProtocolError, balanced_subsample, outer_splits

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


@pytest.mark.parametrize(
    "train_size,balance,message",
    [
        # the pool is 90 points after balancing (3 classes x 30), 200 without
        (90, True, "'toy' has 90 points (after protocol.balance_classes) to split"),
        (500, False, "'toy' has 200 points to split, so the training part can have"),
        (200, False, "can have 3 to 197 of them (one of each class on each side)"),
        (2, False, "can have 3 to 197"),
        (0, False, "protocol.train_size=0: must be a number of training points >= 1"),
        (0.5, False, "not a fraction; to train on a fraction of the data, set "
                     "protocol.train_fraction"),
    ],
)
def test_a_train_size_the_pool_cannot_meet_names_the_key_and_the_pool(
    train_size, balance, message
):
    """Not scikit-learn's 'test_size=-292 should be either positive...'."""
    p = {**PROTOCOL, "balance_classes": balance, "train_size": train_size}
    with pytest.raises(ProtocolError, match="protocol.train_size") as err:
        outer_splits(_y(), p, "toy", 0)
    assert message in str(err.value)


def test_train_size_bounds_are_the_pool_less_one_per_class():
    p = {**PROTOCOL, "balance_classes": False, "repetitions": 1}
    for n in (3, 197):
        ((_, _, tr, te),) = outer_splits(_y(), {**p, "train_size": n}, "toy", 0)
        assert len(tr) == n and len(te) == 200 - n
    unstratified = {**p, "stratified": False, "train_size": 199}
    ((_, _, tr, te),) = outer_splits(_y(), unstratified, "toy", 0)
    assert len(tr) == 199 and len(te) == 1


def test_unbalanced_default_is_unchanged():
    y = _y()
    p = {**PROTOCOL, "balance_classes": False}
    for _, _, tr, te in outer_splits(y, p, "toy", 0):
        assert len(tr) + len(te) == len(y)


def test_balanced_subsample_counts():
    idx = balanced_subsample(_y(), 1)
    np.testing.assert_array_equal(np.bincount(_y()[idx]), [30, 30, 30])


def test_an_unstratified_train_size_leaves_at_least_one_test_point():
    """Without stratification the training part can have 1 to pool - 1 points:
    all 200 of them leave no test part, refused in the key's terms."""
    p = {**PROTOCOL, "balance_classes": False, "stratified": False, "repetitions": 1}
    with pytest.raises(ProtocolError, match="can have 1 to 199 of them"):
        outer_splits(_y(), {**p, "train_size": 200}, "toy", 0)
    ((_, _, tr, te),) = outer_splits(_y(), {**p, "train_size": 1}, "toy", 0)
    assert len(tr) == 1 and len(te) == 199
