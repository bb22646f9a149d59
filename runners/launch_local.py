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

from omegaconf import OmegaConf

RESOLVER = "kml_workers"


def worker_count(requested: int | str, sweep_size: int | str | None = "") -> int:
    """``requested`` workers, at most ``sweep_size`` when that is known and positive.

    ``requested`` follows joblib: a negative count means ``cpu_count + 1 + n``
    (``-1``: every CPU); 0 is refused with the fix.
    """
    n = int(requested)
    if n == 0:
        raise ValueError(
            "KML_JOBS=0: set the number of worker processes, e.g. KML_JOBS=2"
        )
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
