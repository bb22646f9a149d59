"""Sweeps through submitit's local executor (``hydra/launcher=submitit_local``).

The same launcher plugin and job settings as ``hydra/launcher=slurm``, run as local
processes: the path a SLURM sweep takes (pickled job, submitit folder, result
collection) is exercised without a SLURM cluster.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster.cluster_sweeps import (
    BIN,
    ONE_JOB,
    SWEEP,
    assert_same_predictions,
    kml_run,
    load_records,
    require,
    sweep_env,
)

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _submitit_available() -> bool:
    try:
        import hydra_plugins.hydra_submitit_launcher.submitit_launcher  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(autouse=True)
def _needs_submitit():
    require(_submitit_available(), "hydra-submitit-launcher not installed")


def test_submitit_local_sweep_equals_joblib(joblib_reference, tmp_path) -> None:
    proc = kml_run([*SWEEP, "hydra/launcher=submitit_local"], sweep_env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Submitit 'local' sweep output dir" in proc.stderr + proc.stdout
    assert_same_predictions(load_records(tmp_path / "results"), joblib_reference)


def _launcher_config(name: str) -> dict:
    import yaml

    proc = subprocess.run(
        [
            str(BIN / "kml-run"),
            *ONE_JOB,
            f"hydra/launcher={name}",
            "--cfg",
            "hydra",
            "--package",
            "hydra.launcher",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return yaml.safe_load(proc.stdout)


def test_slurm_and_submitit_local_share_the_job_settings() -> None:
    """What the local test exercises is what goes to SLURM: same plugin, same jobs."""
    slurm = _launcher_config("slurm")
    local = _launcher_config("submitit_local")
    assert slurm["_target_"].endswith("submitit_launcher.SlurmLauncher")
    assert local["_target_"].endswith("submitit_launcher.LocalLauncher")
    shared = (
        "submitit_folder",
        "timeout_min",
        "cpus_per_task",
        "gpus_per_node",
        "tasks_per_node",
        "mem_gb",
        "nodes",
        "name",
        "stderr_to_stdout",
    )
    assert {k: slurm[k] for k in shared} == {k: local[k] for k in shared}


def _submitit_job_pids(root: Path) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "submitit.core._submit" in cmd and str(root) in cmd:
            pids.append(int(d.name))
    return pids


def test_killed_submitit_job_fails_loudly_then_resumes(
    joblib_reference, tmp_path
) -> None:
    """A job killed mid-run: the sweep exits non-zero naming it; a rerun finishes it.

    submitit's local executor does not requeue a killed job (SLURM requeues only on
    preemption or timeout, with max_num_timeout); the record store makes the rerun
    compute only what is missing.
    """
    env = sweep_env(tmp_path)
    sweep = subprocess.Popen(
        [str(BIN / "kml-run"), "-m", *ONE_JOB, "hydra/launcher=submitit_local"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    killed = None
    deadline = time.monotonic() + 300
    try:
        while killed is None and sweep.poll() is None:
            assert time.monotonic() < deadline, "the submitit job never started"
            for pid in _submitit_job_pids(tmp_path):
                os.kill(pid, signal.SIGKILL)
                killed = pid
            time.sleep(0.05)
        out, _ = sweep.communicate(timeout=600)
    finally:
        if sweep.poll() is None:
            sweep.kill()
    assert killed is not None, "the job finished before it could be killed"
    assert sweep.returncode != 0, "a killed job must fail the sweep"
    assert "Job" in out and ("killed" in out.lower() or "fail" in out.lower()), out[
        -3000:
    ]
    # one paragraph naming the job by its overrides, then the summary
    assert "kml-run: 1 submitit job ended without a result" in out, out[-3000:]
    assert "kml-run summary: 0 ok, 0 cached, 0 skipped, 1 failed (1 run)" in out
    assert "Traceback" not in out, out[-3000:]
    assert load_records(tmp_path / "results") == {}  # no partial record
    proc = kml_run([*ONE_JOB, "hydra/launcher=submitit_local"], env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = load_records(tmp_path / "results")
    name = next(iter(got))
    assert_same_predictions(got, {name: joblib_reference[name]})


def test_no_schema_matching_warning(tmp_path) -> None:
    """Hydra's note that submitit_local.yaml is matched against the plugin's schema
    of the same name (4 lines, twice before any job) is for the config's author,
    not the user: kml-run leaves it out. A bad config stops the sweep at once."""
    proc = kml_run(
        [*ONE_JOB, "kernel.sigma=0", "hydra/launcher=submitit_local"],
        sweep_env(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "kml-run: no job was started" in proc.stderr, proc.stderr[-3000:]
    assert "validated against ConfigStore schema" not in proc.stderr, proc.stderr
