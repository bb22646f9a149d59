"""Feature scaling as the papers describe it, whole-data and fold-wise.

``preprocess(X, step)`` scales a whole matrix at once (what the papers and the
LIBSVM ``*_scale`` files did). ``make_preprocessor(step)`` returns an unfitted
scikit-learn transformer for fitting on the training fold only, e.g. inside a
``Pipeline``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from datasets._spec import PREPROCESSING_STEPS

__all__ = [
    "PAPER_PREPROCESSING",
    "PAPER_PREPROCESSING_SOURCE",
    "make_preprocessor",
    "preprocess",
]

#: Default step per paper key.
PAPER_PREPROCESSING: Mapping[str, str] = MappingProxyType(
    {
        "mlsvm": "standardize",
        "lmnnmkl": "standardize",
        "kdml": "standardize",
        "wrbf": "minmax_pm1",
        "arbf": "minmax_pm1",
    }
)

#: Where each default comes from (quoted so a report can print it).
PAPER_PREPROCESSING_SOURCE: Mapping[str, str] = MappingProxyType(
    {
        "mlsvm": "Paper A Sec. V: 'We first standardized the data to a zero mean "
        "and one variance.'",
        "lmnnmkl": "Paper B Sec. 5: 'The attributes of all the datasets are "
        "standardized in the preprocessing step' (mfeat: 'all the features are "
        "standardized in all the data sources').",
        "kdml": "Paper C is silent on scaling; we standardize (its Gaussian kernels "
        "and KNN are not scale invariant). Deviation: use step 'none' to follow "
        "the text literally.",
        "wrbf": "Paper D Sec. 5.1: 'All features were normalized between -1 and 1.'",
        "arbf": "Paper E Sec. 4: 'The datasets have all the features scaled to "
        "the interval [-1, 1]' (LIBSVM *_scale files).",
    }
)


def __getattr__(name: str) -> Any:
    # scikit-learn (and scipy.stats with it, ~1 s) is imported when a transformer is
    # made, not with the registry: kml-report reads dataset names only
    if name == "SymmetricMinMaxScaler":
        from datasets._scalers import SymmetricMinMaxScaler

        return SymmetricMinMaxScaler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_preprocessor(step: str) -> Any:
    """Unfitted transformer for one preprocessing step, for fold-wise use.

    Parameters
    ----------
    step : {"none", "standardize", "minmax_pm1"}
        "standardize": zero mean, unit variance (population std, ddof=0);
        constant columns become 0. "minmax_pm1": each feature to [-1, 1];
        constant columns become 0. "none": identity.

    Returns
    -------
    transformer : estimator
        ``StandardScaler()``, ``SymmetricMinMaxScaler((-1, 1))`` or an identity
        ``FunctionTransformer``; clone-able, with ``fit`` / ``transform``.

    Raises
    ------
    ValueError
        If ``step`` is not one of ``PREPROCESSING_STEPS``.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.svm import SVC
    >>> model = make_pipeline(make_preprocessor("minmax_pm1"), SVC())
    """
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    from datasets._scalers import SymmetricMinMaxScaler

    if step == "none":
        return FunctionTransformer(None, validate=False)
    if step == "standardize":
        return StandardScaler()
    if step == "minmax_pm1":
        return SymmetricMinMaxScaler(feature_range=(-1, 1))
    raise ValueError(
        f"Unknown preprocessing step {step!r}; expected one of {PREPROCESSING_STEPS}."
    )


def preprocess(X: np.ndarray, step: str) -> np.ndarray:
    """Apply one preprocessing step to a whole matrix (fit and transform on X).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite features.
    step : {"none", "standardize", "minmax_pm1"}
        See ``make_preprocessor``.

    Returns
    -------
    X_new : ndarray of shape (n_samples, n_features), dtype float64
        A new array; ``X`` is not modified. Constant columns are exactly 0 for
        both scaling steps; no NaN is produced.

    Raises
    ------
    ValueError
        If ``step`` is unknown, or ``X`` has NaN or infinite values (the
        scikit-learn scalers would pass NaN through into the result).

    Examples
    --------
    >>> import numpy as np
    >>> preprocess(np.array([[1.0, 3.0], [3.0, 3.0]]), "standardize")
    array([[-1.,  0.],
           [ 1.,  0.]])
    """
    X = np.array(X, dtype=np.float64, copy=True)
    transformer = make_preprocessor(step)
    bad = ~np.isfinite(X)
    if bad.any():
        columns = np.flatnonzero(bad.any(axis=0))
        raise ValueError(
            f"preprocess({step!r}) needs finite features; X has {int(bad.sum())} "
            f"NaN/inf values in columns {columns[:10].tolist()}"
            f"{' ...' if columns.size > 10 else ''}. Impute or drop them first "
            "(datasets.load applies each dataset's missing-value policy)."
        )
    if step == "none":
        return X
    out = np.asarray(transformer.fit_transform(X), dtype=np.float64)
    # The mean of a constant float column can differ from its value in the
    # last bit, leaving +-1e-17 instead of 0: set constant columns exactly.
    if X.shape[0] > 0:
        constant = np.all(X == X[0], axis=0)
        out[:, constant] = 0.0
    return out
