"""Outer splits are method-independent; inner selection by GridSearchCV."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from runners.protocols import ProtocolError, outer_splits

PROTO = {
    "kind": "nested_cv",
    "outer_folds": 5,
    "inner_folds": 3,
    "repetitions": 2,
    "stratified": True,
    "shuffle": True,
    "train_fraction": 0.8,
    "val_fraction": 0.2,
}


def test_outer_splits_partition_and_repeat_deterministically():
    y = np.array([0] * 30 + [1] * 20)
    a = outer_splits(y, PROTO, "toy", 0)
    b = outer_splits(y, PROTO, "toy", 0)
    assert len(a) == 10
    for (r1, j1, _, te1), (r2, j2, _, te2) in zip(a, b):
        assert (r1, j1) == (r2, j2)
        np.testing.assert_array_equal(te1, te2)
    for rep in (0, 1):
        tests = np.concatenate([te for r, _, _, te in a if r == rep])
        np.testing.assert_array_equal(np.sort(tests), np.arange(50))
    # repetitions differ, datasets differ
    assert not np.array_equal(a[0][3], a[5][3])
    c = outer_splits(y, PROTO, "other", 0)
    assert not all(np.array_equal(x[3], z[3]) for x, z in zip(a, c))


def test_stratified_folds_need_enough_samples_per_class():
    y = np.array([0] * 20 + [1] * 3)
    with pytest.raises(ProtocolError, match="class 1 of 'toy' has 3"):
        outer_splits(y, PROTO, "toy", 0)


def test_repeated_splits_fraction():
    y = np.array([0] * 60 + [1] * 40)
    proto = {**PROTO, "kind": "repeated_splits", "repetitions": 3}
    splits = outer_splits(y, proto, "toy", 0)
    assert len(splits) == 3
    for _, _, tr, te in splits:
        assert len(tr) == 80 and len(te) == 20
        assert len(np.intersect1d(tr, te)) == 0


def test_unknown_kind():
    with pytest.raises(ProtocolError, match="Unknown protocol kind"):
        outer_splits(np.zeros(10), {**PROTO, "kind": "loo"}, "toy", 0)


class _SpyClassifier(ClassifierMixin, BaseEstimator):
    """Records the training rows of every fit (X holds the row index)."""

    fits: list = []

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        if self.C == 1.0:  # one grid point is enough to see the splits
            _SpyClassifier.fits.append(np.sort(X[:, 0].astype(int)))
        self.classes_ = np.unique(y)
        self.majority_ = self.classes_[0]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_nested_training_sets_are_the_ones_evaluate_fits_on():
    from runners.protocols import evaluate, fold_seed_parts, nested_training_sets

    y = np.array([0] * 30 + [1] * 20)
    X = np.arange(50, dtype=float)[:, None]
    proto = {**PROTO, "repetitions": 1}
    _SpyClassifier.fits = []
    evaluate(
        _SpyClassifier(), X, y, outer_splits(y, proto, "toy", 3),
        {"C": [1.0, 2.0]}, proto, fold_seed_parts("toy", 3),
    )
    seen = sorted(map(tuple, _SpyClassifier.fits))
    sets = nested_training_sets(y, proto, "toy", 3)
    expected = sorted(tuple(np.sort(tr)) for tr, _ in sets)
    assert seen == expected
