"""``kml-run`` as a user runs it: the closing summary and the exit status.

Each test runs the real console script (or ``python -m runners.run``) in a
subprocess with private result/output folders, and checks the exit code: 1 when a
run failed (invalid C, a checksum mismatch in a tampered mirror copy, missing data),
for a single run and for a Hydra multirun sweep; 0 otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from datasets import default_mirror

REPO = Path(__file__).resolve().parents[2]
SMOKE = ["protocol=smoke", "search.grids.default.C=[1,10]"]


def kml_run(
    tmp: Path, *args: str, module: bool = False, **env: str
) -> subprocess.CompletedProcess:
    if module:
        cmd = [sys.executable, "-m", "runners.run"]
    else:
        exe = shutil.which("kml-run", path=str(Path(sys.executable).parent))
        if exe is None:
            pytest.skip("kml-run is not installed in this environment")
        cmd = [exe]
    full_env = {
        **os.environ,
        "KML_RESULTS": str(tmp / "results"),
        "KML_OUTPUTS": str(tmp / "outputs"),
        "KML_JOBS": "1",
        "KML_OFFLINE": "1",
        "KML_CACHE": str(tmp / "cache"),
        **env,
    }
    out = subprocess.run(
        [*cmd, *args],
        cwd=REPO if module else tmp,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out.text = out.stdout + out.stderr  # Hydra logs the parent's lines to stdout
    return out


def _records(tmp: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(tmp.rglob("results/**/*.json"))]


def _failed_record(out: subprocess.CompletedProcess) -> dict:
    line = next(x for x in out.text.splitlines() if x.strip().startswith("record: "))
    return json.loads(Path(line.split("record: ", 1)[1]).read_text())


def test_single_run_ok_exits_0_then_cached(tmp_path):
    args = ["dataset=sonar", "method=svm", *SMOKE]
    out = kml_run(tmp_path, *args)
    assert out.returncode == 0, out.text
    assert "kml-run summary: 1 ok, 0 cached, 0 skipped, 0 failed (1 run)" in out.text
    out = kml_run(tmp_path, *args)
    assert out.returncode == 0, out.text
    assert "kml-run summary: 0 ok, 1 cached, 0 skipped, 0 failed (1 run)" in out.text


def test_invalid_c_stops_before_the_run(tmp_path):
    out = kml_run(
        tmp_path, "dataset=sonar", "method=svm", "protocol=smoke",
        "search.grids.default.C=[-1]",
    )
    assert out.returncode == 1, out.text
    assert "kml-run: no run was started: invalid config:" in out.text
    assert "search.grids.default.C=-1: The 'C' parameter of SVM" in out.text
    assert not _records(tmp_path)


def test_own_method_without_pythonpath_stops_before_the_run(tmp_path):
    # README "Comparing a method of your own", run without PYTHONPATH=$PWD: the
    # module is found by nothing, and used to fail in the job as an error record
    (tmp_path / "mine.py").write_text("class Mine:\n    pass\n")
    (tmp_path / "myconf" / "method").mkdir(parents=True)
    (tmp_path / "myconf" / "method" / "mine.yaml").write_text("_target_: mine.Mine\n")
    out = kml_run(
        tmp_path,
        "-m",
        "experiment=mlsvm_table1",
        "dataset=sonar",
        "kernel=linear",
        "method=mine",
        f"hydra.searchpath=[file://{tmp_path}/myconf]",
        PYTHONPATH="",
    )
    assert out.returncode == 1, out.text
    assert "no job was started" in out.text
    assert "method._target_=mine.Mine: no module named 'mine'" in out.text
    assert "PYTHONPATH=$PWD" in out.text
    assert not (tmp_path / "results").exists()


GRID_SETS_C = (
    "kml-run: method.C=100 is not used: the search grid sets C in every fit "
    "(search.grids.default.C); override the grid instead, e.g. "
    "search.grids.default.C=[100]"
)


@pytest.mark.parametrize(
    "args",
    [
        ["dataset=sonar", "method=svm"],
        ["-m", "dataset=sonar", "method=svm,eps_svm"],  # once for the sweep
    ],
)
def test_a_method_value_the_grid_replaces_is_warned_once(tmp_path, args):
    # it used to be ignored without a word (the grid chooses C in every fit)
    out = kml_run(tmp_path, *args, *SMOKE, "method.C=100")
    assert out.returncode == 0, out.text
    assert out.text.count(GRID_SETS_C) == 1, out.text


# a run that fails only once it runs: the inner CV needs more samples than it has
FAILS_IN_RUN = ["protocol.inner_folds=200", "search.grids.svm.C=[1,10]"]


def test_failed_run_exits_1_and_names_the_record(tmp_path):
    out = kml_run(
        tmp_path, "dataset=sonar", "method=svm", "protocol=smoke", *FAILS_IN_RUN
    )
    assert out.returncode == 1, out.text
    assert "0 ok, 0 cached, 0 skipped, 1 failed (1 run)" in out.text
    assert "FAILED sonar svm[kernel=linear]: ProtocolError" in out.text
    rec = _failed_record(out)
    assert rec["status"] == "error" and "protocol.inner_folds" in rec["reason"]


def test_checksum_mismatch_exits_1(tmp_path):
    mirror = default_mirror()
    if not (mirror / "sonar" / "sonar.tsv.gz").is_file():
        pytest.skip(f"dataset mirror not found at {mirror}")
    tampered = tmp_path / "mirror" / "sonar" / "sonar.tsv.gz"
    tampered.parent.mkdir(parents=True)
    shutil.copyfile(mirror / "sonar" / "sonar.tsv.gz", tampered)
    with open(tampered, "ab") as fh:
        fh.write(b"x")
    out = kml_run(
        tmp_path, "dataset=sonar", *SMOKE, module=True,
        DATA_MIRROR=str(tmp_path / "mirror"),
    )
    assert out.returncode == 1, out.text
    assert "FAILED sonar svm[kernel=linear]: ChecksumMismatchError" in out.text
    assert _failed_record(out)["reason"].startswith("ChecksumMismatchError")


def test_missing_data_exits_1(tmp_path):
    (tmp_path / "empty").mkdir()
    out = kml_run(
        tmp_path, "dataset=sonar", *SMOKE, module=True,
        DATA_MIRROR=str(tmp_path / "empty"),
    )
    assert out.returncode == 1, out.text
    assert "FAILED sonar svm[kernel=linear]: DatasetUnavailableError" in out.text
    # a multi-line reason stays inside the summary's indented block
    assert "\n      - mirror: " in out.text or "\n    Places tried" in out.text


def test_a_sweep_stops_before_any_job_when_a_dataset_is_found_nowhere(tmp_path):
    # a wrong DATA_MIRROR used to be found by each job: one failed record per job
    (tmp_path / "empty").mkdir()
    out = kml_run(
        tmp_path,
        "-m",
        "dataset=sonar,ovarian",  # ovarian has no public copy: a skip, not this
        "method=svm,eps_svm",
        *SMOKE,
        DATA_MIRROR=str(tmp_path / "empty"),
    )
    assert out.returncode == 1, out.text
    assert (
        "kml-run: no job was started; a dataset the sweep needs is found nowhere.\n"
        "Dataset 'sonar' is unavailable: no copy of sonar/sonar.tsv.gz was found."
    ) in out.text
    assert f"mirror: {tmp_path / 'empty' / 'sonar'}" in out.text  # places tried
    assert out.text.count("Dataset 'sonar' is unavailable") == 1
    assert "ovarian" not in out.text.split("found nowhere.", 1)[1]
    assert not (tmp_path / "results").exists()


def test_only_a_sweep_run_here_checks_the_data_up_front():
    """Ray and SLURM jobs read DATA_MIRROR on their own nodes."""
    from omegaconf import OmegaConf

    from runners.callbacks import _runs_here

    def launcher(target: str):
        return OmegaConf.create({"hydra": {"launcher": {"_target_": target}}})

    plugins = "hydra_plugins.hydra_"
    assert _runs_here(
        launcher(f"{plugins}joblib_launcher.joblib_launcher.JoblibLauncher")
    )
    assert _runs_here(
        launcher(f"{plugins}submitit_launcher.submitit_launcher.LocalLauncher")
    )
    assert not _runs_here(launcher(f"{plugins}ray_launcher.ray_launcher.RayLauncher"))
    assert not _runs_here(
        launcher(f"{plugins}submitit_launcher.submitit_launcher.SlurmLauncher")
    )


def test_sweep_summary_counts_and_exit_status(tmp_path):
    sweep = [
        "-m",
        "dataset=sonar,ovarian",  # ovarian has no public copy: skipped
        "method=svm,fda",
        "protocol=smoke",
        *FAILS_IN_RUN,  # svm fails, fda has no grid (no inner CV)
    ]
    out = kml_run(tmp_path, *sweep)
    assert out.returncode == 1, out.text
    assert "kml-run summary: 1 ok, 0 cached, 2 skipped, 1 failed (4 runs)" in out.text
    assert "FAILED sonar svm[kernel=linear]" in out.text
    assert _failed_record(out)["status"] == "error"
    # the rerun retries the failure and reuses the rest
    out = kml_run(tmp_path, *sweep)
    assert out.returncode == 1, out.text
    assert "kml-run summary: 0 ok, 3 cached, 0 skipped, 1 failed (4 runs)" in out.text
    # every run's record holds the overrides Hydra gave its job
    by_cell = {(r["dataset"], r["method"]): r["overrides"] for r in _records(tmp_path)}
    assert by_cell[("sonar", "fda")] == [
        "dataset=sonar",
        "method=fda",
        "protocol=smoke",
        *FAILS_IN_RUN,
    ]
    # svm's grid is not part of fda's key
    out = kml_run(
        tmp_path, "-m", "dataset=sonar", "method=fda", "protocol=smoke", FAILS_IN_RUN[0]
    )
    assert out.returncode == 0, out.text
    assert "kml-run summary: 0 ok, 1 cached, 0 skipped, 0 failed (1 run)" in out.text


@pytest.mark.parametrize(
    "args,message",
    [
        (["kernel=poly2", "kernel.degree=0"], "kernel.degree=0: the polynomial degree"),
        (["-m", "dataset=sonar,wpbc", "kernel=gauss1", "kernel.sigma=1,-1"],
         "kernel.sigma=-1.0: the Gaussian width must be a number > 0"),
        (["-m", "dataset=sonar,wpbc", "protocol.kind=nested_cv,nestd"],
         "expected one of [nested_cv, repeated_splits, train_val_test, "),
        (
            ["-m", "experiment=mlsvm_table1", "dataset=sonar",
             "search.grids.default.C=[]"],
            "search.grids.default.C=[]: must be a non-empty list",
        ),
        # a bad name in one of several swept values: the sweep check composes one
        # job per override line, since Hydra's own batch check skips its jobs
        # (an added search path turns off kml-run's own name check, below, which
        # would otherwise answer first)
        (
            ["-m", "dataset=sonar", "method=svm,svmx", "protocol=smoke",
             "hydra.searchpath=[]"],
            "Could not find 'method/svmx'",
        ),
        (
            ["-m", "dataset=sonar,wpbcx", "method=svm", "protocol=smoke",
             "hydra.searchpath=[]"],
            "Could not find 'dataset/wpbcx'",
        ),
        # the estimator check depends on the method: the one bad (method, grid) of
        # a sweep is composed although its grid line alone was seen with svm
        (
            ["-m", "dataset=sonar", "search.grids.eps_svm.C=[1],[-1]",
             "method=svm,eps_svm", "protocol=smoke"],
            "search.grids.eps_svm.C=-1: The 'C' parameter of EpsSVM",
        ),
        # and on kernel=none (features to a Gram-matrix method): the one bad
        # (method, kernel) pair is composed although each line was seen before
        (
            ["-m", "dataset=sonar", "method=svm,lmnn_h", "kernel=linear,none",
             "protocol=smoke"],
            "method.kernel='precomputed' with kernel=none",
        ),
        # kml-run's name check (runners/choices.py), before Hydra starts
        (
            ["-m", "dataset=sonar,wpbcx", "method=svm", "protocol=smoke"],
            "dataset=wpbcx: no such dataset (did you mean wpbc",
        ),
        # a reversed range sweeps nothing: it used to end "0 ok, ... (0 runs)",
        # status 0, as if the sweep were done
        (
            ["-m", "dataset=sonar", "method=svm", "protocol=smoke",
             "seed=range(3,1)"],
            "the sweep has no job: an override sweeps an empty range or list",
        ),
    ],
)
def test_bad_config_stops_before_any_job(tmp_path, args, message):
    out = kml_run(tmp_path, *args)
    assert out.returncode == 1, out.text
    assert message in out.text
    assert "no job was started" in out.text or "no run was started" in out.text \
        or "Error merging override" in out.text
    assert not (tmp_path / "results").exists()  # no error record written


def _stopped_run(stop: str, setup: str = "") -> subprocess.CompletedProcess:
    """``kml-run experiment=kdml_fig1`` whose first step (the cached-sweep check)
    runs ``stop``, after ``setup``: the signal arrives while the sweep runs."""
    code = (
        "import os, signal, time, runners.run as r, runners.rerun as rr\n"
        + setup
        + "def stop(argv):\n"
        + "".join(f"    {line}\n" for line in stop.splitlines())
        + "rr.cached_sweep = stop\n"
        "r.main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "experiment=kdml_fig1"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )


def test_ctrl_c_says_what_is_kept_and_dies_of_sigint():
    """Ctrl-C used to end in a 40-line traceback from joblib's wait loop; it says
    what is kept and how to resume, and still dies of SIGINT, so that a calling
    shell loop or make stops too (an exit status of 130 would let them go on)."""
    import signal

    proc = _stopped_run(
        "raise KeyboardInterrupt", "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    )
    assert proc.returncode == -signal.SIGINT, proc.stderr
    assert "kml-run: interrupted. Finished runs keep their records" in proc.stderr
    assert "rerun the same command to resume" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_ctrl_c_with_workers_leaves_no_leaked_semaphore_warning():
    """Dying of SIGINT skipped the exit handlers: with the joblib launcher's
    workers started, loky's resource tracker warned of leaked semlock objects."""
    import signal

    proc = _stopped_run(
        "raise KeyboardInterrupt",
        "from joblib.externals.loky import get_reusable_executor\n"
        "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
        "get_reusable_executor(max_workers=1).submit(abs, -1).result()\n",
    )
    assert proc.returncode == -signal.SIGINT, proc.stderr
    assert "kml-run: interrupted." in proc.stderr
    assert "leaked" not in proc.stderr, proc.stderr


def test_sigterm_stops_the_sweep_as_ctrl_c_does_and_dies_of_it():
    """`kill -- -PGID` (or `timeout`) used to end in joblib's traceback and
    warnings; it says what is kept and dies of SIGTERM."""
    import signal

    proc = _stopped_run("os.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(30)")
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert "kml-run: terminated (SIGTERM). Finished runs keep" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_results_folder_that_cannot_be_written_stops_before_any_job(tmp_path):
    """A results folder behind a dangling symlink (a share not mounted): a sweep
    waited forever for split claims it took for another worker's, and a folder
    that could not be written ended each job in a traceback after its work."""
    (tmp_path / "results").symlink_to(tmp_path / "not-mounted" / "results")
    sweep = ["-m", "dataset=sonar,wpbc", "method=fda", "protocol=smoke"]
    out = kml_run(tmp_path, *sweep)
    assert out.returncode == 1, out.text
    assert (
        f"kml-run: no job was started: cannot write records under the results "
        f"folder {tmp_path / 'results'} (paths.results; KML_RESULTS sets it; "
        f"{tmp_path / 'results'} is a symlink to {tmp_path / 'not-mounted'}"
    ) in out.text, out.text
    assert "Traceback" not in out.text
    out = kml_run(tmp_path, "dataset=sonar", "method=fda", "protocol=smoke")
    assert out.returncode == 1, out.text
    assert "kml-run: no run was started: cannot write records under" in out.text
    # Hydra's logs: a traceback from Hydra's mkdir of the sweep's folder
    (tmp_path / "outputs").symlink_to(tmp_path / "not-mounted" / "outputs")
    out = kml_run(tmp_path, *sweep, KML_RESULTS=str(tmp_path / "ok"))
    assert out.returncode == 1, out.text
    assert (
        "kml-run: no job was started: cannot write Hydra's logs under the outputs "
        f"folder {tmp_path / 'outputs'} (paths.outputs; KML_OUTPUTS sets it; "
    ) in out.text, out.text
    assert "Traceback" not in out.text


def test_sigterm_turned_into_a_plain_interrupt_still_says_sigterm():
    """Ray's get catches the Terminated raised in it and raises a plain
    KeyboardInterrupt: a TERM to a Ray sweep said "interrupted" and exited 130."""
    import signal

    proc = _stopped_run(
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(30)\n"
        "except KeyboardInterrupt:\n"
        "    raise KeyboardInterrupt from None"
    )
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert "kml-run: terminated (SIGTERM). Finished runs keep" in proc.stderr


def test_a_leading_tilde_in_the_folders_means_home(tmp_path):
    """The shell leaves ``~`` in ``paths.results=~/res`` (not a word start) and in a
    quoted ``KML_OUTPUTS='~/out'``: both are the user's home, not a folder ``~``."""
    home = tmp_path / "home"
    home.mkdir()
    out = kml_run(
        tmp_path, "dataset=sonar", "method=svm", *SMOKE, "paths.results=~/res",
        HOME=str(home), KML_OUTPUTS="~/out",
    )
    assert out.returncode == 0, out.text
    assert list((home / "res").rglob("*.json")), out.text
    assert (home / "out").is_dir()
    assert not (tmp_path / "~").exists()


def test_expand_home_touches_only_the_folder_overrides(monkeypatch):
    from runners.run import expand_home

    monkeypatch.setenv("HOME", "/h")
    monkeypatch.setenv("KML_RESULTS", "~/r")
    given = [
        "paths.results=~/a", "++paths.outputs=~", "method.name=~x", "paths.results=a~"
    ]
    assert expand_home(given) == [
        "paths.results=/h/a", "++paths.outputs=/h", "method.name=~x", "paths.results=a~"
    ]
    assert os.environ["KML_RESULTS"] == "/h/r"
