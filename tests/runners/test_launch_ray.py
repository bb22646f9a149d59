"""What kml-run adds to the Ray launcher, checked without a Ray cluster.

A RAY_ADDRESS that no head answers is named at once (``ray.init`` retried it for
minutes), relative result and output folders reach the workers absolute (each
worker resolved them where its ``ray start`` ran), and a cluster that fails under
the sweep ends it with one line and the summary (Ray's traceback did). The sweep
through ``kml-run`` on a dead address is in tests/cluster/test_cluster_ray.py (it
needs the plugin).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from runners import launch_ray
from runners.callbacks import PROGRESS_ENV, SIZE_ENV
from runners.launch_ray import absolute_path, address_problem, install
from runners.run import CONF_DIR


def _dead_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_dead_address_is_named_with_the_fix(scheme):
    address = f"{scheme}127.0.0.1:{_dead_port()}"
    problem = address_problem(address, timeout=2)
    assert problem is not None
    assert problem.startswith(f"no Ray cluster answers at {address} (")
    assert "RAY_ADDRESS" in problem and "ray start --head" in problem
    assert "\n" not in problem


def test_a_listening_head_passes():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert address_problem(f"127.0.0.1:{s.getsockname()[1]}", timeout=2) is None


@pytest.mark.parametrize("address", ["auto", "local", "", None, "HEAD_HOST"])
def test_addresses_ray_resolves_itself_are_not_tried(address):
    assert address_problem(address, timeout=0.01) is None


def test_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert absolute_path("results") == str(tmp_path / "results")
    assert absolute_path("/shared/kml/results") == "/shared/kml/results"
    assert absolute_path("") == ""


@pytest.mark.parametrize(
    "results,outputs", [("rel/results", "rel/outputs"), (None, None)]
)
def test_ray_workers_get_absolute_folders(tmp_path, monkeypatch, results, outputs):
    """What ray.yaml hands the workers is absolute, relative to kml-run's folder."""
    monkeypatch.chdir(tmp_path)
    for name, value in (("KML_RESULTS", results), ("KML_OUTPUTS", outputs)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose(
            "config", overrides=["hydra/launcher=ray"], return_hydra_config=True
        )
    env = cfg.hydra.launcher.ray.init.runtime_env.env_vars
    assert Path(env.KML_RESULTS) == tmp_path / (results or "results")
    assert Path(env.KML_OUTPUTS) == tmp_path / (outputs or "outputs")


@pytest.fixture
def ray_launcher(monkeypatch):
    """The plugin's RayLauncher class; its ``launch`` is restored after the test."""
    module = pytest.importorskip("hydra_plugins.hydra_ray_launcher.ray_launcher")
    monkeypatch.setattr(module.RayLauncher, "launch", module.RayLauncher.launch)
    monkeypatch.setattr(launch_ray, "_forwarded", None)  # install() sets it
    return module.RayLauncher


@pytest.mark.parametrize("tty", [False, True])
def test_driver_log_env(monkeypatch, tty):
    """No deduplication of the jobs' lines; no colour codes off a terminal; the
    user's own settings kept."""
    import os
    import sys

    from runners.launch_ray import driver_log_env

    for name in ("RAY_DEDUP_LOGS", "RAY_COLOR_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty, raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty, raising=False)
    driver_log_env()
    assert os.environ["RAY_DEDUP_LOGS"] == "0"
    assert os.environ.get("RAY_COLOR_PREFIX") == (None if tty else "0")
    monkeypatch.setenv("RAY_DEDUP_LOGS", "1")
    monkeypatch.setenv("RAY_COLOR_PREFIX", "1")
    driver_log_env()
    assert os.environ["RAY_DEDUP_LOGS"] == os.environ["RAY_COLOR_PREFIX"] == "1"


def _batch(*lines: str) -> dict:
    return {"pid": 7, "ip": "127.0.0.1", "is_err": False, "lines": list(lines)}


def test_summary_waits_for_the_forwarded_progress_lines(ray_launcher, monkeypatch):
    """Lines reach Ray's dispatcher late: the wait returns once all have been
    counted and Ray's printer (added after our counter, by ray.init) has had them."""
    import threading
    import time

    lr = launch_ray
    dispatcher = lr._dispatcher()
    printed = []

    def printer(data):  # a slow terminal
        time.sleep(0.2)
        printed.extend(data["lines"])

    install()
    dispatcher.add_handler("test_printer", printer)
    try:
        lines = [
            f"03:13:2{k} [{k}/3] ok  sonar  svm[kernel=linear] 0.1s" for k in (1, 2, 3)
        ]

        def forward():
            dispatcher.emit(_batch("(not a progress line)", lines[0]))
            time.sleep(0.3)
            dispatcher.emit(_batch(*lines[1:]))

        t = threading.Thread(target=forward)
        tic = time.monotonic()
        t.start()
        lr.wait_for_forwarded_progress(3)
        assert 0.5 < time.monotonic() - tic < 3.0
        assert printed[-2:] == lines[1:]
        t.join()
        assert lr._forwarded.seen == 3
        # fewer lines than outcomes (a job logging elsewhere): ends after `quiet`
        tic = time.monotonic()
        lr.wait_for_forwarded_progress(4, quiet=0.2)
        assert time.monotonic() - tic < 1.0
        # a second sweep in the process counts from 0, with one handler
        install()
        assert lr._forwarded.seen == 0
        names = [name for name, _ in dispatcher.handlers]
        assert names.count(lr._ForwardedProgress.name) == 1
    finally:
        dispatcher.remove_handler("test_printer")
        dispatcher.remove_handler(lr._ForwardedProgress.name)


def test_the_wait_counts_quiet_from_its_own_start(ray_launcher, monkeypatch):
    """install() runs before the jobs start, seconds before the summary: a sweep
    whose every line was still on its way (none counted yet) returned at once, and
    its summary came before its lines (a 2-job Ray sweep taking 5 s)."""
    import threading
    import time

    lr = launch_ray
    dispatcher = lr._dispatcher()
    install()
    lr._forwarded.last -= 5.0  # the sweep's jobs took 5 s, no line has come yet
    try:
        lines = [f"03:39:1{k} [{k}/2] error  sonar  mine[kernel=linear]" for k in "12"]

        def forward():
            time.sleep(0.4)
            dispatcher.emit(_batch(*lines))

        t = threading.Thread(target=forward)
        tic = time.monotonic()
        t.start()
        lr.wait_for_forwarded_progress(2)
        waited = time.monotonic() - tic
        t.join()
        assert lr._forwarded.seen == 2
        assert 0.35 < waited < 2.0, waited
    finally:
        dispatcher.remove_handler(lr._ForwardedProgress.name)


def test_no_wait_outside_a_ray_sweep(monkeypatch):
    import time

    monkeypatch.setattr(launch_ray, "_forwarded", None)
    tic = time.monotonic()
    launch_ray.wait_for_forwarded_progress(100)
    assert time.monotonic() - tic < 0.1


def _sweep_so_far(tmp_path, monkeypatch, size: int, *finished: str) -> None:
    """A sweep of ``size`` jobs whose progress file holds one svm run (ok) on each
    dataset of ``finished``, as the closing summary reads it."""
    progress = tmp_path / "progress.log"
    progress.write_text(
        "".join(
            json.dumps({"status": "ok", "dataset": d, "label": "svm[kernel=linear]"})
            + "\n"
            for d in finished
        )
    )
    monkeypatch.setenv(PROGRESS_ENV, str(progress))
    monkeypatch.setenv(SIZE_ENV, str(size))


def test_a_cluster_failing_under_the_sweep_ends_with_its_summary(
    ray_launcher, tmp_path, monkeypatch, capsys
):
    """``ray stop`` mid-sweep: one line and the summary so far, status 1."""
    from ray.exceptions import LocalRayletDiedError

    def dies(self, job_overrides, initial_job_idx):
        raise LocalRayletDiedError()

    monkeypatch.setattr(ray_launcher, "launch", dies)
    _sweep_so_far(tmp_path, monkeypatch, 2, "sonar")
    install()
    install()  # idempotent: wrapped once
    launcher = object.__new__(ray_launcher)
    with pytest.raises(SystemExit) as exit_:
        launcher.launch([["dataset=sonar"], ["dataset=wpbc"]], 0)
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "kml-run: the Ray cluster failed under the sweep (LocalRayletDiedError: "
        "The task's local raylet died."
    ), err
    assert "rerun the same command to resume" in err
    assert "kml-run summary: 1 ok, 0 cached, 0 skipped, 1 failed (2 runs)" in err
    assert "Traceback" not in err


def test_a_job_whose_worker_died_every_try_is_named_the_others_waited_for(
    ray_launcher, tmp_path, monkeypatch, capsys
):
    """A cell killed by the out-of-memory killer on each try: the plugin raised
    WorkerCrashedError at the first such job and kml-run said the cluster had
    failed, while the sweep's other jobs were still running."""
    import ray
    from hydra_plugins.hydra_ray_launcher import _core
    from ray.exceptions import WorkerCrashedError

    monkeypatch.setattr(_core, "launch_job_on_ray", lambda *args: f"ref{len(args)}")
    waited = []

    def get(ref):
        waited.append(ref)
        if ref == "ref0":
            raise WorkerCrashedError()
        return "done"

    monkeypatch.setattr(ray, "get", get)

    def launch(self, job_overrides, initial_job_idx):
        refs = [_core.launch_job_on_ray(*([None] * k)) for k in range(2)]
        return [ray.get(ref) for ref in refs]

    monkeypatch.setattr(ray_launcher, "launch", launch)
    _sweep_so_far(tmp_path, monkeypatch, 2, "wpbc")
    install()
    submit = _core.launch_job_on_ray
    with pytest.raises(SystemExit) as exit_:
        object.__new__(ray_launcher).launch(
            [["dataset=sonar", "method=svm"], ["dataset=wpbc", "method=svm"]], 0
        )
    assert exit_.value.code == 1
    assert waited == ["ref0", "ref0", "ref1"]  # the plugin's get, then every job's
    assert _core.launch_job_on_ray is submit  # restored
    err = capsys.readouterr().err
    assert err.startswith(
        "kml-run: 1 job lost its Ray worker on every try (killed, e.g. by the "
        "out-of-memory killer, or crashed; hydra.launcher.ray.remote.max_retries="
    ), err
    assert "\n  dataset=sonar method=svm  (WorkerCrashedError: " in err
    assert "dataset=wpbc" not in err.split("kml-run summary")[0]
    assert "cluster failed" not in err
    assert "kml-run summary: 1 ok, 0 cached, 0 skipped, 1 failed (2 runs)" in err


def test_kml_runs_sigterm_handler_outlives_ray_init(ray_launcher, monkeypatch):
    """ray.init installs its own SIGTERM handler (sys.exit): a TERM to a Ray
    sweep printed Ray's C++ stack dump and exited 1, without kml-run's line."""
    import signal

    from hydra_plugins.hydra_ray_launcher import _core

    def ours(signum, frame):  # stands in for runners.run._terminate
        raise KeyboardInterrupt

    def rays(signum, frame):
        raise SystemExit(signum)

    def start_ray(init_cfg):
        signal.signal(signal.SIGTERM, rays)

    seen = []

    def launch(self, job_overrides, initial_job_idx):
        _core.start_ray(None)
        seen.append(signal.getsignal(signal.SIGTERM))
        return []

    monkeypatch.setattr(_core, "start_ray", start_ray)
    monkeypatch.setattr(ray_launcher, "launch", launch)
    previous = signal.signal(signal.SIGTERM, ours)
    try:
        install()
        object.__new__(ray_launcher).launch([["dataset=sonar"]], 0)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [ours]
    assert _core.start_ray is start_ray  # restored


def test_a_jobs_own_error_is_not_taken_for_the_cluster(ray_launcher, monkeypatch):
    """Anything but Ray's own failures (a job's raise_errors=true comes back as a
    RayTaskError) goes on to Hydra as before."""

    def fails(self, job_overrides, initial_job_idx):
        raise ValueError("a job's own error")

    monkeypatch.setattr(ray_launcher, "launch", fails)
    install()
    with pytest.raises(ValueError, match="a job's own error"):
        object.__new__(ray_launcher).launch([["dataset=sonar"]], 0)


def test_no_cluster_for_auto_is_one_line(ray_launcher, tmp_path, monkeypatch, capsys):
    """RAY_ADDRESS unset and no head here: ray.init's ConnectionError, in one line
    with the fix instead of a 37-line traceback."""
    message = "Could not find any running Ray instance. Please specify ..."

    def no_cluster(self, job_overrides, initial_job_idx):
        raise ConnectionError(message)

    monkeypatch.setattr(ray_launcher, "launch", no_cluster)
    _sweep_so_far(tmp_path, monkeypatch, 1)
    install()
    with pytest.raises(SystemExit) as exit_:
        object.__new__(ray_launcher).launch([["dataset=sonar"]], 0)
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"kml-run: no job was started: Ray found no cluster ({message}). Start a "
        "head on this machine (`ray start --head --port=6379`)"
    ), err
    assert "kml-run summary" not in err  # no job ran: nothing failed
