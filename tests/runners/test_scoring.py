"""The inner search's accuracy scorer gives scikit-learn's numbers bit for bit."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import get_scorer
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from methods import SVM
from methods.kernels import pairwise_kernel
from runners.protocols import evaluate_split
from runners.scoring import FastAccuracy, search_scoring


class _Fixed(ClassifierMixin, BaseEstimator):
    """A fitted 'classifier' whose predictions are given."""

    def __init__(self, y_pred):
        self.y_pred = y_pred
        self.classes_ = np.unique(y_pred)  # what the scorer's response check reads

    def fit(self, X, y):
        return self

    def predict(self, X):
        self.fitted_ = True
        return self.y_pred


@pytest.mark.parametrize(
    "labels",
    [
        np.array([0, 1]),
        np.array([-1, 1]),
        np.array([3, 5, 7], dtype=np.uint8),
        np.array(["a", "bb", "ccc"]),
        np.array([False, True]),
        np.array([0.0, 1.0]),  # floats: scikit-learn's own path
        np.array(["x", "y"], dtype=object),  # objects: scikit-learn's own path
    ],
)
def test_fast_accuracy_equals_the_sklearn_scorer_bitwise(labels):
    rng = np.random.default_rng(0)
    sk = get_scorer("accuracy")
    for n in (1, 7, 10, 33, 101):
        y = labels[rng.integers(len(labels), size=n)]
        y_pred = labels[rng.integers(len(labels), size=n)]
        fast = FastAccuracy()(_Fixed(y_pred), None, y)
        ref = sk(_Fixed(y_pred), None, y)
        assert type(fast) is float
        assert fast == ref  # exact: the same float, not approximately


def test_fast_accuracy_falls_back_to_sklearn_errors():
    y = np.array([0, 1, 1, 0])
    # labels of another kind: scikit-learn's "mix of" error, not a silent 0
    with pytest.raises(ValueError, match="[Mm]ix"):
        FastAccuracy()(_Fixed(np.array(["0", "1", "1", "0"])), None, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        FastAccuracy()(_Fixed(np.array([0, 1, 1])), None, y)


def test_search_scoring_only_replaces_accuracy():
    assert isinstance(search_scoring("accuracy"), FastAccuracy)
    assert search_scoring("roc_auc") == "roc_auc"


def _problem(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1, -1)
    return pairwise_kernel(X, kernel="linear", normalize="cosine"), y


def test_grid_search_cv_results_identical_with_ties():
    K, y = _problem()
    grid = {"C": [0.1, 1.0, 10.0, 100.0, 1000.0]}
    out = {}
    for name, scoring in (("sk", "accuracy"), ("fast", FastAccuracy())):
        cv = StratifiedKFold(5, shuffle=True, random_state=0)
        out[name] = GridSearchCV(
            SVM(kernel="precomputed"), grid, cv=cv, scoring=scoring
        ).fit(K, y)
    sk, fast = out["sk"].cv_results_, out["fast"].cv_results_
    for key in ["mean_test_score", "std_test_score", "rank_test_score"] + [
        f"split{i}_test_score" for i in range(5)
    ]:
        np.testing.assert_array_equal(fast[key], sk[key], err_msg=key)
    # the case that matters for selection: tied candidates, first one wins
    assert len(set(sk["mean_test_score"])) < len(grid["C"])
    assert out["fast"].best_params_ == out["sk"].best_params_


def test_evaluate_split_selects_as_the_sklearn_scorer_does():
    K, y = _problem(seed=1)
    train, test = np.arange(60), np.arange(60, 80)
    protocol = {"kind": "nested_cv", "inner_folds": 5, "stratified": True}
    grid = {"C": [0.1, 1.0, 10.0, 100.0, 1000.0]}
    r = evaluate_split(
        SVM(kernel="precomputed"), K, y, train, test, grid, protocol, ("toy", 0, 0)
    )
    # the same search with scikit-learn's scorer, on the same inner folds
    from runners.protocols import _inner_cv

    ref = GridSearchCV(
        SVM(kernel="precomputed"),
        grid,
        cv=_inner_cv(y[train], protocol, ("toy", 0, 0)),
        scoring="accuracy",
    ).fit(K[np.ix_(train, train)], y[train])
    errs = [1.0 - s for s in ref.cv_results_["mean_test_score"]]
    assert list(r["inner_mean_test_error"].values()) == errs
    assert r["best_params"] == ref.best_params_
    np.testing.assert_array_equal(
        r["y_pred"], ref.best_estimator_.predict(K[np.ix_(test, train)])
    )
