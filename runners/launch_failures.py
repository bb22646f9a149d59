"""A job process of a sweep that dies (joblib, submitit): one message, the summary.

A worker killed mid-job (``kill -9``, the out-of-memory killer, a segfault) ended
``kml-run`` with the launcher's exception and Hydra's traceback (~40 lines), with no
closing summary:

- joblib (the default launcher): loky raises ``TerminatedWorkerError`` ("The exit
  codes of the workers are {SIGKILL(-9)}") and stops the executor, so the other
  worker's job is cut short as well.
- submitit (``submitit_local``, ``slurm``): ``UncompletedJobError`` for the first
  job, in order, that left no result, while the sweep's other jobs were still
  running: they went on after ``kml-run`` had ended, and the killed job was named
  by its process id only.

:func:`install` wraps the plugins' ``launch`` as :func:`runners.launch_ray.install`
wraps Ray's: the sweep ends with one paragraph saying what died and what is kept,
the summary of the runs done so far (a job cut short counts as failed, "reported no
outcome"), and status 1. Under submitit it first waits for the sweep's other jobs,
then names every job that left no result by its overrides and its log. Any other
exception (a job's own error with ``raise_errors=true``) goes on to Hydra as before.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

KEPT = (
    "Finished runs keep their records, and a run cut short the checkpoints of its "
    "finished outer splits; rerun the same command to resume."
)


def wrap_launch(
    cls: type, make: Callable[[Callable[..., Any]], Callable[..., Any]]
) -> None:
    """Replace the launcher class's ``launch`` by ``make(original)``, once.

    Hydra instantiates launchers from the ``hydra_plugins`` package only, so kml-run
    wraps the plugin's method; a second sweep in the same process (or a second
    call) keeps the first wrapper.
    """
    original = cls.launch
    if getattr(original, "_kml_wrapped", False):
        return
    launch = make(original)
    launch._kml_wrapped = True  # type: ignore[attr-defined]
    cls.launch = launch  # type: ignore[method-assign]


def outcomes_so_far() -> list[dict[str, Any]] | None:
    """The outcomes the sweep's jobs have reported, or None outside a sweep."""
    from runners.callbacks import PROGRESS_ENV, read_outcomes

    path = os.environ.get(PROGRESS_ENV)
    return read_outcomes(path) if path else None


def end_sweep(message: str, *, summary: bool = True) -> NoReturn:
    """Print ``message`` and (``summary``) what the closing summary, which Hydra
    skips now, would have said of the runs so far; exit with status 1."""
    from runners.callbacks import summarize, total_jobs

    outcomes = outcomes_so_far() if summary else None
    if outcomes is not None:
        message += "\n" + summarize(outcomes, total_jobs())[0]
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    raise SystemExit(1) from None


def worker_died_message(exc: BaseException) -> str | None:
    """What ``kml-run`` says when a joblib worker process died, or None.

    ``exc`` is what the joblib launcher raised; only loky's broken pool (a worker
    that died, not a job's own exception) is answered.
    """
    from joblib.externals.loky.process_executor import BrokenProcessPool

    if not isinstance(exc, BrokenProcessPool):
        return None
    codes = re.search(r"exit codes of the workers are (\{[^}]*\})", str(exc))
    how = f"exit codes {codes.group(1)}" if codes else type(exc).__name__
    return (
        f"kml-run: a worker process died under the sweep ({how}: killed, e.g. by "
        "`kill -9` or the out-of-memory killer, or crashed), and joblib stopped "
        f"the sweep's other jobs. {KEPT}"
    )


def _install_joblib() -> None:
    from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def launch(
            self: Any, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
        ) -> Any:
            try:
                return original(self, job_overrides, initial_job_idx)
            except Exception as exc:
                message = worker_died_message(exc)
                if message is None:
                    raise
                end_sweep(message)

        return launch

    wrap_launch(JoblibLauncher, make)


def lost_jobs_message(
    jobs: Sequence[Any], job_overrides: Sequence[Sequence[str]], first: str = ""
) -> str:
    """What ``kml-run`` says when submitit jobs ended without a result.

    ``jobs`` are the sweep's submitit jobs, finished, in the order of
    ``job_overrides``; ``first`` is the message of the ``UncompletedJobError``
    already raised (its job has waited for its result once).
    """
    timeout = max((getattr(j, "_results_timeout_s", 0) for j in jobs), default=0)
    deadline = time.monotonic() + timeout  # a slow file system: results come late

    def lost(job: Any) -> bool:
        return not job.paths.result_pickle.exists()

    reported = {
        i
        for i, job in enumerate(jobs)
        if first.startswith(f"Job {job.job_id} (task: {job.task_id})")
    }
    pending = [i for i, job in enumerate(jobs) if i not in reported and lost(job)]
    while pending and time.monotonic() < deadline:
        time.sleep(1)
        pending = [i for i in pending if lost(jobs[i])]
    missing = sorted(set(pending) | {i for i in reported if lost(jobs[i])})
    n = len(missing)
    lines = [
        f"kml-run: {n} submitit job{'' if n == 1 else 's'} ended without a result "
        "(killed, or out of time or memory):"
    ]
    for i in missing:
        lines.append(
            f"  Job {jobs[i].job_id}: {' '.join(job_overrides[i])}  "
            f"(its log: {jobs[i].paths.stderr})"
        )
    lines.append(KEPT)
    return "\n".join(lines)


def _install_submitit() -> None:
    import submitit
    from hydra_plugins.hydra_submitit_launcher.submitit_launcher import (
        BaseSubmititLauncher,
    )
    from submitit.core.utils import UncompletedJobError

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def launch(
            self: Any, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
        ) -> Any:
            submitted: list[Any] = []
            executor_class = submitit.AutoExecutor
            own = executor_class.__dict__.get("map_array")  # else inherited
            map_array = executor_class.map_array

            def keep(executor: Any, *args: Any, **kwargs: Any) -> Any:
                jobs = map_array(executor, *args, **kwargs)
                submitted.extend(jobs)
                return jobs

            executor_class.map_array = keep  # type: ignore[method-assign]
            try:
                return original(self, job_overrides, initial_job_idx)
            except UncompletedJobError as exc:
                if len(submitted) != len(job_overrides):
                    raise
                for job in submitted:  # the sweep's other jobs, as the launcher would
                    job.wait()
                end_sweep(lost_jobs_message(submitted, job_overrides, str(exc)))
            finally:
                if own is None:
                    del executor_class.map_array
                else:
                    executor_class.map_array = own  # type: ignore[method-assign]

        return launch

    wrap_launch(BaseSubmititLauncher, make)


def install(target: str) -> None:
    """Wrap the launcher class named by ``hydra.launcher._target_`` (idempotent);
    other launchers are left alone (Ray has :func:`runners.launch_ray.install`)."""
    if target.endswith(".JoblibLauncher"):
        _install_joblib()
    elif "hydra_submitit_launcher" in target:
        _install_submitit()
