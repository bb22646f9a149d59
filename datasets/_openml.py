"""Last-resort source: fetch a dataset from OpenML by id (needs network).

Used only for specs with ``openml_fallback=True``, whose OpenML copy is the
same numeric table as the staged file. Labels keep OpenML's spelling (e.g.
sonar 'Mine'/'Rock' instead of PMLB's 0/1), so the loader compares class sizes
rather than label names for this source. Downloads go to ``<cache>/openml``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from datasets._parsers import Parsed
from datasets._spec import DatasetSpec

__all__ = ["fetch"]


def fetch(spec: DatasetSpec, cache_dir: Path) -> Parsed:
    """Download ``spec.openml_id`` with scikit-learn's ``fetch_openml``.

    Parameters
    ----------
    spec : DatasetSpec
        Entry with ``openml_id`` set.
    cache_dir : Path
        Cache root; files go under ``cache_dir / "openml"``.

    Returns
    -------
    Parsed
        Numeric features (NaN where OpenML has missing values) and labels as
        strings.

    Raises
    ------
    Exception
        Whatever the download or conversion raises; the loader wraps it into
        the list of places tried.
    """
    from sklearn.datasets import fetch_openml

    bunch = fetch_openml(
        data_id=spec.openml_id,
        data_home=str(cache_dir / "openml"),
        as_frame=True,
        parser="auto",
    )
    frame = bunch.data
    non_numeric = [c for c in frame.columns if frame[c].dtype.kind not in "iufb"]
    if non_numeric:
        raise ValueError(f"non-numeric OpenML columns {non_numeric[:5]}")
    X = np.ascontiguousarray(frame.to_numpy(dtype=np.float64))
    y = np.array([str(v).strip() for v in bunch.target], dtype=str)
    return Parsed(X, y, tuple(str(c) for c in frame.columns))
