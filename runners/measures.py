"""The measures a finished run is judged by, read from its record.

Shared by the runner's progress line and the reports, so that the number a sweep
prints for a cell is the number its table shows (arbf: the mean test AUC over the
outer splits). Light on imports: ``kml-report`` loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def fold_aucs(record: Mapping[str, Any]) -> list[float]:
    """Test AUC (%) of every outer split of one record, from its decision values.

    The positive class is the larger label (``classes_[1]``, what
    ``decision_function`` ranks high). Empty without decision values; a split with
    one class raises scikit-learn's ``ValueError``.
    """
    from sklearn.metrics import roc_auc_score

    p = record["predictions"]
    if p.get("decision") is None:
        return []
    fold = np.asarray(p["fold"])
    y = np.asarray(p["y_true"])
    d = np.asarray(p["decision"], dtype=float)
    positive = np.unique(y)[1]  # classes_[1]: what decision_function ranks high
    return [
        100.0 * roc_auc_score(y[fold == i] == positive, d[fold == i])
        for i in range(len(record["folds"]))
    ]


def progress_measure(record: Mapping[str, Any], scoring: str) -> str:
    """The number a finished run's progress line shows, in the experiment's measure.

    ``search.scoring=roc_auc`` (arbf, whose table is AUC): the mean test AUC over
    the outer splits, as the report's cell (:func:`fold_aucs`); otherwise the error
    rate, the measure of the papers' other tables.
    """
    error = f"error {record['error_pct']:.2f}%"
    if scoring != "roc_auc":
        return error
    try:
        aucs = fold_aucs(record)
    except (ValueError, IndexError):  # one class in a split, or in the whole set
        return f"AUC n/a (a split with one class), {error}"
    if not aucs:
        return f"AUC n/a (no decision values), {error}"
    return f"AUC {np.mean(aucs):.2f}%"
