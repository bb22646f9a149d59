"""Hydra callbacks of ``kml-run``: the size and progress counter of a multirun sweep.

A sweep's jobs run in worker processes (joblib/loky locally, SLURM on a cluster) that
see only their own overrides, so the parent computes the number of jobs once and
hands it, with a fresh progress file, to the workers through environment variables.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger(__name__)

SIZE_ENV = "KML_SWEEP_SIZE"
PROGRESS_ENV = "KML_SWEEP_PROGRESS"


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


class SweepProgress(Callback):
    """Counts the jobs of a multirun and resets its progress file."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        hc = config.hydra
        params = OmegaConf.to_container(hc.sweeper.get("params") or {}, resolve=False)
        try:
            os.environ[SIZE_ENV] = str(sweep_size(params, hc.overrides.task))
        except Exception as exc:  # e.g. glob() sweeps need Hydra's config loader
            log.warning("sweep size unknown (%s); progress shows [done/?]", exc)
            os.environ.pop(SIZE_ENV, None)
        sweep_dir = Path(hc.sweep.dir)
        # one file per sweep: two sweeps of one experiment share the sweep dir
        stamp = time.strftime("%Y%m%d-%H%M%S")
        progress = sweep_dir / f"progress-{stamp}-{os.getpid()}.log"
        try:
            sweep_dir.mkdir(parents=True, exist_ok=True)
            progress.write_text("")
        except OSError as exc:
            log.warning("no progress counter: cannot write %s (%s)", progress, exc)
            os.environ.pop(PROGRESS_ENV, None)
            return
        os.environ[PROGRESS_ENV] = str(progress.resolve())


def record_progress(line: str) -> int | None:
    """Append a finished job to the sweep's progress file; the number done so far.

    ``None`` outside a multirun, or when the file cannot be used (a worker without
    the sweep's file system): the counter is a display, never a reason to fail a
    run. One short ``O_APPEND`` write per job keeps the count right when several
    local workers finish at once (on NFS, appends from several hosts may race).
    """
    path = os.environ.get(PROGRESS_ENV)
    if not path:
        return None
    try:
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
