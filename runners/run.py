"""Hydra entry point: one job = one (experiment, dataset, method, kernel, seed) run.

``kml-run experiment=mlsvm_table1`` (or ``python -m runners.run ...``) runs the whole
sweep of the experiment file through Hydra multirun (joblib launcher: local worker
processes). Each job loads its dataset, builds the kernel once, evaluates the method by
the protocol and writes one record to the result store. A job whose record is finished
returns at once, so a killed sweep resumes where it stopped; ``force=true`` recomputes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import hydra
import numpy as np
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf, open_dict
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from runners.callbacks import SWEEP_ID_ENV
from runners.checkpoints import (
    SplitCheckpoints,
    checkpoint_dir,
    data_digest,
    environment_stamp,
)
from runners.config_schema import (
    PREPROCESS_SCOPES,
    grid_key,
    register_configs,
    validate_config,
)
from runners.launch_compose import install as memoize_composition
from runners.launch_local import register as register_worker_count
from runners.launch_ray import register as register_absolute_path
from runners.measures import progress_measure
from runners.numba_cache import announce_compilation
from runners.protocols import evaluate, fold_seed_parts, outer_splits
from runners.provenance import code_version, now_iso, outside_sources, provenance
from runners.split_claims import CellFinishedElsewhere, SplitClaims, shared_splits
from runners.store import (
    FINISHED,
    ResultStore,
    UnstorableRecordError,
    config_key,
    nonfinite_results,
)

log = logging.getLogger("kml")
register_configs()
register_worker_count()  # ${kml_workers:...} of conf/hydra/launcher/local.yaml
register_absolute_path()  # ${kml_abspath:...} of conf/hydra/launcher/ray.yaml
memoize_composition()  # one Hydra composition per distinct config (issue 14)

CONF_DIR = str(Path(__file__).resolve().parent.parent / "conf")


class SkipRun(Exception):
    """The combination does not apply (e.g. SVM-FDA with a non-linear kernel)."""


def run_label(method: str, kernel: str, params: Mapping[str, Any] | None = None) -> str:
    """``svm[kernel=linear]``: the id plus sorted key=value pairs (benchopt style)."""
    items = {"kernel": kernel, **(params or {})}
    inner = ",".join(f"{k}={items[k]}" for k in sorted(items))
    return f"{method}[{inner}]"


def key_config(cfg: DictConfig) -> dict[str, Any]:
    """The part of the resolved config that determines the numbers of a run."""
    # enum_to_str: protocol.kind & co. are enums; keys stay those of plain strings
    c = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    return {
        "experiment": c["experiment"],
        "dataset": c["dataset"],
        "method_id": c["method_id"],
        "method": c["method"],
        "kernel": c["kernel"],
        # the description is prose: editing it must not invalidate finished runs
        "protocol": {k: v for k, v in c["protocol"].items() if k != "description"},
        "grid": method_grid(cfg),
        # only when not the default, so records of accuracy-selected runs keep keys
        **({"scoring": c["search"]["scoring"]}
           if c["search"]["scoring"] != "accuracy" else {}),
        "seed": c["seed"],
        "code_version": code_version(),
        # a method of one's own (outside methods/): its file's digest
        **({"method_sources": src} if (src := outside_sources(c["method"])) else {}),
    }


def method_grid(cfg: DictConfig) -> dict[str, list[Any]] | list[dict[str, list[Any]]]:
    grids = OmegaConf.to_container(cfg.search.grids, resolve=True, enum_to_str=True)
    grids = grids or {}
    grid = grids.get(grid_key(grids, cfg.method_id), {})
    if isinstance(grid, list):  # selection in stages (protocols.sequential_search)
        return [{k: list(v) for k, v in stage.items()} for stage in grid]
    return {k: list(v) for k, v in (grid or {}).items()}


def dataset_label(dcfg: Mapping[str, Any]) -> str:
    """``iris`` or, for a wrbf noisy set, ``iris+glass`` (original + noise donor)."""
    donor = dcfg.get("noise_donor")
    return f"{dcfg['name']}+{donor}" if donor else str(dcfg["name"])


def _load_data(cfg: DictConfig, sources: dict[str, str] | None = None):
    """``(label, X, y)`` of the run's dataset, preprocessed as its scope says.

    ``sources``, when given, receives where each dataset came from (the loader's
    ``source``: mirror, cache, package or OpenML), the noise donor's too.
    """
    import datasets

    def available(name: str):
        spec = datasets.REGISTRY[datasets.resolve(name)]
        reason = getattr(spec, "unavailable_reason", None)
        if reason:
            raise SkipRun(f"dataset {spec.name!r} is not available: {reason}")
        return spec

    scope = cfg.protocol.preprocess_scope
    if scope not in PREPROCESS_SCOPES:
        raise ValueError(
            f"protocol.preprocess_scope={scope!r}: use one of {list(PREPROCESS_SCOPES)}"
        )
    spec = available(cfg.dataset.name)
    ds = datasets.load(spec.name, mirror=cfg.paths.data_mirror)
    if sources is not None:
        sources[spec.name] = ds.source
    X = np.asarray(ds.X, dtype=np.float64)
    donor = cfg.dataset.get("noise_donor")
    if donor:
        from datasets._noisy import make_noisy, noise_seed

        dspec = available(donor)
        if dspec.name == spec.name:
            raise SkipRun("a dataset is not its own noise donor (wrbf Sec. 5.1)")
        if scope == "fold" and cfg.protocol.preprocess == "none":
            raise ValueError(
                "a noisy dataset is scaled to [-1, 1] on all rows when built (wrbf "
                "Sec. 5.1); with protocol.preprocess_scope=fold set "
                "protocol.preprocess=minmax_pm1 so that the scaling is fitted on each "
                "training part instead"
            )
        donor_ds = datasets.load(dspec.name, mirror=cfg.paths.data_mirror)
        if sources is not None:
            sources[dspec.name] = donor_ds.source
        X_donor = donor_ds.X
        X = make_noisy(
            X, X_donor, seed=noise_seed(spec.name, dspec.name), scale=scope == "dataset"
        )
    if scope == "dataset":
        X = datasets.preprocess(X, cfg.protocol.preprocess)
    # scope "fold": _run fits the step on each outer training part
    return dataset_label(cfg.dataset), X, np.asarray(ds.y)


def _fold_input(
    estimator: Any,
    X: np.ndarray,
    split: tuple[int, int, np.ndarray, np.ndarray],
    step: str,
    kcfg: Mapping[str, Any],
    check_psd: bool,
):
    """``(estimator, input)`` of one outer split, preprocessed on its training part.

    ``protocol.preprocess_scope=fold``: the step (e.g. standardization) is fitted on
    the outer training rows only and applied to all rows, then the kernel is built
    from them; the inner grid search reuses the outer training part's statistics.
    """
    import datasets

    train = split[2]
    Xf = datasets.make_preprocessor(step).fit(X[train]).transform(X)
    return build_input(clone(estimator), Xf, kcfg, check_psd)


def feature_space_kernels(cls: type) -> tuple[str, ...] | None:
    """The kernels of a method that cannot take a precomputed Gram matrix, else None.

    SVM-FDA whitens the original features (mlsvm eq. 18) and so declares
    ``supported_kernels = ("linear",)`` without "precomputed"; every other kernel
    method gets the runner's Gram matrix.
    """
    supported = getattr(cls, "supported_kernels", None)
    if supported is None or "precomputed" in supported:
        return None
    return tuple(supported)


def build_input(
    estimator: Any, X: np.ndarray, kcfg: Mapping[str, Any], check_psd: bool
):
    """What the estimator is fitted on: raw features or a precomputed kernel.

    - ``kernel: none``: raw features; the method builds its own kernel (WRBF).
    - a method with ``supported_kernels`` works in feature space (SVM-FDA): raw
      features, and the kernel must be one it supports.
    - ``bank``: a stack of Gram matrices (n, n, n_kernels) for MKL methods.
    - otherwise: the Gram matrix of the kernel, computed once for all folds.
    """
    from methods.kernels import bank_specs, kernel_stack, pairwise_kernel

    VIEW_BANKS = {}
    if kcfg.get("bank"):  # a one-kernel run skips the metric-learning import (~35 ms)
        from methods.metric_learning._view_kernels import VIEW_BANKS, view_kernel_stack

    cls = type(estimator)
    supported = feature_space_kernels(cls)
    params = estimator.get_params()
    if kcfg["kernel"] == "none":
        return estimator, X
    if supported is not None:
        if kcfg["kernel"] not in supported:
            name = getattr(cls, "paper_name", cls.__name__)
            raise SkipRun(
                f"{name} works in the original feature space only (kernels "
                f"{list(supported)}); kernel {kcfg['name']!r} does not apply"
            )
        estimator.set_params(kernel=kcfg["kernel"])
        return estimator, X
    _require_pairwise(estimator, kcfg["name"])  # before the kernel is computed
    if kcfg.get("bank") in VIEW_BANKS:  # lmnnmkl Sec. 6.2: one kernel per source
        K = view_kernel_stack(X, VIEW_BANKS[kcfg["bank"]])
        grams = [K[:, :, k] for k in range(K.shape[2])]
    elif kcfg.get("bank"):
        K = kernel_stack(X, None, bank_specs(kcfg["bank"], kcfg["normalize"]))
        grams = [K[:, :, k] for k in range(K.shape[2])]
    else:
        K = pairwise_kernel(
            X,
            kernel=kcfg["kernel"],
            degree=kcfg["degree"],
            sigma=kcfg["sigma"],
            normalize=kcfg["normalize"],
        )
        grams = [K]
    if check_psd:
        from methods import check_psd_kernel

        for k, G in enumerate(grams):
            check_psd_kernel(
                G,
                what=f"kernel {kcfg['name']!r}"
                + (f" (bank member {k})" if len(grams) > 1 else ""),
            )
    # Checked just above, or the protocol opted out: no estimator re-checks it per
    # fit, nor one nested in it (MetricKNN's LMNN or ITML on the Gram matrix).
    estimator.set_params(
        **{k: False for k in params if k == "check_psd" or k.endswith("__check_psd")}
    )
    estimator.set_params(kernel="precomputed")
    return estimator, K


def _require_pairwise(estimator: Any, kernel_name: str) -> None:
    """A Gram matrix goes only to an estimator that says it takes one.

    Model selection slices a pairwise input's rows and columns and anything else's
    rows only; an estimator without scikit-learn's ``pairwise`` tag would be fitted
    on a (n_train, n) slice and fail, or worse, run on the wrong columns.
    """
    import copy

    from sklearn.utils import get_tags

    name = type(estimator).__name__
    if "kernel" not in estimator.get_params(deep=False):
        raise ValueError(
            f"{name} is given the precomputed Gram matrix of kernel {kernel_name!r} "
            "but has no `kernel` parameter, which the runner sets to 'precomputed'. "
            f"Give {name}.__init__ a `kernel` argument (stored as self.kernel) and "
            "set tags.input_tags.pairwise = (self.kernel == 'precomputed') in its "
            "__sklearn_tags__, as scikit-learn's SVC does, or run it with "
            "kernel=none to give it the features."
        )
    probe = copy.copy(estimator)  # the tag follows kernel="precomputed", set later
    probe.set_params(kernel="precomputed")
    if not get_tags(probe).input_tags.pairwise:
        raise ValueError(
            f"{name} is given the precomputed Gram matrix of kernel {kernel_name!r} "
            "but does not declare it pairwise, so cross-validation would slice only "
            f"its rows. Make {name}.__sklearn_tags__ set tags.input_tags.pairwise = "
            "(self.kernel == 'precomputed'), as scikit-learn's SVC does, or run it "
            "with kernel=none to give it the features."
        )


def _progress_line(
    cfg: DictConfig,
    label: str,
    status: str,
    seconds: float,
    extra: str = "",
    outcome: Mapping[str, Any] | None = None,
) -> None:
    from runners.callbacks import record_progress, total_jobs

    done = record_progress(
        outcome or f"{status} {dataset_label(cfg.dataset)} {label}"
    )
    counter = "" if done is None else f"[{done}/{total_jobs() or '?'}] "
    log.info(
        "%s%-6s %-18s %-26s %6.1fs %s",
        counter,
        status,
        dataset_label(cfg.dataset),
        label,
        seconds,
        extra,
    )


def shown_label(cfg: DictConfig, label: str) -> str:
    """The label a progress or FAILED line shows: ``label`` plus ``seed=N`` when an
    override chose the seed.

    A seed sweep's jobs share dataset, method and kernel; without the seed their
    lines differ only by their numbers, and a failure could not be told apart.
    """
    for override in run_overrides(cfg):
        if override.lstrip("+~").split("=", 1)[0] == "seed":
            return f"{label} seed={cfg.seed}"
    return label


#: The longest reason a progress-file outcome keeps (the record keeps all of it).
REASON_CHARS = 500


def short_reason(reason: str) -> str:
    """``reason`` cut to :data:`REASON_CHARS` for the summary, saying so when cut."""
    if len(reason) <= REASON_CHARS:
        return reason
    return reason[: REASON_CHARS - 40].rstrip() + " ... (cut: the record has it all)"


def run_overrides(cfg: DictConfig) -> list[str]:
    """The overrides that made this run's config, as Hydra gives them.

    A Hydra job's task overrides (a sweep job's include the experiment's swept
    values); for :func:`compose_config`, the overrides it was given.
    """
    given = cfg.get("overrides")
    if given is not None:
        return [str(o) for o in given]
    from hydra.core.hydra_config import HydraConfig

    if HydraConfig.initialized():
        return [str(o) for o in HydraConfig.get().overrides.task]
    return []


SHARED = "finished by a worker sharing the cell"
_PROCESS_SWEEP = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


def sweep_id() -> str:
    """This sweep's id (``KML_SWEEP_ID``, set by the parent for its workers), else
    one of this process."""
    return os.environ.get(SWEEP_ID_ENV) or _PROCESS_SWEEP


def run_job(cfg: DictConfig) -> dict[str, Any]:
    """Run one configuration and return its record (from the store when finished)."""
    return run_job_outcome(cfg)[0]


def interrupted_by_user(exc: BaseException) -> KeyboardInterrupt | None:
    """The ``KeyboardInterrupt`` in ``exc``'s chain of causes, or None.

    numba turns one raised inside a compiled function's call into Python into
    ``SystemError: CPUDispatcher(...) returned a result with an exception set``,
    with the interrupt (Ctrl-C, or :class:`Terminated`) as its cause.
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def run_job_outcome(cfg: DictConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one configuration: its record, and the outcome line of the summary.

    The outcome holds ``status`` (``ok``, ``cached``, ``skip`` or ``error``),
    ``dataset``, ``label``, ``reason`` and ``record`` (the record's path).
    """
    validate_config(cfg)
    store = ResultStore(cfg.paths.results)
    kc = key_config(cfg)
    key = config_key(kc)
    label = run_label(cfg.method_id, cfg.kernel.name)
    data_label = dataset_label(cfg.dataset)
    path = store.path(cfg.experiment, data_label, label, key)
    shown = shown_label(cfg, label)
    outcome = {"dataset": data_label, "label": shown, "record": str(path)}
    if not cfg.force:
        record = store.finished(path)
        if record is not None:
            _remember(cfg, path)
            outcome.update(status="cached", reason=record.get("reason", ""))
            # the same number as the run's own line (README: the experiment's
            # measure), so a rerun of a sweep still shows every cell's result
            extra = (
                progress_measure(record, str(cfg.search.scoring))
                if record.get("status") == "ok"
                else record.get("reason", "")
            )
            _progress_line(cfg, shown, "cached", 0.0, extra, outcome=outcome)
            return record, outcome
    t_start = time.perf_counter()
    record: dict[str, Any] = {
        "key": key,
        "label": label,
        "experiment": cfg.experiment,
        "paper": cfg.paper,
        "artifact": cfg.artifact,
        "dataset": data_label,
        "original_dataset": cfg.dataset.name,
        "noise_donor": cfg.dataset.get("noise_donor"),
        "method": cfg.method_id,
        "method_class": cfg.method._target_,
        "kernel": cfg.kernel.name,
        "protocol": cfg.protocol.name,
        "seed": int(cfg.seed),
        "overrides": run_overrides(cfg),
        "config": kc,
        "started": now_iso(),
        "provenance": provenance(),
    }
    checkpoints = SplitCheckpoints(checkpoint_dir(path), key, environment_stamp())
    if cfg.force:
        # recompute means every split, not those an earlier run left; the jobs of
        # this sweep that share the cell use each other's (runners.checkpoints)
        checkpoints.stamp["force"] = record["force_sweep"] = sweep_id()

    def shared_finish(done: Mapping[str, Any]) -> bool:
        # a record of a worker sharing the cell (runners.split_claims); under force,
        # only one of this sweep counts, not the one force replaces
        return done.get("status") in FINISHED and (
            not cfg.force or done.get("force_sweep") == record["force_sweep"]
        )

    def finished_elsewhere() -> bool:
        done = store.finished(path)
        return done is not None and shared_finish(done)

    # what the record says before the run: an error record that cannot hold the
    # run's results is made of it (below)
    identity = dict(record)
    try:
        announce_compilation()
        with threadpool_limits(limits=int(cfg.blas_threads)):
            record.update(_run(cfg, kc, checkpoints, finished_elsewhere))
    except CellFinishedElsewhere:
        _remember(cfg, path)
        outcome.update(status="cached", reason=SHARED)
        _progress_line(
            cfg, shown, "cached", time.perf_counter() - t_start, SHARED,
            outcome=outcome,
        )
        return store.load(path), outcome
    except SkipRun as exc:
        record.update(status="skip", reason=str(exc))
    except Exception as exc:  # recorded, kept out of the cache, rerun next time
        interrupt = interrupted_by_user(exc)
        if interrupt is not None:
            # Ctrl-C inside a compiled solver's call back into Python reaches here
            # as numba's SystemError: an interrupt, not a failed run to record
            # while the sweep goes on
            raise interrupt from exc
        if finished_elsewhere():  # e.g. its folder cleared under it: keep that record
            log.warning(
                "%s %s: %s; the cell was finished by a worker sharing it",
                data_label, shown, exc,
            )
            outcome.update(status="cached", reason=SHARED)
            return store.load(path), outcome
        record.update(
            status="error",
            reason=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
        )
    else:
        bad = nonfinite_results(record)
        if bad:
            # JSON stores NaN/inf as null: an ok record would show a missing number
            # where the run produced a wrong one (runners.store.RESULT_FIELDS)
            record.update(
                status="error",
                reason=f"non-finite result (NaN or infinity) in {', '.join(bad)}; "
                "stored as null",
            )
    record["finished"] = now_iso()
    record["wall_seconds"] = time.perf_counter() - t_start
    if checkpoints.n_loaded:
        # wall_seconds is this process's time only; the splits an earlier, killed
        # run or a worker sharing the cell finished came from their checkpoints
        # (their own times are in folds)
        record["resumed_splits"] = checkpoints.n_loaded
        record["resumed_seconds"] = checkpoints.seconds_loaded
    try:
        try:
            written = store.write(path, record, keep=shared_finish)
        except UnstorableRecordError as exc:  # it names the file and the field
            # the run's results cannot be stored, its failure can: recorded, rerun
            log.error("%s %s: %s", data_label, shown, exc)
            record = {
                **identity,
                "status": "error",
                "reason": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(),
                "finished": record["finished"],
                "wall_seconds": record["wall_seconds"],
            }
            written = store.write(path, record, keep=shared_finish)
    except OSError as exc:
        # The store cannot be written (disk full, a folder made read-only or
        # unmounted under the sweep): this job failed, with nothing recorded; the
        # sweep goes on and its summary names it. Raised to Hydra, it ended the
        # sweep with a traceback (joblib cancels the other jobs) and no summary.
        from runners.callbacks import folder_problem

        error = f"{type(exc).__name__}: {exc}"
        # a folder behind a dangling symlink says only "File exists": named
        reason = f"the record could not be written ({error})"
        problem = folder_problem(cfg.paths.results)
        if problem:
            reason = f"the record could not be written: {problem}"
        if record["status"] == "error" and record["reason"] != error:
            reason += f"; the run had failed: {record['reason']}"
        record = {**identity, "status": "error", "reason": reason}
        outcome.update(
            status="error", reason=short_reason(reason), record="none written"
        )
        seconds = time.perf_counter() - t_start
        _progress_line(cfg, shown, "error", seconds, reason, outcome=outcome)
        if cfg.get("raise_errors", False):
            raise
        return record, outcome
    if not written:  # failed here, finished by a worker sharing the cell: kept
        log.warning(
            "%s %s: %s; the cell was finished by a worker sharing it",
            data_label, shown, record.get("reason", ""),
        )
        _remember(cfg, path)
        outcome.update(status="cached", reason=SHARED)
        _progress_line(
            cfg, shown, "cached", record["wall_seconds"], SHARED, outcome=outcome
        )
        return store.load(path), outcome
    if record["status"] in ("ok", "skip"):
        _remember(cfg, path)
        checkpoints.clear()
    extra = record.get("reason", "")
    if record["status"] == "ok":
        extra = progress_measure(record, str(cfg.search.scoring)) + (
            "" if record["converged"] else "  NOT CONVERGED"
        )
    # the reason is in the record; the progress file keeps a line per job short
    outcome.update(
        status=record["status"], reason=short_reason(record.get("reason", ""))
    )
    _progress_line(
        cfg, shown, record["status"], record["wall_seconds"], extra, outcome=outcome
    )
    if record["status"] == "error" and cfg.get("raise_errors", False):
        raise RuntimeError(record["reason"])
    # as stored: JSON types, the same as a cached record
    return store.load(path), outcome


#: A job running longer than this reports its outer splits as they finish (at most one
#: line per interval), so an hour-long cell is not silent; short jobs stay one line.
SPLIT_PROGRESS_SECONDS = 60.0


def split_progress(what: str, n_splits: int, interval: float = SPLIT_PROGRESS_SECONDS):
    """A callback for :func:`runners.protocols.evaluate` that logs finished splits.

    Logs ``<what>: outer split i/n done after t s`` once at least ``interval``
    seconds passed since the job started or since the last such line.
    """
    start = time.perf_counter()
    state = {"done": 0, "last": start}

    def on_split(_index: int) -> None:
        state["done"] += 1
        now = time.perf_counter()
        if now - state["last"] >= interval and state["done"] < n_splits:
            state["last"] = now
            log.info(
                "       %s: outer split %d/%d done after %.0f s",
                what, state["done"], n_splits, now - start,
            )

    return on_split


def _remember(cfg: DictConfig, path: Path) -> None:
    """Index a sweep job's finished record for the cached fast path (runners/rerun)."""
    from hydra.core.hydra_config import HydraConfig

    if HydraConfig.initialized():
        from runners.rerun import remember

        remember(cfg.paths.results, cfg.experiment, run_overrides(cfg), path)


def _run(
    cfg: DictConfig,
    kc: Mapping[str, Any],
    checkpoints: SplitCheckpoints | None = None,
    finished_elsewhere: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    cls = get_class(cfg.method._target_)
    estimator = instantiate(cfg.method)
    supported = feature_space_kernels(cls)
    if supported is not None and cfg.kernel.kernel not in supported:
        build_input(estimator, np.zeros((1, 1)), kc["kernel"], False)  # raises SkipRun
    sources: dict[str, str] = {}
    name, X, y = _load_data(cfg, sources)
    # which copy was read (an OpenML fallback may order its rows otherwise) and
    # what the protocol saw: the data's content is not in the key
    data = {"data_sources": sources, "data_digest": data_digest(X, y)}
    if checkpoints is not None:
        checkpoints.stamp["data"] = data["data_digest"]
    protocol = kc["protocol"]
    if protocol["kind"] == "nested_training_sets":
        return {**_run_every_fit(cfg, kc, estimator, X, y, name), **data}
    splits = outer_splits(y, protocol, name, int(cfg.seed))
    # split_start: where this worker begins (not in the key). Workers on one long cell
    # claim its splits and share them through the checkpoints (runners.split_claims);
    # folds are put back in their canonical order below, so every worker writes the
    # same record.
    start = int(cfg.get("split_start", 0)) % max(len(splits), 1)
    splits = splits[start:] + splits[:start]
    seed_parts = fold_seed_parts(name, int(cfg.seed))
    what = f"{dataset_label(cfg.dataset)} {run_label(cfg.method_id, cfg.kernel.name)}"
    on_split = split_progress(what, len(splits))
    check_psd = cfg.protocol.check_psd
    whole = (
        cfg.protocol.preprocess_scope == "dataset" or cfg.protocol.preprocess == "none"
    )
    if whole:
        estimator, Xin = build_input(estimator, X, kc["kernel"], check_psd)
    order: Any = splits
    if checkpoints is not None and finished_elsewhere is not None:
        order = shared_splits(
            splits, SplitClaims(checkpoints), finished_elsewhere, label=what
        )
    folds = []
    with contextlib.closing(iter(order)) as todo:
        for split in todo:
            if whole:
                est, Xs = estimator, Xin
            else:
                est, Xs = _fold_input(
                    estimator, X, split, cfg.protocol.preprocess, kc["kernel"],
                    check_psd,
                )
            folds += evaluate(
                est, Xs, y, [split], kc["grid"], protocol, seed_parts,
                on_split=on_split, scoring=cfg.search.scoring, checkpoints=checkpoints,
            )
    folds.sort(key=lambda f: (f.repetition, f.split))
    return {**_record_of(folds, X, y), **data}


def _record_of(folds: Sequence[Any], X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """The numbers of a finished run's record from its fold results."""
    n = len(y)
    index = np.concatenate([f.test_idx for f in folds])
    y_pred = np.concatenate([f.y_pred for f in folds])
    y_true = y[index]
    fold_of = np.concatenate([np.full(len(f.test_idx), i) for i, f in enumerate(folds)])
    decisions = [f.decision for f in folds]
    decision = (
        np.concatenate(decisions) if all(d is not None for d in decisions) else None
    )
    n_err = int(np.sum(y_pred != y_true))
    # every solver of every fold, an inner one too (LMNN-MKL_P's metric steps)
    converged = all(
        f.solver.get(key, True)
        for f in folds
        for key in ("converged", "lmnn_converged", "metric_converged")
    )
    return {
        "status": "ok",
        "n_samples": n,
        "n_features": int(X.shape[1]),
        "n_test_total": int(len(index)),
        "n_errors": n_err,
        "error_pct": 100.0 * n_err / len(index),
        "accuracy_pct": 100.0 - 100.0 * n_err / len(index),
        "converged": converged,
        "inner_convergence_warnings": int(
            sum(f.inner_convergence_warnings for f in folds)
        ),
        "folds": [
            {
                "repetition": f.repetition,
                "split": f.split,
                "n_test": int(len(f.test_idx)),
                "n_errors": int(np.sum(f.y_pred != y[f.test_idx])),
                "best_params": f.best_params,
                "inner_mean_test_error": f.inner_mean_test_error,
                "fit_seconds": f.fit_seconds,
                "search_seconds": f.search_seconds,
                "predict_seconds": f.predict_seconds,
                "solver": f.solver,
                "inner_convergence_warnings": f.inner_convergence_warnings,
                **({"embedding": f.embedding} if f.embedding is not None else {}),
                **(
                    {"staged_test_auc": f.staged_test_auc}
                    if f.staged_test_auc is not None
                    else {}
                ),
            }
            for f in folds
        ],
        "predictions": {
            "index": index,
            "fold": fold_of,
            "y_true": [_label(v) for v in y_true],
            "y_pred": [_label(v) for v in y_pred],
            "decision": decision,
        },
    }


def _run_every_fit(
    cfg: DictConfig, kc: Mapping[str, Any], estimator: Any, X, y, name: str
) -> dict[str, Any]:
    """``protocol.kind=nested_training_sets``: every grid point on every training set.

    For checks (runners/checks.py): no selection, one fold entry per (training set,
    parameters) with the estimator's ``check_`` in its ``solver``; the error is over
    every held-out part (overlapping), not a CV error.
    """
    from runners.protocols import evaluate_every_fit, training_set_splits

    if cfg.protocol.preprocess_scope != "dataset" and cfg.protocol.preprocess != "none":
        raise ValueError(
            "protocol.kind=nested_training_sets builds one input for all training "
            "sets: set protocol.preprocess_scope=dataset"
        )
    splits = training_set_splits(y, kc["protocol"], name, int(cfg.seed))
    estimator, Xin = build_input(estimator, X, kc["kernel"], cfg.protocol.check_psd)
    folds = evaluate_every_fit(estimator, Xin, y, splits, kc["grid"])
    return _record_of(folds, X, y)


def _label(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def compose_config(overrides: Sequence[str] = ()) -> DictConfig:
    """The resolved config of one run, without Hydra's app (tests, notebooks).

    >>> cfg = compose_config(["dataset=sonar", "method=svm", "protocol=smoke"])
    >>> record = run_job(cfg)  # doctest: +SKIP
    """
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3", job_name="kml"):
        cfg = compose("config", overrides=list(overrides), return_hydra_config=True)
    method_id = cfg.hydra.runtime.choices.method
    task_overrides = list(cfg.hydra.overrides.task)
    with open_dict(cfg):
        cfg.method_id = method_id
        cfg.overrides = task_overrides  # stored in the record (run_overrides)
        del cfg["hydra"]
    validate_config(cfg)
    return cfg


# An absolute path: the console script kml-run imports this module through the
# editable-install finder, where Hydra cannot resolve a path relative to this file.
@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def hydra_main(cfg: DictConfig) -> dict[str, Any]:
    """Hydra's app; returns the run's outcome for the summary.

    ``runners.callbacks.RunSummary`` prints the closing summary (of the run, or of
    the whole sweep) and exits with status 1 when a run failed.
    """
    return run_job_outcome(cfg)[1]  # its progress line has already said how it went


#: The overrides and environment variables that name a folder of this machine.
HOME_PATH_KEYS = ("paths.results", "paths.outputs")
HOME_PATH_ENV = ("KML_RESULTS", "KML_OUTPUTS")


def expand_home(argv: Sequence[str]) -> list[str]:
    """``argv`` with a leading ``~`` expanded in the folder overrides.

    The shell expands ``~`` only at the start of a word or of a variable
    assignment, so ``paths.results=~/res`` reached Hydra as written and the records
    went to a folder named ``~`` in the working directory. The same for
    ``KML_RESULTS``/``KML_OUTPUTS`` set with the ``~`` quoted (updated in
    ``os.environ``).
    """
    for name in HOME_PATH_ENV:
        value = os.environ.get(name)
        if value and value.startswith("~"):
            os.environ[name] = os.path.expanduser(value)
    out = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+~") in HOME_PATH_KEYS and value.startswith("~"):
            arg = f"{key}={os.path.expanduser(value)}"
        out.append(arg)
    return out


def main() -> None:
    """Console entry point ``kml-run``: a sweep whose every job has its record is
    reported without composing a config (:mod:`runners.rerun`), else Hydra runs."""
    import atexit
    import gc
    import signal
    import sys
    import warnings

    from runners.launch_ray import driver_log_env
    from runners.rerun import cached_sweep

    driver_log_env()  # before anything imports Ray (a hydra/launcher=ray sweep)
    # At exit the interpreter then skips collecting the ~2,000 modules' objects
    # (~0.45 s of a one-cell run, issue 14); the atexit handlers (logging's flush)
    # still run, and an object is still freed when its last reference goes. Lost:
    # the __del__ of objects that are cyclic garbage at exit, which CPython does not
    # promise to run either; records and checkpoints are closed explicitly.
    atexit.register(gc.freeze)
    # Hydra 1.3 warns, at each of the first compositions of hydra/launcher=ray or
    # submitit_local (4 lines, 2-3 times before the first job), that the file is
    # matched against the plugin's schema of the same name: a deprecation note for
    # whoever writes the config (conf/hydra/launcher/ray.yaml keeps the name on
    # purpose, and the schema checks its keys), which a user can do nothing about.
    warnings.filterwarnings(
        "ignore",
        message=r"\s*'hydra/launcher/[^']+' is validated against ConfigStore schema",
        category=UserWarning,
    )
    from runners.choices import unknown_choices

    sys.argv[1:] = expand_home(sys.argv[1:])
    problem = unknown_choices(sys.argv[1:])
    if problem:
        sys.stderr.write(problem + "\n")
        raise SystemExit(1)
    # a TERM to the process group (`kill -- -PGID`, `timeout`) stops the sweep as
    # Ctrl-C does: one line and the exit handlers, not joblib's traceback
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    try:
        if not cached_sweep(sys.argv[1:]):
            hydra_main()
    except KeyboardInterrupt as exc:
        # Ray's get turns the Terminated raised in it into a plain interrupt
        term = isinstance(exc, Terminated) or _TERMINATED
        interrupted(signal.SIGTERM if term else signal.SIGINT)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python checks for signals, as Ctrl-C raises
    ``KeyboardInterrupt``: the same unwinding (nothing of the run catches it as an
    error) and the same closing line."""


#: Whether this process has received SIGTERM (:func:`_terminate`).
_TERMINATED = False


def _terminate(signum: int, frame: object) -> None:
    global _TERMINATED
    _TERMINATED = True
    raise Terminated


#: What Ctrl-C leaves behind, said instead of the launcher's 40-line traceback.
INTERRUPTED = (
    "kml-run: interrupted. Finished runs keep their records, and a run cut short "
    "the checkpoints of its finished outer splits; rerun the same command to resume."
)


def interrupted(signum: int = 2) -> None:
    """Say what an interrupt keeps, then die of its signal as an uncaught one does.

    Dying of the signal (not ``exit(130)``) matters to whoever called ``kml-run``:
    a shell loop or ``make`` stops on a child killed by SIGINT, but takes a child
    that exits normally to have handled the interrupt, and goes on. ``signum``:
    SIGINT (2, Ctrl-C) or SIGTERM (:class:`Terminated`).
    """
    import atexit
    import os
    import signal
    import sys

    text = INTERRUPTED
    if signum == signal.SIGTERM:
        text = text.replace("interrupted.", "terminated (SIGTERM).", 1)
    sys.stderr.write("\n" + text + "\n")
    sys.stderr.flush()
    # dying of the signal skips the interpreter's shutdown: without its exit
    # handlers (multiprocessing's finalizers among them) the joblib launcher's
    # resource tracker warned of "leaked semlock objects"
    reusable = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(reusable, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=False, kill_workers=True)
    atexit._run_exitfuncs()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    raise SystemExit(128 + signum)  # only where the signal could not end the process


if __name__ == "__main__":
    main()
