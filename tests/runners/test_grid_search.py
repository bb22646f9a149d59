"""SplitOnceGridSearch gives what GridSearchCV gives, fit for fit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier

from methods import SVM, SVMFDA, SVMm
from runners.grid_search import SplitOnceGridSearch
from runners.scoring import search_scoring

X, Y = make_classification(
    n_samples=90, n_features=6, n_informative=3, flip_y=0.15, random_state=3
)
K = X @ X.T
C_GRID = {"C": [0.1, 1.0, 10.0, 100.0]}

CASES = {
    "svm precomputed": (SVM(kernel="precomputed", solver="auto_path"), K, C_GRID),
    "svm_m precomputed": (SVMm(kernel="precomputed", solver="auto_path"), K, C_GRID),
    "svm-fda C x lam": (
        SVMFDA(normalize="cosine"),
        X,
        {"C": [0.1, 10.0, 1000.0], "lam": [0.1, 10.0]},
    ),
    # every candidate ties: the first one wins in both
    "ties": (SVM(kernel="precomputed"), K, {"C": [1e-6, 2e-6, 3e-6]}),
    # warnings raised inside the fits reach the caller the same number of times
    "convergence warnings": (
        SVM(kernel="precomputed", solver="smo", max_iter=3),
        K,
        C_GRID,
    ),
    "sklearn estimator": (KNeighborsClassifier(), X, {"n_neighbors": [1, 3, 5, 9]}),
}


def _run(search, X):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        search.fit(X, Y)
    return sum(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("scoring", ["accuracy", "roc_auc", "balanced_accuracy"])
def test_same_results_as_gridsearchcv(case, scoring):
    est, X_in, grid = CASES[case]
    if scoring == "roc_auc" and case == "sklearn estimator":
        pytest.skip("covered by the SVMs")
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    ref = GridSearchCV(
        est,
        grid,
        cv=cv,
        scoring=search_scoring(scoring),
        n_jobs=1,
        error_score="raise",
    )
    ours = SplitOnceGridSearch(est, grid, cv=cv, scoring=search_scoring(scoring))
    n_ref, n_ours = _run(ref, X_in), _run(ours, X_in)
    assert n_ours == n_ref
    assert (n_ref > 0) == (case == "convergence warnings")
    assert ours.cv_results_["params"] == ref.cv_results_["params"]
    for key in ["mean_test_score", "rank_test_score"] + [
        f"split{k}_test_score" for k in range(5)
    ]:
        np.testing.assert_array_equal(ours.cv_results_[key], ref.cv_results_[key])
    assert ours.best_index_ == ref.best_index_
    assert ours.best_params_ == ref.best_params_
    assert ours.best_score_ == ref.best_score_
    np.testing.assert_array_equal(
        ours.best_estimator_.predict(X_in), ref.best_estimator_.predict(X_in)
    )
    if hasattr(ref.best_estimator_, "dual_coef_"):
        np.testing.assert_array_equal(
            ours.best_estimator_.dual_coef_, ref.best_estimator_.dual_coef_
        )


def test_no_refit_leaves_no_estimator():
    search = SplitOnceGridSearch(
        SVM(kernel="precomputed"),
        C_GRID,
        cv=StratifiedKFold(3),
        scoring="accuracy",
        refit=False,
    ).fit(K, Y)
    assert not hasattr(search, "best_estimator_")
    assert search.best_params_ in search.cv_results_["params"]


def test_each_split_is_sliced_once(monkeypatch):
    import runners.grid_search as gs

    calls = []
    real = gs._safe_split

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(gs, "_safe_split", counting)
    SplitOnceGridSearch(
        SVM(kernel="precomputed"), C_GRID, cv=StratifiedKFold(3), scoring="accuracy"
    ).fit(K, Y)
    assert len(calls) == 2 * 3  # train and test part of each split, not per C
