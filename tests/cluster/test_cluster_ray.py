"""Sweeps on a real local Ray cluster (``hydra/launcher=ray``, conf/hydra/launcher).

A Ray head is started on 127.0.0.1 with ``ray start --head --block`` in a session of
its own (Ray's workers get process groups of their own, but stay in it); the fixture
stops it through that session's processes (never ``ray stop``, which would stop every
Ray on the machine) and checks that nothing of it is left.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
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


def _ray_available() -> bool:
    try:
        import hydra_plugins.hydra_ray_launcher.ray_launcher  # noqa: F401
        import ray  # noqa: F401
    except ImportError:
        return False
    return (BIN / "ray").exists()


def _ray_env(**extra: str) -> dict[str, str]:
    """Token authentication off for the test cluster, whatever ~/.ray holds: Ray
    2.60 turns it on in `ray start` when a token file exists (a local `ray.init()`
    writes one), which the sweep's client then fails to present."""
    return {**os.environ, "RAY_AUTH_MODE": "disabled", **extra}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session_pids(sid: int) -> list[int]:
    """Live processes of session ``sid``: the head and everything Ray started."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # session; zombies are gone
            pids.append(int(d.name))
    return pids


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.fixture(scope="module")
def ray_head():
    """``RAY_ADDRESS`` of a fresh single-node cluster; stopped at teardown."""
    require(_ray_available(), "ray and hydra-ray-launcher not installed")
    port = _free_port()
    # Ray's socket paths must stay short: a temp dir of its own under /tmp
    temp_dir = tempfile.mkdtemp(prefix="kml-ray-")
    log = open(Path(temp_dir) / "head.log", "w")  # noqa: SIM115
    head = subprocess.Popen(
        [
            str(BIN / "ray"),
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp_dir}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=_ray_env(),
        start_new_session=True,  # its own session: every Ray process is found by it
    )
    address = f"127.0.0.1:{port}"
    try:
        # `ray start --block` logs this line once the head is up; on a loaded
        # machine that can take minutes
        log_path = Path(temp_dir) / "head.log"
        deadline = time.monotonic() + 300
        while "Ray runtime started" not in log_path.read_text():
            assert head.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, "the Ray head did not come up"
            time.sleep(1)
        yield {"address": address, "sid": head.pid}
    finally:
        # `ray start --block` stops what it started on SIGTERM; then whatever is
        # left of the session (if anything) is killed, and none may survive
        head.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while _session_pids(head.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        for pid in _session_pids(head.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        head.wait(timeout=30)
        time.sleep(1)
        log.close()
        left = [(p, _cmdline(p)[:80]) for p in _session_pids(head.pid)]
        assert not left, f"Ray processes left after the head was stopped: {left}"


def test_ray_sweep_equals_joblib(ray_head, joblib_reference, tmp_path) -> None:
    env = sweep_env(tmp_path, RAY_ADDRESS=ray_head["address"], RAY_AUTH_MODE="disabled")
    proc = kml_run([*SWEEP, "hydra/launcher=ray"], env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Ray Launcher is launching 4 jobs" in proc.stderr + proc.stdout
    # every job's forwarded progress line, without Ray's colour codes (the output
    # is a pipe), then the summary
    lines = proc.stdout.splitlines()
    progress = [i for i, line in enumerate(lines) if line.startswith("(_run_job pid=")]
    assert len(progress) == 4, proc.stdout
    assert all(f"[{k}/4] ok " in proc.stdout for k in range(1, 5)), proc.stdout
    assert "kml-run summary: 4 ok," in lines[-1] and progress[-1] < len(lines) - 1
    assert "\x1b[" not in proc.stderr + proc.stdout
    assert_same_predictions(load_records(tmp_path / "results"), joblib_reference)
    # a second sweep resumes: every record is cached, nothing is recomputed
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "results").rglob("*.json")}
    proc = kml_run([*SWEEP, "hydra/launcher=ray"], env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "results").rglob("*.json")}
    assert before == after


def test_killed_ray_worker_is_retried(ray_head, joblib_reference, tmp_path) -> None:
    """SIGKILL the worker running the job: Ray reruns it (max_retries in ray.yaml)."""
    env = sweep_env(tmp_path, RAY_ADDRESS=ray_head["address"], RAY_AUTH_MODE="disabled")
    sweep = subprocess.Popen(
        [str(BIN / "kml-run"), "-m", *ONE_JOB, "hydra/launcher=ray"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    killed = None
    deadline = time.monotonic() + 300
    try:
        while killed is None and sweep.poll() is None:
            assert time.monotonic() < deadline, "no worker ever ran the job"
            for pid in _session_pids(ray_head["sid"]):
                if _cmdline(pid).startswith("ray::_run_job"):
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                    break
            time.sleep(0.05)
        out, _ = sweep.communicate(timeout=600)
    finally:
        if sweep.poll() is None:
            sweep.kill()
    assert killed is not None, "the job finished before its worker could be killed"
    assert sweep.returncode == 0, out[-3000:]
    got = load_records(tmp_path / "results")
    assert len(got) == 1
    name = next(iter(got))
    assert_same_predictions(got, {name: joblib_reference[name]})


def test_dead_ray_address_stops_the_sweep_at_once(tmp_path) -> None:
    """RAY_ADDRESS with no head: one line naming it, no job, in seconds (ray.init
    used to retry it for minutes, logging "Failed to connect to GCS")."""
    require(_ray_available(), "ray and hydra-ray-launcher not installed")
    address = f"127.0.0.1:{_free_port()}"  # closed again: nothing listens there
    env = sweep_env(tmp_path, RAY_ADDRESS=address, RAY_AUTH_MODE="disabled")
    tic = time.monotonic()
    proc = kml_run([*ONE_JOB, "hydra/launcher=ray"], env, timeout=60)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert time.monotonic() - tic < 30
    assert f"kml-run: no job was started: no Ray cluster answers at {address}" in (
        proc.stderr
    ), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    # Hydra's schema-matching note on ray.yaml (for the config's author) is left out
    assert "validated against ConfigStore schema" not in proc.stderr, proc.stderr
    assert not (tmp_path / "results").exists()
