"""A sweep's job process that dies under the joblib or submitit launcher.

``kill -9`` of a worker (or the out-of-memory killer) ended ``kml-run`` with the
launcher's exception under Hydra's ~40-line traceback and no summary; it ends with
one paragraph naming what died, the summary so far and status 1. Under submitit the
sweep's other jobs are waited for, and each job that left no result is named by its
overrides. The real submitit sweep with a killed job is in
tests/cluster/test_cluster_submitit.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from runners import launch_failures
from runners.callbacks import PROGRESS_ENV, SIZE_ENV

DIED = (
    "A worker process managed by the executor was unexpectedly terminated. This "
    "could be caused by a segmentation fault while calling the function or by an "
    "excessive memory usage causing the Operating System to kill the worker.\n\n"
    "The exit codes of the workers are {SIGKILL(-9)}"
)


@pytest.fixture
def progress(tmp_path, monkeypatch):
    """A sweep of 2 jobs, one finished ok."""
    path = tmp_path / "progress.log"
    done = {"status": "ok", "dataset": "wpbc", "label": "svm[kernel=linear]"}
    path.write_text(json.dumps(done) + "\n")
    monkeypatch.setenv(PROGRESS_ENV, str(path))
    monkeypatch.setenv(SIZE_ENV, "2")
    return path


@pytest.fixture
def joblib_launcher(monkeypatch):
    from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher

    monkeypatch.setattr(JoblibLauncher, "launch", JoblibLauncher.launch)
    return JoblibLauncher


def test_a_dead_joblib_worker_ends_with_the_summary(
    joblib_launcher, progress, monkeypatch, capsys
):
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    def dies(self, job_overrides, initial_job_idx):
        raise TerminatedWorkerError(DIED)

    monkeypatch.setattr(joblib_launcher, "launch", dies)
    target = "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"
    launch_failures.install(target)
    launch_failures.install(target)  # idempotent: wrapped once
    with pytest.raises(SystemExit) as exit_:
        object.__new__(joblib_launcher).launch([["dataset=sonar"], ["dataset=wpbc"]], 0)
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "kml-run: a worker process died under the sweep (exit codes {SIGKILL(-9)}: "
    ), err
    assert "rerun the same command to resume" in err
    assert "kml-run summary: 1 ok, 0 cached, 0 skipped, 1 failed (2 runs)" in err
    assert "1 run reported no outcome" in err


def test_a_jobs_own_error_goes_on_to_hydra(joblib_launcher, monkeypatch):
    def fails(self, job_overrides, initial_job_idx):
        raise RuntimeError("a job's own error (raise_errors=true)")

    monkeypatch.setattr(joblib_launcher, "launch", fails)
    launch_failures.install("x.JoblibLauncher")
    with pytest.raises(RuntimeError, match="a job's own error"):
        object.__new__(joblib_launcher).launch([["dataset=sonar"]], 0)


def _job(tmp: Path, job_id: str, result: bool) -> SimpleNamespace:
    folder = tmp / job_id
    folder.mkdir()
    pickle = folder / f"{job_id}_0_result.pkl"
    if result:
        pickle.write_bytes(b"done")
    return SimpleNamespace(
        job_id=job_id,
        task_id=0,
        _results_timeout_s=0,
        paths=SimpleNamespace(
            result_pickle=pickle, stderr=folder / f"{job_id}_0_log.err"
        ),
        waited=[],
    )


def test_submitit_waits_for_the_other_jobs_and_names_each_lost_one(
    tmp_path, progress, monkeypatch, capsys
):
    """The launcher raised at the first job without a result while the others
    still ran; now every job is waited for and each lost one named."""
    submitit = pytest.importorskip("submitit")
    from hydra_plugins.hydra_submitit_launcher.submitit_launcher import (
        BaseSubmititLauncher,
    )
    from submitit.core.utils import UncompletedJobError

    jobs = [_job(tmp_path, "101", False), _job(tmp_path, "102", True)]
    for job in jobs:
        job.wait = lambda job=job: job.waited.append(True)

    monkeypatch.setattr(
        submitit.AutoExecutor, "map_array", lambda self, fn, *args: jobs, raising=False
    )

    def launch(self, job_overrides, initial_job_idx):
        submitted = submitit.AutoExecutor.map_array(None, None, job_overrides)
        raise UncompletedJobError(
            f"Job {submitted[0].job_id} (task: 0) with path ... has not produced "
            "any output (state: FINISHED)"
        )

    monkeypatch.setattr(BaseSubmititLauncher, "launch", launch)
    before = submitit.AutoExecutor.__dict__["map_array"]
    launch_failures.install(
        "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"
    )
    overrides = [["dataset=sonar", "method=svm"], ["dataset=wpbc", "method=svm"]]
    with pytest.raises(SystemExit) as exit_:
        object.__new__(BaseSubmititLauncher).launch(overrides, 0)
    assert exit_.value.code == 1
    assert all(job.waited for job in jobs)
    assert submitit.AutoExecutor.__dict__["map_array"] is before  # restored
    err = capsys.readouterr().err
    assert err.startswith(
        "kml-run: 1 submitit job ended without a result (killed, or out of time or "
        "memory):\n  Job 101: dataset=sonar method=svm  (its log: "
    ), err
    assert "dataset=wpbc" not in err.split("kml-run summary")[0]
    assert "kml-run summary: 1 ok, 0 cached, 0 skipped, 1 failed (2 runs)" in err


def test_a_killed_joblib_worker_in_a_real_sweep(tmp_path):
    """End to end: a method of one's own whose fit kills its worker process."""
    exe = shutil.which("kml-run", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("kml-run is not installed in this environment")
    (tmp_path / "myconf" / "method").mkdir(parents=True)
    (tmp_path / "killer.py").write_text(
        "import os, signal\n"
        "from sklearn.base import BaseEstimator, ClassifierMixin\n"
        "class Killer(ClassifierMixin, BaseEstimator):\n"
        "    def __init__(self, kernel='precomputed'):\n"
        "        self.kernel = kernel\n"
        "    def fit(self, X, y):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    def __sklearn_tags__(self):\n"
        "        tags = super().__sklearn_tags__()\n"
        "        tags.input_tags.pairwise = self.kernel == 'precomputed'\n"
        "        return tags\n"
    )
    (tmp_path / "myconf" / "method" / "killer.yaml").write_text(
        "_target_: killer.Killer\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path),
        "KML_RESULTS": str(tmp_path / "results"),
        "KML_OUTPUTS": str(tmp_path / "outputs"),
        "KML_JOBS": "2",
        "KML_OFFLINE": "1",
    }
    out = subprocess.run(
        [exe, "-m", "dataset=sonar,wpbc", "method=killer", "protocol=smoke",
         f"hydra.searchpath=[file://{tmp_path}/myconf]"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "kml-run: a worker process died under the sweep (exit codes {" in text
    assert "SIGKILL(-9)" in text
    assert "kml-run summary: 0 ok, 0 cached, 0 skipped, 2 failed (2 runs)" in text
    assert "Traceback" not in text, text
