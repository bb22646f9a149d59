"""Missing-value policies (``MISSING_POLICIES``) applied after parsing.

Readers leave NaN where the raw file marks a cell as missing ('?'); a policy
decides, per dataset, what ``load`` returns. The whole-data median of
``impute_median`` uses every row; for breast_w (the only default user) the
median of Bare_Nuclei is 1 in the whole data and in any 80% subset, so a
fold-wise median would give the same value.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from datasets.exceptions import DataValidationError

__all__ = ["Filled", "apply_missing_policy"]


class Filled(NamedTuple):
    """Output of a policy: the kept rows and columns and the filled cells."""

    X: np.ndarray
    rows: np.ndarray
    columns: np.ndarray
    mask: np.ndarray | None


def apply_missing_policy(
    X: np.ndarray,
    policy: str,
    *,
    name: str,
    feature_names: tuple[str, ...],
    value: float = 0.0,
) -> Filled:
    """Apply one policy to a matrix with NaN for missing cells.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Features; NaN marks a missing cell.
    policy : str
        One of ``MISSING_POLICIES``.
    name : str
        Dataset name, for the error message.
    feature_names : tuple of str
        Column names, for the error message.
    value : float, default=0.0
        Fill value of the ``as_value`` policy.

    Returns
    -------
    Filled
        ``rows`` / ``columns`` are boolean masks of what was kept; ``mask`` marks
        the filled cells of the returned ``X`` (None if there are none).

    Raises
    ------
    DataValidationError
        If ``policy`` is ``"none"`` and ``X`` has NaN.
    """
    missing = np.isnan(X)
    n, d = X.shape
    all_rows, all_cols = np.ones(n, dtype=bool), np.ones(d, dtype=bool)
    if not missing.any():
        return Filled(X, all_rows, all_cols, None)
    if policy == "none":
        cols = [feature_names[j] for j in np.flatnonzero(missing.any(axis=0))]
        raise DataValidationError(
            f"Dataset {name!r} has {int(missing.sum())} missing cells in columns "
            f"{cols[:10]} but its missing-value policy is 'none'. The raw file is "
            "not the registered version, or the spec needs a policy "
            "(drop_rows, drop_columns, impute_median, as_value)."
        )
    if policy == "drop_rows":
        rows = ~missing.any(axis=1)
        return Filled(X[rows], rows, all_cols, None)
    if policy == "drop_columns":
        cols = ~missing.any(axis=0)
        return Filled(X[:, cols], all_rows, cols, None)
    out = X.copy()
    if policy == "impute_median":
        medians = np.nanmedian(np.where(missing.all(axis=0), 0.0, X), axis=0)
        out[missing] = np.take(medians, np.nonzero(missing)[1])
    elif policy == "as_value":
        out[missing] = value
    else:
        raise ValueError(f"Unknown missing-value policy {policy!r}")
    return Filled(out, all_rows, all_cols, missing)
