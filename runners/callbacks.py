"""Hydra callbacks of ``kml-run``: config checks, progress counter, closing summary.

A sweep's jobs run in worker processes (joblib/loky locally, SLURM on a cluster) that
see only their own overrides, so the parent computes the number of jobs once and
hands it, with a fresh progress file, to the workers through environment variables.
Each job appends its outcome (status, label, reason, record path) to that file as one
JSON line; the parent reads them back for the closing summary and exits non-zero when
a run failed. Before the launcher starts any job, the parent composes the sweep's job
configs and checks them (:func:`runners.config_schema.validate_config`), so a typo
stops the sweep before it writes a single error record.
"""

from __future__ import annotations

import json
import logging
import math
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import ConfigCompositionException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger(__name__)

SIZE_ENV = "KML_SWEEP_SIZE"
PROGRESS_ENV = "KML_SWEEP_PROGRESS"
SWEEP_ID_ENV = "KML_SWEEP_ID"


def sweep_size(
    sweeper_params: Mapping[str, Any] | None, command_line: Iterable[str]
) -> int:
    """Number of jobs Hydra's basic sweeper launches for these overrides.

    The sweeper takes the product of every swept key; a key given on the command line
    replaces the experiment's ``hydra.sweeper.params`` entry of the same key.
    """
    parser = OverridesParser.create()
    lines = [f"{k}={v}" for k, v in (sweeper_params or {}).items()]
    # keyed as the basic sweeper keys them (prefix, key and @package)
    by_key = {o.get_key_element(): o for o in parser.parse_overrides(lines)}
    given = parser.parse_overrides(list(command_line))
    by_key.update({o.get_key_element(): o for o in given})
    return math.prod(
        len(list(o.sweep_string_iterator())) if o.is_sweep_override() else 1
        for o in by_key.values()
    )


def _sweeper_params(config: DictConfig) -> dict[str, Any]:
    """The experiment's ``hydra.sweeper.params`` (empty for a command-line sweep)."""
    params = config.hydra.sweeper.get("params")
    return OmegaConf.to_container(params, resolve=False) if params else {}


class SweepProgress(Callback):
    """Counts the jobs of a multirun and resets its progress file."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        hc = config.hydra
        params = _sweeper_params(config)
        try:
            os.environ[SIZE_ENV] = str(sweep_size(params, hc.overrides.task))
        except Exception as exc:  # e.g. glob() sweeps need Hydra's config loader
            log.warning("sweep size unknown (%s); progress shows [done/?]", exc)
            os.environ.pop(SIZE_ENV, None)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # one id per sweep, for its workers: force=true's checkpoints (runners/run.py)
        os.environ[SWEEP_ID_ENV] = f"{stamp}-{os.getpid()}-{secrets.token_hex(4)}"
        sweep_dir = Path(hc.sweep.dir)
        # one file per sweep: two sweeps of one experiment share the sweep dir
        progress = sweep_dir / f"progress-{stamp}-{os.getpid()}.log"
        try:
            sweep_dir.mkdir(parents=True, exist_ok=True)
            progress.write_text("")
        except OSError as exc:
            log.warning("no progress counter: cannot write %s (%s)", progress, exc)
            os.environ.pop(PROGRESS_ENV, None)
            return
        os.environ[PROGRESS_ENV] = str(progress.resolve())


class DropJobListing(logging.Filter):
    """Leaves out the launchers' listing of every job's overrides (``\t#12 : ...``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.msg if isinstance(record.msg, str) else ""
        return not msg.startswith("\t#")


def record_progress(line: str | Mapping[str, Any]) -> int | None:
    """Append a finished job to the sweep's progress file; the number done so far.

    ``line`` is a job's outcome (:func:`runners.run.run_job_outcome`), stored as one
    JSON line for the closing summary, or plain text.

    ``None`` outside a multirun, or when the file cannot be used (a worker without
    the sweep's file system): the counter is a display, never a reason to fail a
    run. One short ``O_APPEND`` write per job keeps the count right when several
    local workers finish at once (on NFS, appends from several hosts may race).
    """
    path = os.environ.get(PROGRESS_ENV)
    if not path:
        return None
    try:
        if not isinstance(line, str):
            line = json.dumps(dict(line), default=str)  # no newline inside
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line.replace("\n", " ") + "\n").encode())
        finally:
            os.close(fd)
        with open(path, "rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return None


def total_jobs() -> int | None:
    value = os.environ.get(SIZE_ENV)
    return int(value) if value else None


# Keys that cannot change the checked sections (kernel, protocol, search): the dataset
# and method files are in their own packages. Jobs that differ only in these share
# one check, so a sweep of 140 jobs composes a handful of configs, not 140.
_INERT_KEYS = ("seed", "force", "raise_errors", "blas_threads")
_INERT_GROUPS = ("dataset", "method")


def sweep_jobs(config: DictConfig) -> list[list[str]]:
    """The override list of every job Hydra's basic sweeper launches for ``config``.

    The sweeper's own expansion (:meth:`BasicSweeper.split_arguments`) of the
    experiment's ``hydra.sweeper.params`` followed by the command line.
    """
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.global_hydra import GlobalHydra

    lines = [f"{k}={v}" for k, v in _sweeper_params(config).items()]
    lines += list(config.hydra.overrides.task)
    gh = GlobalHydra.instance()
    loader = gh.config_loader() if gh.is_initialized() else None
    parser = OverridesParser.create(config_loader=loader)
    batches = BasicSweeper.split_arguments(parser.parse_overrides(lines), None)
    return [list(job) for batch in batches for job in batch]


def _key_and_top(line: str) -> tuple[str, str]:
    """``+method.C=10`` -> (``method.C``, ``method``); ``dataset@x=...`` -> dataset."""
    key = line.split("=", 1)[0].lstrip("+~")
    return key, key.split(".", 1)[0].split("@", 1)[0]


def _estimator_signature(job: Sequence[str], pair_files: bool) -> tuple[str, ...]:
    """The overrides the estimator check (config_schema._estimator_problems) reads:
    the method, its grids, ``kernel=none`` and, through pair files, the dataset.

    ``kernel=none`` hands the method features, which a Gram-matrix method refuses
    (config_schema._features_to_a_gram_method): a job with it is its own signature,
    or ``method=svm,lmnn_h kernel=linear,none`` would check (lmnn_h, linear) and
    never compose (lmnn_h, none). Other kernels leave the estimator check alone, so
    they do not multiply the compositions.
    """
    reads = {"method", "search", "experiment"} | ({"dataset"} if pair_files else set())
    return tuple(
        line
        for line in job
        if _key_and_top(line)[1] in reads or line.lstrip("+") == "kernel=none"
    )


def _check_signature(job: Sequence[str], pair_files: bool) -> tuple[str, ...]:
    keep = []
    for line in job:
        key, top = _key_and_top(line)
        if key in _INERT_KEYS or (top in _INERT_GROUPS and not pair_files):
            continue
        keep.append(line)
    return tuple(keep)


def _has_pair_files(config: DictConfig, loader: Any, conf_dir: Path) -> bool:
    """Whether a ``dataset_method`` pair file may exist for this sweep.

    Pair files make a dataset and a method interact, so then every pair is its own
    check signature. Looked for in the loader's search path (``conf/``,
    ``--config-dir``) and in the sweep's ``hydra.searchpath``, which Hydra applies
    per composition only; a search-path entry that is not a folder (``pkg://``)
    counts as having them.
    """
    if loader is None:
        return (conf_dir / "dataset_method").is_dir()
    if loader.get_group_options("dataset_method"):
        return True
    searchpath = OmegaConf.select(config, "hydra.searchpath", default=None) or []
    for entry in searchpath:
        uri = str(entry)
        if uri.startswith("file://"):
            uri = uri[len("file://") :]
        elif "://" in uri:
            return True
        if (Path(uri) / "dataset_method").is_dir():
            return True
    return False


def _runs_here(config: DictConfig) -> bool:
    """Whether the sweep's jobs run on this machine with this environment.

    The local launchers (joblib's worker processes, submitit's local executor,
    Hydra's basic launcher) do; Ray and SLURM jobs read ``DATA_MIRROR`` and
    ``KML_CACHE`` on their own nodes (README, "Running on a cluster"), where this
    process cannot look.
    """
    target = OmegaConf.select(config, "hydra.launcher._target_", default=None)
    return str(target).rsplit(".", 1)[-1] in (
        "JoblibLauncher",
        "LocalLauncher",
        "BasicLauncher",
    )


#: What kml-run writes in each folder of ``paths``, and the variable that sets it.
_FOLDERS = {
    "results": ("records", "KML_RESULTS"),
    "outputs": ("Hydra's logs", "KML_OUTPUTS"),
}


def folder_problem(folder: object, role: str = "results") -> str | None:
    """Why kml-run cannot write in ``folder``, its ``paths.<role>``, or None.

    Tried as a run does: the folder is made if missing and a file is created and
    removed in it. A folder behind a dangling symlink (a share not mounted) is
    named as such; mkdir's own error says only "File exists". Unchecked, a results
    folder let every job compute its run and then fail, and an outputs folder
    ended the sweep in Hydra's traceback.
    """
    what, env = _FOLDERS[role]
    path = Path(str(folder))
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".kml-write-check-", dir=path)
        os.close(fd)
        os.unlink(tmp)
        return None
    except OSError as exc:
        why = f"{type(exc).__name__}: {exc}"
    for part in (path, *path.parents):
        if part.is_symlink() and not part.exists():
            why = f"{part} is a symlink to {os.readlink(part)}, which does not exist"
            break
    return (
        f"cannot write {what} under the {role} folder {path} (paths.{role}; "
        f"{env} sets it; {why}). Create or mount it, or set {env} to a "
        "folder you can write."
    )


def _missing_data(
    cfg: DictConfig, bad: dict[tuple[str, Any], Any] | None = None
) -> list[tuple[str, bool]]:
    """The loader's message for each dataset of a job found nowhere (an empty
    list when every file is there, or may come from OpenML); with ``bad`` (a memo
    of :func:`datasets.bad_copy` by dataset and mirror), also for each copy found
    that cannot be read or fails its checksum, which would fail every job of it.
    Each message comes with whether it is such a copy (True) or a missing one."""
    import datasets
    from runners.run import dataset_label

    label = dataset_label(cfg.dataset)
    out = []
    mirror = cfg.paths.data_mirror
    for name in filter(None, [cfg.dataset.name, cfg.dataset.get("noise_donor")]):
        error = datasets.missing_copy(str(name), mirror=mirror)
        damaged = False
        if error is None and bad is not None:
            key = (str(name), mirror)
            if key not in bad:  # hashed once per sweep, not once per job
                bad[key] = datasets.bad_copy(str(name), mirror=mirror)
            error, damaged = bad[key], True
        if error is not None:  # the message names the dataset; a noisy set's too
            same = label == name == getattr(error, "name", name)
            out.append((str(error) if same else f"{label}: {error}", damaged))
    return out


def check_sweep(config: DictConfig, compose=None, data: bool = False) -> int:
    """Compose and check every job of a sweep; the number of configs composed.

    Raises ``ConfigCompositionException`` naming each bad key, the allowed values and
    the overrides of a job that has it, before the launcher starts any job. With
    ``data``, also each dataset a job needs that is found nowhere (wrong
    ``DATA_MIRROR``), with the loader's message (:func:`datasets.missing_copy`:
    file existence only; a dataset OpenML may provide is left to the run), and
    each copy found that cannot be read or fails its sha256
    (:func:`datasets.bad_copy`, once per dataset).
    """
    from runners.config_schema import (
        ConfigError,
        grid_set_overrides,
        grid_set_warnings,
        validate_config,
    )
    from runners.run import CONF_DIR

    loader = None
    if compose is None:
        from hydra.core.global_hydra import GlobalHydra

        loader = GlobalHydra.instance().config_loader()

        def compose(job: list[str]) -> DictConfig:
            return loader.load_sweep_config(config, job)

    pair_files = _has_pair_files(config, loader, Path(CONF_DIR))

    # One job per signature, composed with its own overrides (not the signature's
    # subset), plus a job for every override line no chosen job has yet (each
    # dataset, each method): every config file the sweep names is composed, so
    # Hydra's own batch check, which composes all jobs (~0.1 s each, 14 s of one
    # core for Table I's 140 before any job starts), is skipped for these jobs
    # (runners.launch_compose.mark_checked). The composition memo hands the same
    # config to the launcher, so a one-job run composes it once.
    # The estimator's parameter check depends on the method and its grid, which the
    # other checks do not: one job per (method, grid) combination as well.
    jobs = sweep_jobs(config)
    signatures: set[tuple[str, ...]] = set()
    estimators: set[tuple[str, ...]] = set()
    covered: set[str] = set()
    chosen: list[list[str]] = []
    for job in jobs:
        signature = _check_signature(job, pair_files)
        estimator = _estimator_signature(job, pair_files)
        if (
            signature in signatures
            and estimator in estimators
            and covered.issuperset(job)
        ):
            continue
        signatures.add(signature)
        estimators.add(estimator)
        covered.update(job)
        chosen.append(job)
    errors: dict[str, list[str]] = {}
    missing: dict[str, bool] = {}
    bad: dict[tuple[str, Any], Any] = {}
    shadowed: list[tuple[str, str]] = []
    for job in chosen:
        try:
            cfg = compose(list(job))
            shadowed += grid_set_overrides(cfg, job)
            validate_config(cfg)
            # every dataset of the sweep is in a chosen job (each override line is)
            for message, damaged in _missing_data(cfg, bad) if data else []:
                missing.setdefault(message, damaged)
        except ConfigError as exc:
            errors.setdefault(str(exc), list(job))
        except ConfigCompositionException as exc:
            cause = f"\n{exc.__cause__}" if exc.__cause__ is not None else ""
            errors.setdefault(f"{exc}{cause}", list(job))
    # before any error: a refused `method.C=-1` under a grid over C is not used either
    for warning in grid_set_warnings(shadowed):
        log.warning("kml-run: %s", warning)
    if errors:
        text = "\n".join(
            f"{message}\n  (job overrides: {' '.join(job)})"
            for message, job in errors.items()
        )
        raise ConfigCompositionException(
            f"kml-run: no job was started; fix the config first.\n{text}"
        )
    if missing:  # each job of these datasets would write a failed record
        text = "\n".join(missing)
        kinds = set(missing.values())  # True: a copy found but damaged
        what = " or ".join(
            text
            for kind, text in (
                (False, "is found nowhere"),
                (True, "has a copy that cannot be used"),
            )
            if kind in kinds
        )
        raise ConfigCompositionException(
            f"kml-run: no job was started; a dataset the sweep needs {what}.\n{text}"
        )
    if loader is not None:
        from runners.launch_compose import mark_checked

        mark_checked(loader, jobs)
    return len(chosen)


def _stop(message: str) -> None:
    """Stop ``kml-run`` with exit status 1 (Hydra turns a callback's exception into
    a warning and carries on, so only ``SystemExit`` stops it)."""
    sys.stderr.write(message.rstrip() + "\n")
    sys.stderr.flush()
    raise SystemExit(1)


#: Why a sweep has no job: an override that sweeps nothing.
EMPTY_SWEEP = (
    "the sweep has no job: an override sweeps an empty range or list "
    "(range(a,b) stops before b: range(3,1) is empty, seed=range(0,3) is 0,1,2)"
)


class ConfigCheck(Callback):
    """Checks the run's config, or every job's config of a sweep, before any job."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        from runners.config_schema import (
            ConfigError,
            grid_set_overrides,
            grid_set_warnings,
            validate_config,
        )

        overrides = list(config.hydra.overrides.task)
        for warning in grid_set_warnings(grid_set_overrides(config, overrides)):
            log.warning("kml-run: %s", warning)
        try:
            validate_config(config)
        except ConfigError as exc:
            _stop(f"kml-run: no run was started: {exc}")
        for role in _FOLDERS:
            problem = folder_problem(config.paths[role], role)
            if problem:
                _stop(f"kml-run: no run was started: {problem}")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from runners.launch_local import RESOLVER, jobs_problem

        # the local launcher reads KML_JOBS when Hydra instantiates it, after this
        launcher = OmegaConf.select(config, "hydra.launcher", default=None)
        if launcher is not None:
            raw = OmegaConf.to_container(launcher, resolve=False).get("n_jobs")
            problem = jobs_problem() if RESOLVER in str(raw) else None
            if problem:
                _stop(f"kml-run: no job was started: {problem}")
        from runners.launch_failures import install as end_dead_jobs_cleanly

        # a job's process killed mid-run ends the sweep with its summary
        end_dead_jobs_cleanly(
            str(OmegaConf.select(config, "hydra.launcher._target_", default=""))
        )
        if str(OmegaConf.select(config, "hydra.launcher._target_")).endswith(
            ".RayLauncher"
        ):
            from runners.launch_ray import address_problem, install

            install()  # a cluster failing under the sweep ends it with its summary

            # else ray.init retries a dead address for minutes without giving up
            problem = address_problem(
                OmegaConf.select(config, "hydra.launcher.ray.init.address")
            )
            if problem:
                _stop(f"kml-run: no job was started: {problem}")
        tic = time.perf_counter()
        try:
            n = check_sweep(config, data=_runs_here(config))
        except ConfigCompositionException as exc:
            _stop(str(exc))
        if n == 0:  # only a sweep without jobs: its first job is always composed
            # Hydra launches nothing and the summary read "0 ok, ... (0 runs)" with
            # status 0, as if the sweep had been done
            _stop(f"kml-run: no job was started: {EMPTY_SWEEP}")
        # after the config checks, which leave no folder behind. Hydra writes the
        # sweep's folder here; a cluster's nodes see their own results folder
        for role in _FOLDERS if _runs_here(config) else ("outputs",):
            problem = folder_problem(config.paths[role], role)
            if problem:
                _stop(f"kml-run: no job was started: {problem}")
        log.debug("checked %d job configs in %.1f s", n, time.perf_counter() - tic)


def summarize(
    outcomes: Sequence[Mapping[str, Any]], total: int | None = None
) -> tuple[str, int]:
    """The closing summary of a run or sweep, and the number of failed runs.

    ``outcomes`` are the jobs' outcome dicts (status ``ok``, ``cached``, ``skip`` or
    ``error``); jobs of ``total`` that reported nothing (a worker killed mid-job)
    count as failed.
    """
    counts = {"ok": 0, "cached": 0, "skip": 0, "error": 0}
    failures = []
    for o in outcomes:
        status = o.get("status")
        counts[status if status in counts else "error"] += 1
        if status not in ("ok", "cached", "skip"):
            failures.append(o)
    missing = max(0, (total or 0) - len(outcomes))
    n_failed = counts["error"] + missing
    parts = [
        f"{counts['ok']} ok",
        f"{counts['cached']} cached",
        f"{counts['skip']} skipped",
        f"{n_failed} failed",
    ]
    n_runs = len(outcomes) + missing
    lines = [
        f"kml-run summary: {', '.join(parts)} "
        f"({n_runs} run{'' if n_runs == 1 else 's'})"
    ]
    for o in failures:
        reason = str(o.get("reason") or "no reason recorded")
        lines.append(
            f"  FAILED {o.get('dataset', '?')} {o.get('label', '?')}: "
            + reason.replace("\n", "\n    ")
        )
        lines.append(f"         record: {o.get('record', 'none written')}")
    if missing:
        lines.append(
            f"  {missing} run{'' if missing == 1 else 's'} reported no outcome "
            "(a worker killed mid-run?); rerun the same command to complete "
            + ("it" if missing == 1 else "them")
        )
    if n_failed:
        lines.append(
            "  failed runs are retried by the next sweep; fix the cause and rerun "
            "the same command"
        )
    return "\n".join(lines), n_failed


def read_outcomes(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The JSON outcome lines of a sweep's progress file (other lines skipped)."""
    outcomes = []
    try:
        text = Path(path).read_text()
    except OSError:
        return outcomes
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            outcomes.append(item)
    return outcomes


class RunSummary(Callback):
    """Logs the closing summary and exits with status 1 when any run failed.

    Registered first in ``hydra.callbacks`` so that its end hooks run last (Hydra
    calls end hooks in reverse order).
    """

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        from hydra.core.utils import JobStatus

        ret = kwargs.get("job_return")
        if ret is None:
            return
        if ret.status != JobStatus.COMPLETED:  # Hydra reraises it after this hook
            outcome = {"status": "error", "reason": repr(ret._return_value)}
        else:
            outcome = ret.return_value
        if not isinstance(outcome, Mapping):
            return
        _finish(summarize([outcome]))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        path = os.environ.get(PROGRESS_ENV)
        if not path:
            log.warning(
                "kml-run summary unavailable: no progress file (see the records "
                "under %s)",
                config.paths.results,
            )
            return
        outcomes = read_outcomes(path)
        if str(OmegaConf.select(config, "hydra.launcher._target_")).endswith(
            ".RayLauncher"
        ):
            from runners.launch_ray import wait_for_forwarded_progress

            # one progress line per outcome, printed by Ray's driver with a delay
            wait_for_forwarded_progress(len(outcomes))
        _finish(summarize(outcomes, total_jobs()))


def _finish(summary: tuple[str, int]) -> None:
    text, n_failed = summary
    (log.error if n_failed else log.info)("%s", text)
    if n_failed:
        sys.exit(1)
