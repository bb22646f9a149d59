"""Inner-search scorers that skip scikit-learn's scorer machinery (issue 14).

``GridSearchCV(scoring="accuracy")`` scores every inner fit through ``_Scorer``:
response-method dispatch, then ``accuracy_score``'s target checks (``type_of_target``
twice, ``unique_labels``, ``column_or_1d``), ~0.4-1.0 ms per call. In mlsvm Table I
that is 5-25% of a cell's inner search (SVM-FDA's 250 fits per outer fold cost little
each). :func:`search_scoring` swaps the accuracy scorer for :class:`FastAccuracy`,
which computes the same number, ``float(np.average(y_true == y_pred))`` (what
``accuracy_score`` returns without weights), so ``cv_results_``, ties and the
selected parameters are identical bit for bit. Other scorer names pass through.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Label kinds compared directly: bool, signed/unsigned integers, unicode strings.
# Anything else (floats, objects, mixed kinds) goes through scikit-learn's checks.
_FAST_KINDS = frozenset("biuU")


class FastAccuracy:
    """Accuracy of ``estimator.predict(X)`` against ``y``, as scikit-learn's scorer.

    Falls back to ``sklearn.metrics.accuracy_score`` (what the "accuracy" scorer
    calls) whenever the labels are not two 1-d arrays of one length and one
    comparable kind, so every case the fast path does not cover gets scikit-learn's
    own result or error.
    """

    def __call__(self, estimator: Any, X: Any, y: Any) -> float:
        y_pred = estimator.predict(X)
        if (
            isinstance(y, np.ndarray)
            and isinstance(y_pred, np.ndarray)
            and y.ndim == 1
            and y_pred.shape == y.shape
            and y.size > 0
            and y.dtype.kind == y_pred.dtype.kind
            and y.dtype.kind in _FAST_KINDS
        ):
            # accuracy_score: float(np.average(y_true == y_pred)) = the bool mean
            return float(np.average(y == y_pred))
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, y_pred))

    def __repr__(self) -> str:
        return "FastAccuracy()"


def search_scoring(scoring: str) -> Any:
    """What ``GridSearchCV(scoring=...)`` gets for the configured ``search.scoring``."""
    return FastAccuracy() if scoring == "accuracy" else scoring
