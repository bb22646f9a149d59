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


class _ScoreByC:
    """A scorer giving each C its own (possibly non-finite) score."""

    def __init__(self, by_c):
        self.by_c = by_c

    def __call__(self, estimator, X, y):
        return self.by_c[estimator.C]


@pytest.mark.parametrize(
    "by_c",
    [
        {0.1: -np.inf, 1.0: np.nan, 10.0: 0.5, 100.0: 0.2},
        {0.1: np.nan, 1.0: -np.inf, 10.0: np.nan, 100.0: -np.inf},
        {0.1: np.nan, 1.0: np.nan, 10.0: np.nan, 100.0: np.nan},
        {0.1: np.inf, 1.0: 0.3, 10.0: np.nan, 100.0: np.inf},
    ],
)
def test_non_finite_scores_rank_and_warn_as_gridsearchcv(by_c):
    cv = StratifiedKFold(3)
    est = SVM(kernel="precomputed")
    with warnings.catch_warnings(record=True) as ref_w:
        warnings.simplefilter("always")
        ref = GridSearchCV(
            est, C_GRID, cv=cv, scoring=_ScoreByC(by_c), error_score="raise"
        ).fit(K, Y)
    with warnings.catch_warnings(record=True) as our_w:
        warnings.simplefilter("always")
        ours = SplitOnceGridSearch(est, C_GRID, cv=cv, scoring=_ScoreByC(by_c)).fit(
            K, Y
        )
    np.testing.assert_array_equal(
        ours.cv_results_["rank_test_score"], ref.cv_results_["rank_test_score"]
    )
    assert ours.best_index_ == ref.best_index_
    # the best candidate's mean (NaN or infinite as GridSearchCV's), not the maximum
    np.testing.assert_array_equal([ours.best_score_], [ref.best_score_])
    non_finite = [str(w.message) for w in ref_w if "non-finite" in str(w.message)]
    assert non_finite
    assert [str(w.message) for w in our_w if "non-finite" in str(w.message)] == (
        non_finite
    )


class _WarnsInFit(SVM):
    def fit(self, X, y):
        warnings.warn("a fit-time notice", UserWarning, stacklevel=2)
        return super().fit(X, y)


def test_a_default_warning_shows_once_per_fit_as_in_gridsearchcv():
    """GridSearchCV fits under catch_warnings: "default" warnings repeat per fit.

    With the project's scorer (scikit-learn's own scorers enter catch_warnings
    themselves, which would hide the difference).
    """
    counts = []
    for search in (GridSearchCV, SplitOnceGridSearch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            warnings.simplefilter("default")
            search(
                _WarnsInFit(kernel="precomputed"),
                C_GRID,
                cv=StratifiedKFold(3),
                scoring=search_scoring("accuracy"),
            ).fit(K, Y)
        counts.append(sum("fit-time notice" in str(w.message) for w in caught))
    assert counts[0] == counts[1] == 4 * 3 + 1


def test_a_candidate_that_switches_the_pairwise_tag_is_sliced_as_gridsearchcv():
    grid = {"kernel": ["linear", "precomputed"], "C": [1.0, 10.0]}
    cv = StratifiedKFold(3)
    ref = GridSearchCV(SVM(kernel="linear"), grid, cv=cv, scoring="accuracy").fit(K, Y)
    ours = SplitOnceGridSearch(SVM(kernel="linear"), grid, cv=cv, scoring="accuracy")
    ours.fit(K, Y)
    np.testing.assert_array_equal(
        ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"]
    )
    assert ours.best_params_ == ref.best_params_


def test_no_split_is_an_error():
    class NoSplits(StratifiedKFold):
        def split(self, X, y=None, groups=None):
            return iter(())

    with pytest.raises(ValueError, match="No fits were performed"):
        SplitOnceGridSearch(
            SVM(kernel="precomputed"), C_GRID, cv=NoSplits(3), scoring="accuracy"
        ).fit(K, Y)
