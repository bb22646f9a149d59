"""One Gaussian kernel per data source (lmnnmkl Sec. 6.2, multiple-source datasets).

"For both datasets Gaussian kernels are constructed respectively using the different
feature representations of instances with kernel width sigma0, where sigma0 is the
mean of all pairwise distances." Each view's ``sigma0`` is the mean Euclidean
distance over all pairs of the rows the stack is built from (the runner builds it
once on every row of the dataset, before the splits: unsupervised, as the kernel
of every other table), and the kernel is ``exp(-||x - z||^2 / (2 sigma0^2))`` (the
project's Gaussian convention; the paper does not write the form).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from methods.kernels import squared_distances

#: Column widths of the views, in the order the dataset concatenates them
#: (datasets._parsers.MFEAT_VIEWS: fourier, factors, karhunen, pixel, zernike,
#: morphological; MANIFEST.md; checked against the loaded views by a test).
VIEW_BANKS: dict[str, tuple[int, ...]] = {
    "mfeat_views": (76, 216, 64, 240, 47, 6),
}


def mean_pairwise_distance(X: np.ndarray) -> float:
    """Mean Euclidean distance over the ``n (n - 1) / 2`` pairs of rows of ``X``."""
    D = np.sqrt(squared_distances(X))
    n = X.shape[0]
    return float(D[np.triu_indices(n, 1)].mean())


def view_kernel_stack(X: np.ndarray, widths: Sequence[int]) -> np.ndarray:
    """Stack (n, n, n_views) of per-view Gaussian kernels with ``sigma0`` per view."""
    X = np.asarray(X, dtype=np.float64)
    if sum(widths) != X.shape[1]:
        raise ValueError(
            f"the views have {sum(widths)} columns in all ({list(widths)}) but X has "
            f"{X.shape[1]}; a view bank applies only to the dataset it was written "
            "for (mfeat_views: mfeat)."
        )
    edges = np.concatenate([[0], np.cumsum(widths)])
    out = np.empty((X.shape[0], X.shape[0], len(widths)))
    for v in range(len(widths)):
        Xv = X[:, edges[v] : edges[v + 1]]
        sigma0 = mean_pairwise_distance(Xv)
        out[:, :, v] = np.exp(-squared_distances(Xv) / (2.0 * sigma0**2))
    return out
