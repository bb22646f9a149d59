"""A metric learner whose fits are reused across a grid over kNN's k.

:class:`~methods.metric_learning.MetricKNN` clones and refits its metric learner
for every candidate of a grid search, although a grid over the kNN's ``k`` alone
leaves the learner's input and parameters unchanged. :class:`CachedMetricLearner`
wraps a deterministic learner and keeps its recent fitted clones in memory, keyed
by a hash of (X, y) and the learner's parameters: the arbf kNN baselines (K-LMNN,
K-GB-LMNN) then learn the metric once per training part.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

_CACHE: OrderedDict[str, BaseEstimator] = OrderedDict()
_CACHE_SIZE = 4


def _key(estimator: BaseEstimator, X: np.ndarray, y: np.ndarray) -> str:
    h = hashlib.sha1()
    X = np.ascontiguousarray(X, dtype=np.float64)
    h.update(X.tobytes())
    h.update(np.asarray(X.shape).tobytes())
    h.update(repr(np.asarray(y).tolist()).encode())
    h.update(type(estimator).__qualname__.encode())
    for k, v in sorted(estimator.get_params(deep=True).items()):
        v = hashlib.sha1(v.tobytes()).hexdigest() if isinstance(v, np.ndarray) else v
        h.update(f"{k}={v!r};".encode())
    return h.hexdigest()


class CachedMetricLearner(TransformerMixin, BaseEstimator):
    """``estimator``'s fit, reused when the same data and parameters come back.

    Only for deterministic learners (fixed integer ``random_state`` or none).

    Parameters
    ----------
    estimator : metric learner with ``fit(X, y)`` and ``transform(X)``

    Attributes
    ----------
    estimator_ : the fitted clone (shared with the cache; treat as read-only)
    n_features_in_, components_ (when the learner has them)
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the wrapped learner's input: a precomputed Gram matrix is sliced by rows
        # and columns in cross-validation (and by MetricKNN, which takes this tag)
        if self.estimator is not None:
            inner = self.estimator.__sklearn_tags__()
            tags.input_tags.pairwise = inner.input_tags.pairwise
        return tags

    def fit(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        key = _key(self.estimator, X, y)
        if key in _CACHE:
            _CACHE.move_to_end(key)
        else:
            _CACHE[key] = clone(self.estimator).fit(X, y)
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        self.estimator_ = _CACHE[key]
        self.n_features_in_ = X.shape[1]
        if hasattr(self.estimator_, "components_"):
            self.components_ = self.estimator_.components_
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        return self.estimator_.transform(X)
