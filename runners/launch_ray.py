"""What ``kml-run`` adds to hydra-ray-launcher (``hydra/launcher=ray``).

The plugin leaves these to Ray, which handles them badly for a sweep:

- ``RAY_ADDRESS`` naming no cluster (a typo, a head not started): ``ray.init``
  retried the connection for minutes, logging "Failed to connect to GCS" every few
  seconds, and never gave up. :func:`address_problem` tries the address first (one
  TCP connection, a few seconds), and ``runners.callbacks.ConfigCheck`` stops the
  sweep before any job, naming it.
- A relative ``KML_RESULTS`` or ``KML_OUTPUTS``: each worker resolved it in the
  folder its ``ray start`` ran in, so with a head started elsewhere the records went
  there while the sweep reported them ok and ``kml-report`` found nothing.
  ``conf/hydra/launcher/ray.yaml`` hands them to the workers through
  ``${kml_abspath:...}`` (:func:`absolute_path`), made absolute against the folder
  ``kml-run`` runs in.

- The cluster failing under the sweep (``ray stop``, a lost head or node): Ray's
  exception reached Hydra, which printed its 40-line traceback and ended
  ``kml-run`` without a summary. :func:`install` wraps the plugin's ``launch`` so
  that it ends with one line saying what failed and what is kept, the summary of
  the runs done so far, and status 1; so does ``RAY_ADDRESS`` unset (``auto``)
  with no cluster on this machine, which Ray reports by a traceback as well.

- A job whose worker died on each of its tries (``max_retries``; the
  out-of-memory killer, say): the plugin's ``ray.get`` raised Ray's
  ``WorkerCrashedError`` at the first such job, and the sweep ended while its
  other jobs ran, said to be a failed cluster. :func:`install` waits for the
  other jobs and names each lost one by its overrides, then the summary.

- The jobs' progress lines, which Ray forwards to the driver: it collapsed lines
  that differ only in numbers (the jobs of a seed sweep) into "[repeated 5x across
  cluster]", wrapped their prefixes in colour codes in log files, and printed the
  last ones after the closing summary. :func:`driver_log_env` turns the first two
  off (``kml-run`` calls it before Ray is imported); :func:`install` counts the
  forwarded lines, and :func:`wait_for_forwarded_progress` holds the summary until
  the last has been printed (a few seconds at most).

Hydra instantiates launchers from the ``hydra_plugins`` package only, so these are
a resolver, a check and a wrapper around the plugin's launcher, not a subclass.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from runners.launch_failures import KEPT, end_sweep, outcomes_so_far, wrap_launch

RESOLVER = "kml_abspath"
#: Seconds to wait for the head to accept a connection.
CONNECT_TIMEOUT = 5.0
#: A job's progress line (runners.run._progress_line) carries "[done/total] ".
_PROGRESS = re.compile(r"\[\d+/(?:\d+|\?)\] ")


def driver_log_env() -> None:
    """Ray settings of the sweep's own process, for the jobs' forwarded lines.

    Ray reads ``RAY_DEDUP_LOGS`` when it is imported, so this runs first thing in
    ``kml-run``: its deduplication masks every word with a digit, so the progress
    lines of jobs that differ only in a seed or a number (``[3/12] ok sonar
    svm[kernel=linear] 0.3s error 22.60%``) were held back and shown as one.
    ``RAY_COLOR_PREFIX=0`` drops the colour codes around each line's prefix when
    the output is not a terminal. A user's own settings win.
    """
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        os.environ.setdefault("RAY_COLOR_PREFIX", "0")


class _ForwardedProgress:
    """Counts the jobs' progress lines as Ray's driver receives them."""

    name = "kml_forwarded_progress"

    def __init__(self) -> None:
        self.seen = 0
        self.last = time.monotonic()

    def __call__(self, data: Mapping[str, Any]) -> None:
        n = sum(1 for line in data.get("lines", ()) if _PROGRESS.search(str(line)))
        if n:
            self.seen += n
            self.last = time.monotonic()


_forwarded: _ForwardedProgress | None = None


def _dispatcher() -> Any:
    """Ray's driver-side dispatcher of forwarded worker output, or None."""
    try:
        from ray._private.ray_logging import global_worker_stdstream_dispatcher
    except ImportError:  # another Ray layout: no counting, no waiting
        return None
    return global_worker_stdstream_dispatcher


def wait_for_forwarded_progress(
    expected: int, quiet: float = 2.0, limit: float = 10.0
) -> None:
    """Return once Ray has printed ``expected`` progress lines of this sweep.

    Ray forwards a job's output asynchronously, so the closing summary could come
    before the last lines. The wait ends early when no line has come for ``quiet``
    seconds (since the last line, or since the wait began when that is later: a job
    logging elsewhere, ``hydra/job_logging=disabled``) and after
    ``limit`` seconds at most; outside a Ray sweep it returns at once.
    """
    counter = _forwarded
    if counter is None:
        return
    tic = time.monotonic()
    while counter.seen < expected:
        now = time.monotonic()
        # quiet since the last line or since the wait began, whichever is later:
        # the counter starts before the jobs (install()), and a sweep whose lines
        # were all still on their way had its summary printed before them
        if now - max(counter.last, tic) > quiet or now - tic > limit:
            return
        time.sleep(0.02)
    # Counted by our handler inside the dispatcher's emit, which calls Ray's
    # printer under one lock: taking it waits for that batch to be printed.
    lock = getattr(_dispatcher(), "_lock", None)
    if lock is not None:
        with lock:
            pass


def address_problem(address: object, timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why no Ray head answers at ``address``, or None (it does, or Ray finds it).

    Only ``HOST:PORT`` (and ``ray://HOST:PORT``) is tried: ``auto``, ``local`` and
    an unset address are Ray's to resolve, and fail fast there when nothing runs.

    Parameters
    ----------
    address : object
        ``hydra.launcher.ray.init.address`` as resolved (``RAY_ADDRESS`` by default).
    timeout : float
        Seconds to wait for the connection.

    Returns
    -------
    str or None
        One paragraph naming the address and how to fix it, or None.
    """
    text = str(address or "").strip()
    host, sep, port = text.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__  # a timeout has no strerror
    return (
        f"no Ray cluster answers at {text} ({why}; the address is "
        "hydra.launcher.ray.init.address, from RAY_ADDRESS). Start the head "
        "(`ray start --head --port=6379`) or set RAY_ADDRESS to its HOST:PORT "
        "(`ray status` on the head prints it)."
    )


def absolute_path(path: object) -> str:
    """``path`` made absolute against the current folder (``${kml_abspath:...}``).

    Ray resolves ``runtime_env`` in the sweep's process and a worker resolves a
    relative path in its own working folder (where its ``ray start`` ran), not in
    the sweep's: absolute, every worker writes where this machine's ``kml-report``
    looks. An empty value stays empty.
    """
    text = str(path or "")
    return os.path.abspath(Path(text)) if text else text


def _max_retries(launcher: Any) -> Any:
    """The launcher's ``ray.remote.max_retries``, or "?"."""
    from omegaconf import OmegaConf

    cfg = getattr(launcher, "ray_cfg", None)
    return OmegaConf.select(cfg, "remote.max_retries", default="?") if cfg else "?"


def register() -> None:
    """Make ``${kml_abspath:path}`` available to configs."""
    from omegaconf import OmegaConf  # lazily: kml-run imports this module first

    OmegaConf.register_new_resolver(RESOLVER, absolute_path, replace=True)


def failure_message(exc: BaseException) -> str | None:
    """What ``kml-run`` says when the cluster fails under the sweep, or None.

    ``RayTaskError`` is left alone: it carries a job's own exception
    (``raise_errors=true``), not the cluster's failure. A ``ConnectionError`` is
    ``ray.init`` finding no cluster for ``address: auto`` (RAY_ADDRESS unset and
    no head started on this machine), before any job.
    """
    from ray.exceptions import RayError, RayTaskError

    first = (str(exc).strip().splitlines() or [""])[0]
    if isinstance(exc, ConnectionError) and not isinstance(exc, RayError):
        return (
            f"kml-run: no job was started: Ray found no cluster ({first}). Start "
            "a head on this machine (`ray start --head --port=6379`) or set "
            "RAY_ADDRESS to a running head's HOST:PORT."
        )
    if not isinstance(exc, RayError) or isinstance(exc, RayTaskError):
        return None
    return (
        f"kml-run: the Ray cluster failed under the sweep ({type(exc).__name__}"
        f"{': ' + first if first else ''}). Finished runs keep their records, and a "
        "run cut short the checkpoints of its finished outer splits; once the "
        "cluster is up again (`ray status`), rerun the same command to resume."
    )


def _worker_died(exc: BaseException) -> bool:
    """A job's Ray worker died on each of its tries (``kill -9``, the out-of-memory
    killer, Ray's memory monitor): the job's failure, not the cluster's."""
    from ray.exceptions import OutOfMemoryError, WorkerCrashedError

    return isinstance(exc, (WorkerCrashedError, OutOfMemoryError))


def lost_workers_message(
    refs: Sequence[Any], job_overrides: Sequence[Sequence[str]], retries: object
) -> str:
    """Wait for every job of the sweep; name those whose worker died each time.

    The plugin's ``ray.get`` raised at the first such job in order, and ``kml-run``
    ended while the other jobs ran, saying the cluster had failed. Raises what
    a wait raises other than a lost worker or a job's own error (the cluster
    failing meanwhile).
    """
    import ray
    from ray.exceptions import RayTaskError

    lost = []
    for overrides, ref in zip(job_overrides, refs):
        try:
            ray.get(ref)
        except RayTaskError:  # a job's own error (raise_errors=true): recorded
            pass
        except Exception as exc:
            if not _worker_died(exc):
                raise
            first = (str(exc).strip().splitlines() or [""])[0]
            lost.append(f"  {' '.join(overrides)}  ({type(exc).__name__}: {first})")
    n = len(lost)
    jobs = "1 job lost its" if n == 1 else f"{n} jobs lost their"
    return "\n".join(
        [
            f"kml-run: {jobs} Ray worker on every try (killed, e.g. by the "
            "out-of-memory killer, or "
            f"crashed; hydra.launcher.ray.remote.max_retries={retries}):",
            *lost,
            KEPT,
        ]
    )


def install() -> None:
    """Make the plugin's ``RayLauncher.launch`` end a failed cluster with a summary.

    Called by ``runners.callbacks.ConfigCheck`` for a Ray sweep, before the
    launcher starts (idempotent). Hydra catches what ``launch`` raises and prints
    its traceback (``run_and_report``), but lets ``SystemExit`` through. Also
    starts counting the jobs' forwarded progress lines
    (:func:`wait_for_forwarded_progress`).
    """
    from hydra_plugins.hydra_ray_launcher.ray_launcher import RayLauncher

    global _forwarded
    dispatcher = _dispatcher()
    if dispatcher is not None:
        # one counter per sweep (a second sweep in the same process starts at 0)
        dispatcher.remove_handler(_ForwardedProgress.name)
        _forwarded = _ForwardedProgress()
        dispatcher.add_handler(_ForwardedProgress.name, _forwarded)

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def launch(
            self: RayLauncher,
            job_overrides: Sequence[Sequence[str]],
            initial_job_idx: int,
        ) -> Any:
            from hydra_plugins.hydra_ray_launcher import _core

            # the sweep's jobs as submitted, to wait for them when one's worker died
            refs: list[Any] = []
            submit = _core.launch_job_on_ray

            def keep(*args: Any, **kwargs: Any) -> Any:
                ref = submit(*args, **kwargs)
                refs.append(ref)
                return ref

            start = _core.start_ray

            def start_keeping_sigterm(*args: Any, **kwargs: Any) -> Any:
                # ray.init sets its own SIGTERM handler (sys.exit), under which a TERM
                # to the sweep printed Ray's C++ stack dump and exited 1, without
                # kml-run's line (runners.run.interrupted); kml-run's is put back
                handler = signal.getsignal(signal.SIGTERM)
                try:
                    return start(*args, **kwargs)
                finally:
                    if callable(handler) and handler is not signal.getsignal(
                        signal.SIGTERM
                    ):
                        signal.signal(signal.SIGTERM, handler)

            _core.launch_job_on_ray = keep
            _core.start_ray = start_keeping_sigterm
            try:
                return original(self, job_overrides, initial_job_idx)
            except Exception as exc:
                message = None
                if _worker_died(exc) and len(refs) == len(job_overrides):
                    retries = _max_retries(self)
                    try:
                        message = lost_workers_message(refs, job_overrides, retries)
                    except Exception as later:  # the cluster failed meanwhile
                        exc = later
                message = message or failure_message(exc)
                if message is None:
                    raise
                if _worker_died(exc):  # the cluster is up: the jobs' lines first
                    wait_for_forwarded_progress(len(outcomes_so_far() or ()))
                # no summary when no connection was made: no job started
                end_sweep(message, summary=not isinstance(exc, ConnectionError))
            finally:
                _core.launch_job_on_ray = submit
                _core.start_ray = start

        return launch

    wrap_launch(RayLauncher, make)
