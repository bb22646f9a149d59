"""Structured-config schemas: a typo in a protocol or kernel file fails at compose time.

The YAML files in ``conf/protocol``, ``conf/kernel`` and ``conf/dataset`` list their
schema first in their defaults (``- base_protocol``), so Hydra type-checks every key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from hydra.core.config_store import ConfigStore


@dataclass
class ProtocolConfig:
    """How a dataset is split, how hyper-parameters are chosen, and how X is prepared.

    kind
        ``nested_cv``: ``outer_folds``-fold CV, repeated ``repetitions`` times; inside
        each outer training set a grid search by ``inner_folds``-fold CV.
        ``repeated_splits``: ``repetitions`` random train/test splits of
        ``train_fraction``; the grid (if any) is searched by ``inner_folds``-fold CV.
        ``train_val_test``: as ``repeated_splits`` but the grid is searched on one
        validation split of ``val_fraction`` of the training part.
    preprocess
        ``none``, ``standardize`` or ``minmax_pm1`` (see :func:`datasets.preprocess`).
    preprocess_scope
        ``dataset``: fitted on the whole dataset before splitting, as the papers did
        ("We first standardized the data", mlsvm Sec. VII). ``fold``: fitted on each
        outer training part only and applied to its test part, the kernel rebuilt per
        fold (a deviation, offered to check its effect); the inner grid search reuses
        the outer training part's statistics.
    """

    name: str = "nested_cv"
    kind: str = "nested_cv"
    outer_folds: int = 10
    inner_folds: int = 10
    repetitions: int = 1
    train_fraction: float = 0.8
    val_fraction: float = 0.2
    stratified: bool = True
    shuffle: bool = True
    preprocess: str = "standardize"
    preprocess_scope: str = "dataset"
    check_psd: bool = True
    # kdml Sec. 5 "each class was equally represented": per repetition, every class
    # is subsampled (seeded) to the smallest class count before the split
    balance_classes: bool = False
    # a training part of this many points instead of train_fraction (kdml Figs. 3-4)
    train_size: Optional[int] = None  # noqa: UP045 (OmegaConf needs Optional)
    # store transform() of each test part in the record (kdml Figs. 3-4 2-D maps)
    record_embedding: bool = False
    description: str = ""


@dataclass
class KernelConfig:
    """One kernel of ``methods.kernels``; ``name`` is the id used in records/reports."""

    name: str = "linear"
    kernel: str = "linear"
    degree: int = 2
    sigma: float = 1.0
    normalize: Any = None
    bank: Any = None


@dataclass
class DatasetConfig:
    """A dataset of the registry by name; ``noise_donor`` builds wrbf's noisy set.

    With ``noise_donor`` set, the run uses ``name`` plus as many noise features drawn
    from the donor's empirical feature values (wrbf Sec. 5.1, ``datasets._noisy``).
    """

    name: str = "sonar"
    noise_donor: Optional[str] = None  # noqa: UP045 (OmegaConf needs Optional)


@dataclass
class SearchConfig:
    """Hyper-parameter grids by method id; ``default`` applies to unnamed methods."""

    grids: dict[str, Any] = field(default_factory=dict)
    scoring: str = "accuracy"


def register_configs() -> None:
    cs = ConfigStore.instance()
    cs.store(group="protocol", name="base_protocol", node=ProtocolConfig)
    cs.store(group="kernel", name="base_kernel", node=KernelConfig)
    cs.store(group="dataset", name="base_dataset", node=DatasetConfig)
