"""The check estimator BandCheck and protocol.kind=nested_training_sets (issue 9).

BandCheck's measures are tested against scikit-learn's SVC (a LIBSVM solve to a
tight tolerance) and against the definition of SVM_m's band; the protocol kind
against :func:`runners.protocols.nested_training_sets`.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from methods.kernels import pairwise_kernel
from runners.checks import BandCheck
from runners.protocols import (
    evaluate_every_fit,
    nested_training_sets,
    solver_diagnostics,
    training_set_splits,
)

PROTOCOL = {"kind": "nested_training_sets", "outer_folds": 3, "inner_folds": 2,
            "repetitions": 1, "stratified": True, "shuffle": True}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=80, n_features=5, n_informative=3, class_sep=1.5, random_state=0
    )
    return pairwise_kernel(X, kernel="gaussian", sigma=2.0), y


@pytest.mark.parametrize("C", [0.5, 10.0])
def test_band_check_measures_agree_with_libsvm(data, C):
    K, y = data
    check = BandCheck(C=C, epsilon=3.0, kernel="precomputed").fit(K, y).check_
    ref = SVC(C=C, kernel="precomputed", tol=1e-10).fit(K, y)
    s = np.where(y == ref.classes_[1], 1.0, -1.0)
    assert check["max_margin"] == pytest.approx(
        np.max(s * ref.decision_function(K)), abs=1e-3
    )
    alpha = np.zeros(len(y))
    alpha[ref.support_] = np.abs(ref.dual_coef_[0])
    assert check["n_zero_alpha"] == int(np.sum(alpha <= 1e-6 * C))
    assert check["free_multiplier"] == bool(
        np.any((alpha > 1e-6 * C) & (alpha < C * (1 - 1e-6)))
    )


def test_band_check_sees_an_active_band(data):
    """Inside the band SVM_m has the SVM's solution; with eps = 0 here it has not."""
    K, y = data
    wide = BandCheck(C=1.0, epsilon=3.0, kernel="precomputed").fit(K, y).check_
    assert wide["max_margin"] < 4.0
    assert wide["max_decision_diff"] < 1e-3
    tight = BandCheck(C=1.0, epsilon=0.0, kernel="precomputed").fit(K, y).check_
    assert tight["max_margin"] > 1.0 + 1e-3 and tight["n_zero_alpha"] > 0
    assert tight["max_decision_diff"] > 1e-2


def test_band_check_predicts_as_the_svm_and_refuses_multiclass(data):
    K, y = data
    model = BandCheck(C=1.0, kernel="precomputed").fit(K, y)
    np.testing.assert_array_equal(model.predict(K), model.svm_.predict(K))
    assert solver_diagnostics(model)["check"] == model.check_
    with pytest.raises(ValueError, match="two-class check.*3 classes"):
        BandCheck(kernel="precomputed").fit(K, np.arange(len(y)) % 3)


def test_nested_training_sets_fits_every_grid_point_on_every_training_set(data):
    K, y = data
    splits = training_set_splits(y, PROTOCOL, "toy", 0)
    pairs = list(nested_training_sets(y, PROTOCOL, "toy", 0))
    assert len(splits) == len(pairs) == 3 + 3 * 2
    for (_, _, tr, te), (tr2, te2) in zip(splits, pairs):
        np.testing.assert_array_equal(tr, tr2)
        np.testing.assert_array_equal(te, te2)
    folds = evaluate_every_fit(
        BandCheck(kernel="precomputed"), K, y, splits, {"C": [0.5, 10.0]}
    )
    assert len(folds) == 2 * len(splits)
    assert [f.best_params["C"] for f in folds[:2]] == [0.5, 10.0]
    first = BandCheck(C=10.0, kernel="precomputed").fit(
        K[np.ix_(splits[0][2], splits[0][2])], y[splits[0][2]]
    )
    assert folds[1].solver["check"] == first.check_
