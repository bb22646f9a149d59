"""Last-resort source: fetch a dataset from OpenML by id (needs network).

Used only for specs with ``openml_fallback=True``, whose OpenML copy is the
same numeric table as the staged file. Labels keep OpenML's spelling (e.g.
sonar 'Mine'/'Rock' instead of PMLB's 0/1), so the loader compares class sizes
rather than label names for this source. Downloads go to ``<cache>/openml``
through the ``openml`` package (the OpenML project's own client).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from datasets._parsers import Parsed
from datasets._spec import DatasetSpec

__all__ = ["fetch"]


def fetch(spec: DatasetSpec, cache_dir: Path) -> Parsed:
    """Download ``spec.openml_id`` with ``openml.datasets.get_dataset``.

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
    ConnectionError
        OpenML cannot be reached; the message says the source needs network
        access and how to do without it.
    Exception
        Whatever the conversion raises; the loader wraps it into the list of
        places tried.
    """
    import openml

    # the client's cache root is global: point it to ours for this call only
    previous = getattr(openml.config, "_root_cache_directory", None)
    openml.config.set_root_cache_directory(str(cache_dir / "openml"))
    try:
        dataset = openml.datasets.get_dataset(
            spec.openml_id,
            download_data=True,
            download_qualities=False,
            download_features_meta_data=False,
        )
        frame, target, _, _ = dataset.get_data(
            target=dataset.default_target_attribute
        )
    except OSError as exc:  # requests' connection errors are OSErrors
        raise ConnectionError(
            f"OpenML dataset {spec.openml_id} needs network access "
            f"({type(exc).__name__}: {exc}); put the file in the mirror "
            "($DATA_MIRROR) instead, see MANIFEST.md"
        ) from exc
    finally:
        if previous is not None:
            openml.config.set_root_cache_directory(str(previous))
    non_numeric = [c for c in frame.columns if frame[c].dtype.kind not in "iufb"]
    if non_numeric:
        raise ValueError(f"non-numeric OpenML columns {non_numeric[:5]}")
    X = np.ascontiguousarray(frame.to_numpy(dtype=np.float64))
    y = np.array([str(v).strip() for v in np.asarray(target)], dtype=str)
    return Parsed(X, y, tuple(str(c) for c in frame.columns))
