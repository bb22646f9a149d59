"""Worker count of the local launcher: never more workers than the sweep has jobs.

``conf/hydra/launcher/local.yaml`` asks joblib for ``KML_JOBS`` (default 2) loky
workers. A sweep of one job (one Table I cell: ``kml-run experiment=mlsvm_table1
dataset=sonar method=svm kernel=linear``) then paid for starting a worker process
and importing numpy, scikit-learn and the methods a second time in it (~1.9 s, issue
14). With ``n_jobs=1`` joblib runs the job in the parent process itself (its loky
backend falls back to the sequential one), so the worker count is capped at the
number of jobs. The job count comes from ``KML_SWEEP_SIZE``, which
``runners.callbacks.SweepProgress`` sets before Hydra instantiates the launcher; when
it is unknown the requested count stands. Where a job runs changes none of its
numbers: ``run_job`` limits BLAS threads itself (``blas_threads``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from omegaconf import OmegaConf

RESOLVER = "kml_workers"
ENV = "KML_JOBS"


def requested_workers(requested: object) -> int:
    """The worker count ``KML_JOBS`` asks for, as an integer.

    Raises
    ------
    ValueError
        One line naming ``KML_JOBS``, the value and what is expected, for anything
        but a non-zero whole number (``int("abc")``'s own message names neither).
    """
    text = str(requested).strip()
    try:
        n = int(text)
    except ValueError:
        n = 0
    if isinstance(requested, bool) or n == 0:
        raise ValueError(
            f"{ENV}={text or '(empty)'}: expected the number of worker processes, "
            f"a whole number other than 0, e.g. {ENV}=2 (negative: joblib's count, "
            "-1 = every CPU)"
        )
    return n


def jobs_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """What is wrong with the environment's ``KML_JOBS``, or None (unset or valid).

    For :class:`runners.callbacks.ConfigCheck`, which stops the sweep with it
    before the launcher resolves its ``n_jobs`` (where the same error surfaced as
    an omegaconf interpolation traceback of ~140 lines).
    """
    if ENV not in environ:
        return None
    try:
        requested_workers(environ[ENV])
    except ValueError as exc:
        return str(exc)
    return None


def worker_count(requested: int | str, sweep_size: int | str | None = "") -> int:
    """``requested`` workers, at most ``sweep_size`` when that is known and positive.

    ``requested`` follows joblib: a negative count means ``cpu_count + 1 + n``
    (``-1``: every CPU); 0 or a non-number is refused with the fix
    (:func:`requested_workers`).
    """
    n = requested_workers(requested)
    size = int(sweep_size) if str(sweep_size or "").strip() else 0
    if size <= 0:
        return n
    if n < 0:
        n = max(1, (os.cpu_count() or 1) + 1 + n)
    return min(n, size)


def register() -> None:
    """Make ``${kml_workers:requested,sweep_size}`` available to configs."""
    OmegaConf.register_new_resolver(RESOLVER, worker_count, replace=True)


register()
