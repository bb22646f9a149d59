"""Noisy datasets of wrbf Sec. 5.1: real features plus as many features of another set.

Each of the seven UCI sets of wrbf Table 1 (the *original*) is paired with each of
the six others (the *donor*), 7 x 6 = 42 noisy sets. A noisy set keeps the original
rows and labels and appends ``d`` noise columns, ``d`` the number of original
features; noise column ``j`` takes, for every row independently, a value drawn
uniformly with replacement from the observed values of one donor feature, so each
noise column follows that donor feature's empirical distribution and carries no
information about the original labels. Then every column is scaled to [-1, 1].

What the paper states and what it leaves open (and what we chose):

- "picking random real values from each specific feature from the noisy dataset to
  add to each example": one independent draw per row and noise column, **with
  replacement** (the donor often has fewer rows than the original, e.g. iris
  (150) as donor of pima (768), so draws without replacement are impossible).
- "possibly some features are used more than once": noise column ``j`` uses donor
  feature ``j mod d_donor`` (``donor_columns="cycle"``), so a donor with fewer
  features is reused cyclically and one with more features contributes its first
  ``d``. ``donor_columns="random"`` draws each column's donor feature at random
  with replacement instead.
- "All features were normalized between -1 and 1": per-column min-max over the
  whole noisy set, before any train/test split (the paper scales once per set);
  constant columns become 0, as LIBSVM's ``svm-scale`` leaves them.
- Missing donor values (NaN) are not "real values" and are never drawn; the
  original must be complete (impute or drop rows before).
- The paper does not say whether the noise is drawn once per (original, donor) or
  anew for each of the 100 splits. :func:`noise_seed` gives one seed per pair by
  default and one per (pair, repetition) when ``repetition`` is given; either way
  the noise is rebuilt identically from the names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

# wrbf Sec. 5.1, in the order of Table 1, under the names of the datasets package:
# Breast Cancer Wisconsin (699 rows), Ecoli, Glass, Ionosphere, Iris, Pima Indians,
# Congressional Voting Records.
WRBF_DATASETS = (
    "breast_w",
    "ecoli",
    "glass",
    "ionosphere",
    "iris",
    "pima",
    "house_votes",
)

DONOR_COLUMNS = ("cycle", "random")


def noisy_pairs(names: Sequence[str] = WRBF_DATASETS) -> list[tuple[str, str]]:
    """Every ``(original, donor)`` pair of distinct names, original-major.

    With the seven sets of wrbf Sec. 5.1 this is the 7 x 6 = 42 noisy sets.

    Parameters
    ----------
    names : sequence of str, default=WRBF_DATASETS

    Returns
    -------
    pairs : list of (str, str)
    """
    names = list(names)
    if len(set(names)) != len(names):
        raise ValueError(f"Dataset names must be distinct; got {names}.")
    return [(o, d) for o in names for d in names if d != o]


def noise_seed(original: str, donor: str, repetition: int | None = None) -> int:
    """Seed of the noise of one noisy set: SHA-256 of ``"wrbf/<original>/<donor>"``.

    A hash of the names, not Python's salted ``hash()``, so every process and run
    rebuilds the same noise. With ``repetition`` the seed also depends on it, for a
    protocol that redraws the noise for every split.

    Returns
    -------
    seed : int
        In ``[0, 2**63)``, accepted by ``numpy.random.default_rng``.
    """
    parts = ["wrbf", original, donor]
    if repetition is not None:
        parts.append(str(int(repetition)))
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def scale_to_unit_range(X: np.ndarray) -> np.ndarray:
    """Scale each column linearly to [-1, 1]; constant columns become 0 (Sec. 5.1)."""
    X = np.asarray(X, dtype=np.float64)
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    constant = span == 0
    out = 2.0 * (X - lo) / np.where(constant, 1.0, span) - 1.0
    out[:, constant] = 0.0
    # (x - lo) / span can round to 1 + 1ulp
    return np.clip(out, -1.0, 1.0, out=out)


def make_noisy(
    X: np.ndarray,
    X_donor: np.ndarray,
    *,
    seed: int,
    donor_columns: str = "cycle",
    scale: bool = True,
) -> np.ndarray:
    """Append ``d`` noise columns drawn from a donor set, then scale, wrbf Sec. 5.1.

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
        The original features (complete, numeric).
    X_donor : ndarray of shape (n_donor_samples, d_donor)
        The donor features; any number of rows. NaN entries are never drawn.
    seed : int
        Seed of the draws, e.g. ``noise_seed(original, donor)``.
    donor_columns : {"cycle", "random"}, default="cycle"
        Which donor feature feeds noise column ``j``: ``j mod d_donor`` or a
        uniform draw with replacement (see the module docstring).
    scale : bool, default=True
        Scale every column to [-1, 1] (constant columns to 0). ``False`` returns
        the raw values, for inspection.

    Returns
    -------
    X_noisy : ndarray of shape (n_samples, 2 * d)
        ``X`` in its first ``d`` columns, noise in the last ``d``.
    """
    X = np.asarray(X, dtype=np.float64)
    X_donor = np.asarray(X_donor, dtype=np.float64)
    if X.ndim != 2 or X_donor.ndim != 2:
        raise ValueError(
            f"X and X_donor must be 2-D (n_samples, n_features); got shapes {X.shape} "
            f"and {X_donor.shape}."
        )
    if not np.all(np.isfinite(X)):
        rows = int(np.any(~np.isfinite(X), axis=1).sum())
        raise ValueError(
            f"X has missing or infinite values in {rows} of {X.shape[0]} rows; impute "
            "or drop them before adding noise."
        )
    if donor_columns not in DONOR_COLUMNS:
        raise ValueError(
            f"Unknown donor_columns={donor_columns!r}; choose one of {DONOR_COLUMNS}."
        )
    n, d = X.shape
    d_donor = X_donor.shape[1]
    if d_donor == 0:
        raise ValueError("X_donor has no features; a donor needs at least one column.")
    rng = np.random.default_rng(seed)
    if donor_columns == "cycle":
        sources = np.arange(d) % d_donor
    else:
        sources = rng.integers(0, d_donor, size=d)
    noise = np.empty((n, d))
    for j, c in enumerate(sources):
        values = X_donor[:, c]
        values = values[np.isfinite(values)]
        if values.size == 0:
            raise ValueError(
                f"Donor feature {c} has no finite value to draw noise from; drop it "
                "from X_donor."
            )
        noise[:, j] = values[rng.integers(0, values.size, size=n)]
    out = np.hstack([X, noise])
    return scale_to_unit_range(out) if scale else out
