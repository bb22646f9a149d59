"""Structured-config schemas and checks: a bad config fails before any job starts.

The YAML files in ``conf/protocol``, ``conf/kernel`` and ``conf/dataset`` list their
schema first in their defaults (``- base_protocol``), so Hydra type-checks every key
and the enum fields (``protocol.kind``, ``preprocess``, ``preprocess_scope``) when it
composes a config, for every job of a sweep. Value checks that a type cannot express
(``kernel.sigma > 0``, fractions in (0, 1), non-empty grids) are in
:func:`validate_config`; the runner calls it on every composed config before a job
starts (``runners.callbacks.ConfigCheck`` for the jobs of a sweep).
"""

from __future__ import annotations

import difflib
import importlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, ListConfig, OmegaConf

from datasets._spec import PREPROCESSING_STEPS
from runners.protocols import PROTOCOL_KINDS, train_size_problem

PREPROCESS_SCOPES = ("dataset", "fold")


class _StrEnum(str, Enum):
    """Members that print as their plain names (in paths, messages and JSON)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


ProtocolKind = _StrEnum("ProtocolKind", {k: k for k in PROTOCOL_KINDS})
Preprocess = _StrEnum("Preprocess", {k: k for k in PREPROCESSING_STEPS})
PreprocessScope = _StrEnum("PreprocessScope", {k: k for k in PREPROCESS_SCOPES})
REFIT_PARTS = ("train_val", "train")
RefitOn = _StrEnum("RefitOn", {k: k for k in REFIT_PARTS})


class ConfigError(ValueError):
    """A composed config has a value no run can use; the message names key and fix."""


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
        ``nested_training_sets``: for checks; every training set ``nested_cv`` fits
        (each outer training part, then its inner ones), every grid point fitted on
        each, no selection (:func:`runners.protocols.evaluate_every_fit`).
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
    kind: ProtocolKind = ProtocolKind.nested_cv
    outer_folds: int = 10
    inner_folds: int = 10
    repetitions: int = 1
    train_fraction: float = 0.8
    val_fraction: float = 0.2
    stratified: bool = True
    shuffle: bool = True
    preprocess: Preprocess = Preprocess.standardize
    preprocess_scope: PreprocessScope = PreprocessScope.dataset
    check_psd: bool = True
    # kdml Sec. 5 "each class was equally represented": per repetition, every class
    # is subsampled (seeded) to the smallest class count before the split
    balance_classes: bool = False
    # a training part of this many points instead of train_fraction (kdml Figs. 3-4)
    train_size: Optional[int] = None  # noqa: UP045 (OmegaConf needs Optional)
    # store transform() of each test part in the record (kdml Figs. 3-4 2-D maps)
    record_embedding: bool = False
    # train_val: the selected model is refitted on train + validation (GridSearchCV's
    # refit); train: on the training part only (kind train_val_test; arbf check)
    refit_on: RefitOn = RefitOn.train_val
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


def _open_grids() -> DictConfig:
    """The root schema: ``search.grids`` stays open under Hydra's struct mode.

    Hydra closes every dict of a composed config, so adding a grid entry would need
    ``+search.grids.default.C=[1,10]``; an explicit struct flag on this node survives
    the merges, and the documented ``search.grids.default.C=[1,10]`` works as written
    (a typo elsewhere, e.g. ``search.gridz``, is still refused).
    """
    node = OmegaConf.create({"search": {"grids": {}}})
    OmegaConf.set_struct(node.search.grids, False)
    return node


def register_configs() -> None:
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=_open_grids())
    cs.store(group="protocol", name="base_protocol", node=ProtocolConfig)
    cs.store(group="kernel", name="base_kernel", node=KernelConfig)
    cs.store(group="dataset", name="base_dataset", node=DatasetConfig)


def _stray_keys(cfg: DictConfig | Mapping[str, Any]) -> list[str]:
    """Command-line ``+key=value`` / ``++key=value`` that add a key no run reads.

    Hydra refuses ``C=10`` (not in the config) and suggests ``+C=10``, which then
    composes and is read by nothing: the run would be the default's, silently. Keys
    the config files define (``split_start``, an experiment's ``checks``) are
    overridden without ``+`` and are not affected. The same holds for a key added
    to a section with a schema (``+protocol.outer_fold=2``): only its fields are
    read.
    """
    try:
        overrides = list(cfg["hydra"]["overrides"]["task"])
    except (KeyError, TypeError, AttributeError):
        # runners.run.compose_config keeps them as `overrides`, without `hydra`
        overrides = list(cfg.get("overrides") or [])
    out = []
    for text in overrides:
        key, sep, value = str(text).partition("=")
        if not sep or not key.startswith("+"):
            continue
        name = key.lstrip("+")
        base = name.split("@", 1)[0]  # group@package=choice
        section, _, field_name = base.partition(".")
        schema = _SCHEMAS.get(section)
        names = [f.name for f in fields(schema)] if schema is not None else []
        if names and field_name and field_name.split(".")[0] not in names:
            # Hydra answers `protocol.outer_fold=2` with "To append to your config
            # use +protocol.outer_fold=2", which composes, and the run then used
            # the protocol's own outer_folds without a word
            # the first part of a nested key: `+search.grid.default.C=[1]`
            first, dot, rest = field_name.partition(".")
            meant = difflib.get_close_matches(first, names, n=1)
            out.append(
                f"{text}: adds a key '{field_name}' that no run reads"
                + (
                    f" (did you mean {section}.{meant[0]}{dot}{rest}={value}?)"
                    if meant
                    else ""
                )
                + f"; the {section} section's keys are {', '.join(names)}"
            )
            continue
        if "." in base or "/" in base or base in _GROUPS or base in _file_keys():
            continue
        # a misspelt group or key (`datset=sonar`, for which Hydra suggests
        # `+datset=sonar`): named first
        meant = difflib.get_close_matches(base, sorted(_GROUPS | _file_keys()), n=1)
        out.append(
            f"{text}: adds a top-level key '{name}' that no run reads"
            + (f" (did you mean {meant[0]}={value}?)" if meant else "")
            + ". Estimator "
            f"parameters go under method (method.{name}={value}; ++method.{name}="
            f"{value} if the method's file lacks it), grid values under "
            f"search.grids.<method id>.{name}=[...]"
        )
    return out


# sections whose keys are a schema's fields (register_configs): an added key is read
# by nothing
_SCHEMAS: dict[str, type] = {
    "protocol": ProtocolConfig,
    "kernel": KernelConfig,
    "dataset": DatasetConfig,
    # `+search.grid.default.C=[1]` (Hydra's hint for a misspelt grids) ran the
    # experiment's own grid without a word
    "search": SearchConfig,
}

# config groups of conf/config.yaml (``+dataset_method=...`` selects a pair file)
_GROUPS = frozenset(
    {"dataset", "method", "kernel", "protocol", "paths", "experiment", "dataset_method"}
)


@lru_cache(maxsize=1)
def _file_keys() -> frozenset[str]:
    """Top-level keys that conf/config.yaml or a global-package file defines."""
    conf = Path(__file__).resolve().parent.parent / "conf"
    keys: set[str] = set()
    for path in conf.rglob("*.yaml"):
        text = path.read_text()
        if path.name == "config.yaml" or "# @package _global_" in text:
            node = OmegaConf.create(text)
            if isinstance(node, DictConfig):
                keys.update(str(k) for k in node.keys())
    return frozenset(keys)


def _dataset_name_problem(key: str, value: Any) -> str | None:
    """Why ``value`` is not a registry name (None when it is, or is an unset donor).

    ``dataset=sonr`` is refused by Hydra (no such file in conf/dataset/), but a name
    set as a value (``dataset.noise_donor=glas``, ``dataset.name=...``) reached the
    run, which wrote a failed record under the misspelt label; a published alias
    (``voting``) ran under its own label, beside the registry name's records.
    """
    from datasets._names import resolve
    from datasets._registry import REGISTRY
    from datasets.exceptions import UnknownDatasetError

    if value is None and key == "dataset.noise_donor":
        return None
    if isinstance(value, str) and value in REGISTRY:
        return None
    fix = "`python -m datasets` lists every name"
    if key == "dataset.noise_donor" and not str(value).strip():
        # the run took "" for no donor, under another record key than null's
        return f"{key}={value!r}: for no noise donor leave it out or set it to null"
    try:
        name = resolve(str(value))
    except UnknownDatasetError:
        close = difflib.get_close_matches(str(value).lower(), list(REGISTRY), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"{key}={value!r}: no such dataset{hint} ({fix})"
    return (
        f"{key}={value!r}: use the registry name {name!r}, under which records "
        f"and reports are filed ({fix})"
    )


def _problems(cfg: DictConfig | Mapping[str, Any]) -> list[str]:
    from methods.kernels import NORMALIZATIONS

    def section(name: str) -> Any:  # only the checked sections are resolved
        node = cfg.get(name)
        if isinstance(node, DictConfig):
            return OmegaConf.to_container(node, resolve=True, enum_to_str=True)
        return node if node is not None else {}

    out: list[str] = _stray_keys(cfg)
    d = section("dataset")
    for key in ("name", "noise_donor"):
        problem = _dataset_name_problem(f"dataset.{key}", d.get(key))
        if problem:
            out.append(problem)
    k = section("kernel")
    degree, sigma = k.get("degree"), k.get("sigma")
    if isinstance(degree, bool) or not isinstance(degree, int) or degree < 1:
        out.append(
            f"kernel.degree={degree!r}: the polynomial degree must be an integer >= 1"
        )
    if (
        isinstance(sigma, bool)
        or not isinstance(sigma, (int, float))
        or not math.isfinite(sigma)
        or sigma <= 0
    ):
        out.append(
            f"kernel.sigma={sigma!r}: the Gaussian width must be a number > 0 "
            "(k(x, z) = exp(-||x - z||^2 / (2 sigma^2)))"
        )
    if k.get("normalize") not in NORMALIZATIONS:
        allowed = ", ".join("null" if n is None else n for n in NORMALIZATIONS)
        out.append(
            f"kernel.normalize={k.get('normalize')!r}: use one of {allowed}"
        )
    p = section("protocol")
    for key, low in (("outer_folds", 2), ("inner_folds", 2), ("repetitions", 1)):
        value = p.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            out.append(f"protocol.{key}={value!r}: must be an integer >= {low}")
    for key in ("train_fraction", "val_fraction"):
        value = p.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            0 < value < 1
        ):
            out.append(f"protocol.{key}={value!r}: must be a fraction in (0, 1)")
    # whether it leaves a test part depends on the data: checked when split
    problem = train_size_problem(p.get("train_size"))
    if problem:
        out.append(problem)
    for key, allowed in (
        ("kind", PROTOCOL_KINDS),
        ("preprocess", PREPROCESSING_STEPS),
        ("preprocess_scope", PREPROCESS_SCOPES),
    ):
        if str(p.get(key)) not in allowed:
            value = str(p.get(key))
            out.append(f"protocol.{key}={value!r}: use one of {', '.join(allowed)}")
    refit_on = str(p.get("refit_on", "train_val"))
    if refit_on not in REFIT_PARTS:
        allowed = ", ".join(REFIT_PARTS)
        out.append(f"protocol.refit_on={refit_on!r}: use one of {allowed}")
    elif refit_on == "train" and str(p.get("kind")) != "train_val_test":
        out.append(
            "protocol.refit_on='train' needs protocol.kind=train_val_test (one "
            "validation split); use refit_on=train_val"
        )
    search = section("search")
    grids = (search.get("grids") if isinstance(search, Mapping) else None) or {}
    if not isinstance(grids, Mapping):
        out.append(f"search.grids={grids!r}: must map a method id to its grid")
        grids = {}
    for method, grid in grids.items():
        if grid is None:
            continue
        # a list of grids: selection in stages (protocols.sequential_search, arbf)
        stages = grid if isinstance(grid, (list, tuple)) and grid else [grid]
        for i, stage in enumerate(stages):
            where = f"search.grids.{method}" + (f"[{i}]" if stages is grid else "")
            if not isinstance(stage, Mapping):
                out.append(
                    f"{where}={stage!r}: must map a parameter to a list of values, "
                    f"e.g. search.grids.{method}.C=[1,10]"
                )
                continue
            for param, values in stage.items():
                if not isinstance(values, (list, tuple)) or len(values) == 0:
                    out.append(
                        f"{where}.{param}={values!r}: must be a non-empty list of "
                        f"values, e.g. search.grids.{method}.{param}=[1,10]"
                    )
    start = cfg.get("split_start", 0)
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        out.append(
            f"split_start={start!r}: must be an integer >= 0, the outer split this "
            "worker computes first (e.g. split_start=5: a second worker of 10 splits)"
            # README's `split_start=0,5` is a sweep, one job per worker; a list
            # (as a grid is written) is one job with a list
            + (
                f"; for one job per worker, sweep it: split_start="
                f"{','.join(str(v) for v in start)}"
                if isinstance(start, (list, tuple, ListConfig)) and start
                else ""
            )
        )
    # The run splits and records by int(seed): seed=1.5 would recompute seed 1 under
    # another key (a second record of the cell for the reports to choose between)
    # and seed=abc fail every job with a traceback after launch.
    seed = cfg.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        out.append(
            f"seed={seed!r}: must be an integer >= 0, the repetition id that seeds "
            "the outer splits with the dataset (e.g. seed=1, or seed=0,1,2 for three)"
        )
    return out


def grid_key(grids: Mapping[str, Any], method_id: object) -> str:
    """Which entry of ``search.grids`` a method is selected over: its own id's,
    else ``default``."""
    return str(method_id) if method_id in grids else "default"


def _targets(node: Any, where: str) -> list[tuple[str, str]]:
    """``(key, target)`` of every ``_target_`` string in a config section."""
    if isinstance(node, Mapping):
        target = node.get("_target_")
        own = [(f"{where}._target_", target)] if isinstance(target, str) else []
        return own + [
            t
            for k, v in node.items()
            if k != "_target_"
            for t in _targets(v, f"{where}.{k}")
        ]
    if isinstance(node, (list, tuple)):
        return [t for i, v in enumerate(node) for t in _targets(v, f"{where}[{i}]")]
    return []


def _import_problem(key: str, target: str) -> str | None:
    """Why ``target`` cannot be imported, or None; found the way Hydra's
    ``instantiate`` looks it up (the first name a module, each next one an
    attribute or else a submodule)."""
    if "${" in target:
        return None  # an interpolation: resolved, and judged, by the run
    parts = target.split(".")
    path_hint = (
        f"A module of your own is imported from the Python path: put the folder "
        f"that holds {parts[0]}.py (or the package {parts[0]}/) on PYTHONPATH, e.g. "
        f"`PYTHONPATH=$PWD kml-run ...` run from that folder"
    )
    obj: Any = None
    for i, part in enumerate(parts):
        if i > 0 and hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        name = ".".join(parts[: i + 1])
        try:
            obj = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a module that `name` itself imports is missing
                return f"{key}={target}: importing {name} failed: {exc}"
            if i == 0:
                return f"{key}={target}: no module named {name!r}. {path_hint}"
            return f"{key}={target}: {'.'.join(parts[:i])} has no {part!r}"
        except Exception as exc:  # noqa: BLE001 (the user's module raised: say so)
            why = f"{type(exc).__name__}: {exc}"
            return f"{key}={target}: importing {name} failed: {why}"
    return None


def _estimator_problems(cfg: DictConfig | Mapping[str, Any]) -> list[str]:
    """Parameters the method's estimator refuses, in ``method.*`` or in its grid.

    First, every ``_target_`` of the method section must import (a module of one's
    own needs its folder on ``PYTHONPATH``): one that does not is named, with the
    fix, instead of failing every job after launch.
    The estimator is built as the run builds it (``instantiate(cfg.method)``) and
    checked with scikit-learn's own parameter constraints (``_parameter_constraints``)
    for the config's values and for every grid value, so that
    ``search.grids.default.C=[-1]`` or ``method.C=abc`` stops the sweep before any
    job instead of failing every job. Only the estimator's own parameters are
    judged: a nested learner's values (``metric_learner__sigma``) are checked, if
    at all, when it is fitted, and a grid name only for existing. Errors other than
    a refused parameter (an estimator that declares no constraints, a target that
    is not an estimator) are left to the run.
    """
    method = cfg.get("method") if isinstance(cfg, Mapping) else None
    if not isinstance(method, (DictConfig, Mapping)) or "_target_" not in method:
        return []
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    plain = (
        OmegaConf.to_container(method, resolve=False)
        if isinstance(method, DictConfig)
        else method
    )
    unimportable = [
        why
        for key, target in _targets(plain, "method")
        if (why := _import_problem(key, target))
    ]
    if unimportable:  # instantiate would fail on the first, after a long traceback
        return unimportable
    name = str(method["_target_"]).rsplit(".", 1)[-1]
    try:
        estimator = instantiate(method)
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, TypeError) and "unexpected keyword" in str(cause):
            bad = re.search(r"argument '(\w+)'", str(cause))
            key = f"method.{bad.group(1)}" if bad else "method"
            return [f"{key}: not a parameter of {name} ({cause})"]
        return []
    except Exception:  # noqa: BLE001 (any other failure is the run's to report)
        return []
    out: list[str] = []
    for problem in (
        _features_to_a_gram_method(cfg, estimator, name),
        _nothing_to_embed(cfg, estimator, name),
    ):
        if problem:
            out.append(problem)
    try:
        _check_estimator(cfg, estimator, name, out)
    except Exception:  # noqa: BLE001 (a target that is no scikit-learn estimator,
        pass  # a constructor clone() refuses, ...: left to the run, as before)
    return out


def _features_to_a_gram_method(
    cfg: DictConfig | Mapping[str, Any], estimator: Any, name: str
) -> str | None:
    """Why a ``kernel: none`` run would hand features to a Gram-matrix estimator.

    ``kernel=none`` (wrbf, arbf, kdml, lmnnmkl's 1-NN) gives the method the raw
    features and leaves its ``kernel`` parameter as its config gives it; a method
    whose config says ``"precomputed"`` (the README's ``Mine``, LMNN_H) would fail
    every job after launch with scikit-learn's "X should be a square kernel
    matrix", which names neither the kernel section nor the fix.

    Parameters
    ----------
    cfg : DictConfig or Mapping
        The composed run config.
    estimator : object
        The method's estimator, built from ``cfg.method``.
    name : str
        The estimator's class name, for the message.

    Returns
    -------
    str or None
        The problem with its fix, or None.
    """
    kernel = cfg.get("kernel")
    if not isinstance(kernel, Mapping) or str(kernel.get("kernel")) != "none":
        return None
    try:
        own = estimator.get_params(deep=False).get("kernel")
    except Exception:  # noqa: BLE001 (not a scikit-learn estimator: left to the run)
        return None
    if own != "precomputed":
        return None
    return (
        f"method.kernel='precomputed' with kernel=none: kernel=none hands {name} "
        "the features, not a Gram matrix, and leaves its `kernel` as its config "
        "gives it. To give it the features, give it a kernel of its own (`kernel: "
        "rbf` in its config, or ++method.kernel=rbf); to give it a Gram matrix, "
        "choose one from conf/kernel/ (e.g. kernel=linear)"
    )


def _nothing_to_embed(
    cfg: DictConfig | Mapping[str, Any], estimator: Any, name: str
) -> str | None:
    """Why a ``protocol.record_embedding`` run could not map its test points.

    kdml Figs. 3-4 (``experiment=kdml_fig3``) record each test point's 2-D image,
    through the method's ``transform`` or its fitted metric learner (MetricKNN's
    ``metric_learner_``). A classifier with neither (the README's ``Mine``) fitted
    and predicted every split, then failed with "'Mine' object has no attribute
    'metric_learner_'", which names neither the protocol key nor the fix.
    """
    protocol = cfg.get("protocol") if isinstance(cfg, Mapping) else None
    if not isinstance(protocol, Mapping) or not protocol.get("record_embedding"):
        return None
    if hasattr(estimator, "transform"):
        return None
    try:
        if estimator.get_params(deep=False).get("metric_learner") is not None:
            return None
    except Exception:  # noqa: BLE001 (not a scikit-learn estimator: left to the run)
        return None
    return (
        f"protocol.record_embedding=true: each split records the test points' "
        f"2-D map (kdml Figs. 3-4), through the method's transform or its "
        f"metric_learner, and {name} has neither: compare a classifier on the "
        "accuracy figures (experiment=kdml_fig1 or kdml_fig2), or give it a "
        "transform"
    )


def _refused(est: Any, param: str | None = None) -> str | None:
    """scikit-learn's parameter check of ``est``, for classes that declare one.

    With ``param``, that parameter alone: a grid value is judged on its own, not
    refused for another parameter of the config that is already reported.
    """
    from sklearn.utils._param_validation import (
        InvalidParameterError,
        validate_parameter_constraints,
    )

    constraints = getattr(type(est), "_parameter_constraints", None)
    if not isinstance(constraints, dict):
        return None  # a plain estimator: nothing declared to check against
    try:
        if param is None:
            est._validate_params()
        elif param in constraints:  # a nested learner's value: not judged here
            validate_parameter_constraints(
                {param: constraints[param]},
                {param: est.get_params(deep=False)[param]},
                caller_name=type(est).__name__,
            )
    except InvalidParameterError as exc:
        return str(exc)
    return None


def _check_estimator(
    cfg: DictConfig | Mapping[str, Any], estimator: Any, name: str, out: list[str]
) -> None:
    """Append to ``out`` what :func:`_estimator_problems` promises."""
    from sklearn.base import clone

    why = _refused(estimator)
    if why:
        bad = re.search(r"The '(\w+)' parameter", why)
        out.append(f"method{'.' + bad.group(1) if bad else ''}: {why}")
    # the LMNN-MKL estimators refuse lmnn_params keys they set themselves
    # (method.lmnn_params='{n_neighbors: 3}'): a check no constraint expresses
    check_lmnn_params = getattr(estimator, "_check_lmnn_params", None)
    if callable(check_lmnn_params):
        try:
            check_lmnn_params()
        except ValueError as exc:
            out.append(f"method.lmnn_params: {exc}")
    grids = cfg["search"]["grids"] if "search" in cfg else {}
    grids = OmegaConf.to_container(grids, resolve=True) if isinstance(
        grids, DictConfig) else dict(grids or {})
    # `method_id` interpolates Hydra's runtime choices, which a callback's config
    # holds under `hydra` but cannot resolve through the interpolation
    method_id = OmegaConf.select(cfg, "hydra.runtime.choices.method", default=None)
    if method_id is None:
        try:
            method_id = cfg.get("method_id")
        except Exception:  # noqa: BLE001 (an unresolvable id: leave grids to the run)
            return
    key = grid_key(grids, method_id)
    grid = grids.get(key) or {}
    stages = grid if isinstance(grid, list) else [grid]
    why = _unscorable(cfg, estimator, name, key, grid)
    if why:
        out.append(why)
    valid = sorted(estimator.get_params(deep=True))
    for stage in stages:
        if not isinstance(stage, Mapping):
            continue  # reported by _problems
        for param, values in stage.items():
            if param not in valid:
                out.append(
                    f"search.grids.{key}.{param}: not a parameter of {name} "
                    f"(its parameters: {', '.join(p for p in valid if '__' not in p)})"
                )
                continue
            for value in values if isinstance(values, (list, tuple)) else []:
                trial = clone(estimator).set_params(**{param: value})
                why = _refused(trial, param)
                if why:
                    out.append(f"search.grids.{key}.{param}={value!r}: {why}")
                    break


def _unscorable(
    cfg: DictConfig | Mapping[str, Any], estimator: Any, name: str, key: str,
    grid: Any,
) -> str | None:
    """Why the search's scorer cannot score the method's inner fits, or None.

    ``search.scoring=roc_auc`` (arbf Table 1) scores each candidate of a grid by
    its decision values (``decision_function`` or ``predict_proba``); a method
    with neither (the README's ``Mine``, given a grid) failed every job after
    launch with scikit-learn's "Mine has none of the following attributes".
    A grid of one candidate, or none, is fitted without scoring. A scorer name
    scikit-learn does not know (``search.scoring=auc``) is named, whatever the grid.
    """
    search = cfg.get("search") if isinstance(cfg, Mapping) else None
    scoring = search.get("scoring") if isinstance(search, Mapping) else None
    if not isinstance(scoring, str):
        return None
    from sklearn.metrics import get_scorer_names

    names = sorted(get_scorer_names())
    if scoring not in names:  # every job failed on scikit-learn's list of 50 names
        within = [n for n in names if scoring.lower() in n]
        close = (within + difflib.get_close_matches(scoring, names, n=3))[:3]
        return (
            f"search.scoring={scoring}: not a scikit-learn scorer"
            + (f" (did you mean {' or '.join(dict.fromkeys(close))}?)" if close else "")
            + "; the papers' measures are accuracy and roc_auc (arbf), and "
            "sklearn.metrics.get_scorer_names() lists the others"
        )
    if isinstance(grid, list):
        searched = len(grid) > 0
    elif isinstance(grid, Mapping):
        sizes = [len(v) if isinstance(v, (list, tuple)) else 1 for v in grid.values()]
        searched = math.prod(sizes) > 1
    else:
        return None
    if not searched:
        return None
    try:
        from sklearn.metrics import get_scorer

        response = get_scorer(scoring)._response_method
    except Exception:  # noqa: BLE001 (an unknown scorer, or another sklearn)
        return None
    needs = (response,) if isinstance(response, str) else tuple(response)
    # predict is every classifier's; only decision values are ever missing
    if needs == ("predict",) or any(hasattr(estimator, m) for m in needs):
        return None
    return (
        f"search.scoring={scoring}: the search over search.grids.{key} scores each "
        f"candidate by {' or '.join(needs)}, and {name} has "
        f"{'neither' if len(needs) > 1 else 'no ' + needs[0]}: give {name} "
        f"{'one' if len(needs) > 1 else 'it'}, select by accuracy "
        "(search.scoring=accuracy), or fix its parameters in its config instead "
        f"of the grid (search.grids.{key}={{}})"
    )


def _method_id(cfg: DictConfig | Mapping[str, Any]) -> Any:
    """The method's id (its config file's name), or None when it cannot be read.

    ``method_id`` interpolates Hydra's runtime choices, which a callback's config
    holds under ``hydra`` but cannot resolve through the interpolation.
    """
    method_id = OmegaConf.select(cfg, "hydra.runtime.choices.method", default=None)
    if method_id is None:
        try:
            method_id = cfg.get("method_id")
        except Exception:  # noqa: BLE001 (an unresolvable id)
            return None
    return method_id


def grid_set_overrides(
    cfg: DictConfig | Mapping[str, Any], overrides: Sequence[str]
) -> list[tuple[str, str]]:
    """``method.<param>`` overrides that the run's search grid replaces.

    The grid search sets each of its parameters in every fit, so ``method.C=100``
    under a grid over ``C`` changes nothing but the record's key. Returns
    ``(override, grid key)`` pairs, e.g. ``("method.C=100",
    "search.grids.default.C")``; a nested parameter
    (``method.metric_learner.estimator.n_estimators``) is matched to its grid name
    (``metric_learner__estimator__n_estimators``).
    """
    method_id = _method_id(cfg)
    search = cfg.get("search") if isinstance(cfg, Mapping) else None
    grids = search.get("grids") if isinstance(search, Mapping) else None
    if method_id is None or not isinstance(grids, Mapping):
        return []
    if isinstance(grids, DictConfig):
        grids = OmegaConf.to_container(grids, resolve=False)
    key = grid_key(grids, method_id)
    grid = grids.get(key) or {}
    stages = grid if isinstance(grid, list) else [grid]
    out = []
    for line in overrides:
        name, sep, _ = str(line).partition("=")
        name = name.lstrip("+")
        if not sep or not name.startswith("method.") or "@" in name:
            continue  # deletions (~method.C) keep the file's value: nothing to say
        param = name[len("method.") :].replace(".", "__")
        where = [
            f"search.grids.{key}" + (f"[{i}]" if len(stages) > 1 else "") + f".{param}"
            for i, stage in enumerate(stages)
            if isinstance(stage, Mapping) and param in stage
        ]
        out += [(str(line), w) for w in where]
    return out


def grid_set_warnings(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """One warning per override of :func:`grid_set_overrides` (pairs of several
    jobs: every grid key that replaces the override is named in its line)."""
    keys: dict[str, list[str]] = {}
    for line, key in pairs:
        if key not in keys.setdefault(line, []):
            keys[line].append(key)
    out = []
    for line, where in keys.items():
        param = line.partition("=")[0].lstrip("+")[len("method.") :]
        value = line.partition("=")[2]
        example = next((k for k in where if "[" not in k), None)
        hint = f", e.g. {example}=[{value}]" if example else ""
        out.append(
            f"{line} is not used: the search grid sets {param} in every fit "
            f"({', '.join(where)}); override the grid instead{hint}"
        )
    return out


def validate_config(cfg: DictConfig | Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` naming every bad key of a composed run config.

    Checks what the schema's types cannot: the kernel (``degree`` an integer >= 1,
    ``sigma`` > 0, ``normalize`` known), the protocol (folds >= 2, repetitions >= 1,
    fractions in (0, 1), ``train_size`` a count >= 1, the enum fields) and the
    grids (each value a non-empty list). The runner builds the Gram matrix itself,
    so the estimator's own parameter checks never see the kernel section.
    """
    problems = _problems(cfg)
    if not problems:  # a config with bad sections may not instantiate
        problems = _estimator_problems(cfg)
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems))
