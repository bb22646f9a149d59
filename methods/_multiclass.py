r"""The one multi-class convention of every classifier in :mod:`methods`.

Every estimator reduces a multi-class problem to binary problems, solves each, and
combines their decision values here, as scikit-learn's ``SVC`` and
``OneVsOneClassifier`` do:

- **Labels.** ``classes_ = np.unique(y)``; class ``c`` means ``classes_[c]``.
- **Two classes.** One binary problem on all samples, ``classes_[1]`` is ``+1``.
  ``decision_function`` has shape ``(n_samples,)``; a value ``> 0`` means
  ``classes_[1]``, ``<= 0`` means ``classes_[0]`` (``SVC``'s sign).
- **One-vs-one** (the default). One problem per pair ``(i, j)``, ``i < j``, in the
  order of ``itertools.combinations(range(n_classes), 2)`` (scikit-learn's order:
  (0, 1), (0, 2), ..., (1, 2), ...), trained on the samples of the two classes with
  ``classes_[j]`` as ``+1``. The pair decision values, an ``(n_samples, n_pairs)``
  array, follow the two-class rule: ``> 0`` is a vote for ``classes_[j]``, ``<= 0``
  a vote for ``classes_[i]`` (the two-class problem is the pair (0, 1)).
  ``decision_function`` returns scikit-learn's ``"ovr"``-shaped
  ``(n_samples, n_classes)`` score: the votes of each class plus its summed pair
  confidences (``+D`` for ``j``, ``-D`` for ``i``) mapped by
  ``s / (3 (|s| + 1))`` into (-1/3, 1/3), which breaks vote ties without ever
  outweighing a vote (``sklearn.utils.multiclass._ovr_decision_function``, bit for
  bit). ``predict`` is the ``argmax`` of that score (an exact tie goes to the lower
  class index).
- **One-vs-rest** (only where a paper needs it: WRBF, FDA's option). Problem ``c``
  is ``classes_[c]`` (``+1``) against every other sample; ``decision_function`` is
  the ``(n_samples, n_classes)`` array of the problem decisions, ``predict`` its
  ``argmax``.

Binary problems, whatever the scheme, are the ``(indices, labels)`` pairs of
:func:`binary_problems`; an estimator stores one row per problem in ``dual_coef_``
(shape ``(n_problems, n_train)``) and ``intercept_`` (``(n_problems,)``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

SCHEMES = ("ovo", "ovr")


def encode_classes(y: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``classes_`` and ``y`` as class indices; at least two classes are required.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Class labels.
    name : str
        The estimator's name, for the error message.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
    y_idx : ndarray of shape (n_samples,)
        Index into ``classes`` of every label.
    """
    integers = isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iu"
    if not integers:
        check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    if integers and y.shape[0] > 20 and classes.shape[0] > round(0.5 * y.shape[0]):
        # 1-D integers are always "binary" or "multiclass" targets, so the check
        # (~0.8 ms, in a grid search's thousands of fits) cannot fail on them;
        # it only warns, when there are more classes than half the samples
        check_classification_targets(y)
    if classes.shape[0] < 2:
        raise ValueError(
            f"{name} needs samples of at least 2 classes; y has only one class "
            f"({classes[:1].tolist()[0]!r}) in {y.shape[0]} samples. Fit on data "
            "holding every class (with cross-validation, use stratified folds)."
        )
    return classes, y_idx


def class_pairs(n_classes: int) -> list[tuple[int, int]]:
    """The one-vs-one pairs ``(i, j)``, ``i < j``, in scikit-learn's order."""
    return list(combinations(range(n_classes), 2))


def binary_problems(
    y_idx: np.ndarray, n_classes: int, scheme: str = "ovo"
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(indices, labels in {-1, +1})`` of every binary problem, in order.

    Two classes give one problem on all samples with ``classes_[1]`` as ``+1``
    (under either scheme). "ovo": pair ``(i, j)`` on the samples of ``i`` and
    ``j``, ``classes_[j]`` as ``+1``. "ovr": class ``c`` as ``+1`` against the rest.
    """
    n = y_idx.shape[0]
    if n_classes == 2:
        return [(np.arange(n), np.where(y_idx == 1, 1.0, -1.0))]
    if scheme == "ovr":
        return [
            (np.arange(n), np.where(y_idx == c, 1.0, -1.0)) for c in range(n_classes)
        ]
    if scheme != "ovo":
        raise ValueError(
            f"Unknown multi-class scheme {scheme!r}; use one of {SCHEMES}."
        )
    problems = []
    for i, j in class_pairs(n_classes):
        idx = np.flatnonzero((y_idx == i) | (y_idx == j))
        problems.append((idx, np.where(y_idx[idx] == j, 1.0, -1.0)))
    return problems


def ovo_scores(pair_decisions: np.ndarray, n_classes: int) -> np.ndarray:
    """Votes plus tie-breaking confidences, shape (n_samples, n_classes).

    ``pair_decisions[:, k] > 0`` votes for ``j`` of the ``k``-th pair ``(i, j)``,
    else for ``i``; see the module docstring.
    """
    D = np.asarray(pair_decisions, dtype=np.float64)
    votes = np.zeros((D.shape[0], n_classes))
    confidence = np.zeros_like(votes)
    for k, (i, j) in enumerate(class_pairs(n_classes)):
        positive = D[:, k] > 0
        confidence[:, i] -= D[:, k]
        confidence[:, j] += D[:, k]
        votes[~positive, i] += 1
        votes[positive, j] += 1
    return votes + confidence / (3 * (np.abs(confidence) + 1))


def combine_decisions(
    problem_decisions: np.ndarray, n_classes: int, scheme: str = "ovo"
) -> np.ndarray:
    """``decision_function`` from the ``(n_samples, n_problems)`` problem decisions.

    Shape (n_samples,) for two classes, else (n_samples, n_classes).
    """
    if n_classes == 2:
        return problem_decisions[:, 0]
    if scheme == "ovr":
        return problem_decisions
    return ovo_scores(problem_decisions, n_classes)


def predict_from_decision(decision: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Labels from ``decision_function``: the sign for two classes, else argmax."""
    if decision.ndim == 1:
        return classes[(decision > 0).astype(int)]
    return classes[np.argmax(decision, axis=1)]
