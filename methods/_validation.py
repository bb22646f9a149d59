"""Input checks shared by the estimators and the runner."""

from __future__ import annotations

import numpy as np


def psd_tolerance(eigvals: np.ndarray) -> float:
    """numpy's ``matrix_rank`` tolerance, as metric-learn judges PSD matrices."""
    return float(np.abs(eigvals).max() * len(eigvals) * np.finfo(eigvals.dtype).eps)
