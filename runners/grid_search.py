"""A grid search that slices each inner split once (issue 14).

scikit-learn's ``GridSearchCV`` fits every (candidate, split) pair through
``_fit_and_score``, which slices the training and validation parts out of ``X``
and ``y`` for that one fit. With a precomputed kernel that is an ``n x n`` copy per
fit, and ``_safe_indexing`` probes ``y`` for dataframe libraries each time (~0.3 ms
a call): in mlsvm Table I's SVM-FDA cells, 250 fits per outer fold each slice
anew what 10 slices would give. :class:`SplitOnceGridSearch` takes the splits
outermost and slices each once with ``_safe_split`` (the same function, so the
same arrays; once per value of the candidates' pairwise tag, as a grid over
``kernel`` may switch it), then fits every candidate on them.

Everything a caller reads is ``GridSearchCV``'s, bit for bit: each fit gets
``clone(estimator).set_params(**candidate)``, ``mean_test_score`` is
``np.average`` over splits, candidates tie as ``rankdata(method="min")`` ranks
them and the first best wins, the best candidate is refitted on all of ``X``.
Only the order of the fits differs (split by split), which changes no result of
the project's estimators: each fit starts from a clone, and the caches that
outlive a fit (SVM-FDA's transform, the kNN metric learners', kdml's set-ups)
return what would be recomputed. ``solver="auto_path"``'s memory of IPM problems
is the one order-dependent state: it decides the same in both orders while it
holds every smaller-C problem of the split, which GridSearchCV's order needs
(pairs x other grid values x inner splits) of its 256 slots for (at most 50 in
mlsvm Table I's binary problems) and this order far fewer.
``tests/runners/test_grid_search.py`` compares the two searches.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone, is_classifier
from sklearn.externals import array_api_extra as xpx
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import _safe_split


class SplitOnceGridSearch:
    """``GridSearchCV(..., n_jobs=1, error_score="raise")``, slicing each split once.

    Parameters
    ----------
    estimator : estimator instance
    param_grid : dict of str to sequence
        As for ``GridSearchCV`` (one grid).
    cv : cross-validation splitter
        An object with ``split(X, y)``.
    scoring : str or callable
        A scorer name or a callable ``scorer(estimator, X, y)``.
    refit : bool, default=True
        Refit the best candidate on all of ``X``.

    Attributes
    ----------
    cv_results_ : dict
        ``params``, ``mean_test_score``, ``rank_test_score`` and
        ``split<k>_test_score``, as ``GridSearchCV``'s.
    best_index_, best_params_, best_score_ : as ``GridSearchCV``'s.
    best_estimator_ : estimator (if ``refit``)
    refit_time_ : float (if ``refit``)
    """

    def __init__(
        self,
        estimator: Any,
        param_grid: Mapping[str, Sequence[Any]],
        *,
        cv: Any,
        scoring: Any,
        refit: bool = True,
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring
        self.refit = refit

    def fit(self, X: Any, y: Any) -> SplitOnceGridSearch:
        """Fit every candidate on every split, then refit the best on ``X``."""
        base = clone(self.estimator)
        scorer = (
            self.scoring
            if callable(self.scoring)
            else check_scoring(base, scoring=self.scoring)
        )
        candidates = list(ParameterGrid(dict(self.param_grid)))
        cv = check_cv(self.cv, y, classifier=is_classifier(base))
        splits = list(cv.split(X, y))
        if not candidates or not splits:
            raise ValueError(
                "No fits were performed. Was the CV iterator empty? "
                "Were there no candidates?"
            )
        scores = np.empty((len(candidates), len(splits)))
        # a candidate's tags depend on its parameters only: read once, not per split
        pairwise_of: list[bool | None] = [None] * len(candidates)
        for s, (train, test) in enumerate(splits):
            # sliced once per split and per value of the pairwise tag (a candidate
            # may switch it, e.g. kernel="precomputed"), by the candidate, as
            # GridSearchCV's _fit_and_score slices
            parts: dict[bool, tuple] = {}
            for c, params in enumerate(candidates):
                model = clone(base).set_params(**clone(params, safe=False))
                if pairwise_of[c] is None:
                    pairwise_of[c] = get_tags(model).input_tags.pairwise
                pairwise = pairwise_of[c]
                if pairwise not in parts:
                    parts[pairwise] = (
                        *_safe_split(model, X, y, train),
                        *_safe_split(model, X, y, test, train),
                    )
                X_train, y_train, X_test, y_test = parts[pairwise]
                # GridSearchCV runs each fit under its own catch_warnings (joblib's
                # delayed call), so a "default" warning shows once per fit
                with warnings.catch_warnings():
                    model.fit(X_train, y_train)
                    scores[c, s] = scorer(model, X_test, y_test)
        means = np.average(scores, axis=1)
        if np.any(~np.isfinite(means)):
            warnings.warn(
                f"One or more of the test scores are non-finite: {means}",
                category=UserWarning,
                stacklevel=2,
            )
        if np.isnan(means).all():
            ranks = np.ones_like(means, dtype=np.int32)
        else:
            # as GridSearchCV: NaN ties with the worst, infinities made finite
            filled = xpx.nan_to_num(means, fill_value=np.nanmin(means) - 1)
            ranks = rankdata(-filled, method="min").astype(np.int32, copy=False)
        self.cv_results_ = {
            "params": candidates,
            "mean_test_score": means,
            "rank_test_score": ranks,
            **{f"split{s}_test_score": scores[:, s] for s in range(len(splits))},
        }
        self.n_splits_ = len(splits)
        self.best_index_ = int(ranks.argmin())
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = means[self.best_index_]
        if self.refit:
            self.best_estimator_ = clone(base).set_params(
                **clone(self.best_params_, safe=False)
            )
            t0 = time.perf_counter()
            self.best_estimator_.fit(X, y)
            self.refit_time_ = time.perf_counter() - t0
        return self
