"""The cached fast path of ``kml-run`` (runners/rerun.py): taken only when every job
of the sweep has a finished record for the same configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runners import rerun

REPO = Path(__file__).resolve().parents[2]
FAST = "has its record (index .index/)"
SWEEP = [
    "experiment=mlsvm_table1",
    "dataset=sonar",
    "method=svm,fda",
    "kernel=linear",
    "protocol=smoke",
    "search.grids.default.C=[1,10]",
]


def kml_run(tmp: Path, *args: str, jobs: int | str = 1) -> subprocess.CompletedProcess:
    exe = shutil.which("kml-run", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("kml-run is not installed in this environment")
    env = {
        **os.environ,
        "KML_RESULTS": str(tmp / "results"),
        "KML_OUTPUTS": str(tmp / "outputs"),
        "KML_JOBS": str(jobs),
        "KML_OFFLINE": "1",
        "KML_CACHE": str(tmp / "cache"),
    }
    out = subprocess.run(
        [exe, *args], cwd=tmp, env=env, capture_output=True, text=True, timeout=600
    )
    out.text = out.stdout + out.stderr
    return out


@pytest.mark.parametrize("jobs", [1, 2])
def test_cached_rerun_skips_hydra_only_when_every_record_is_there(tmp_path, jobs):
    # jobs=2: the records are indexed by worker processes, whose environment holds
    # the sweep's bookkeeping variables (KML_SWEEP_ID, ...) that the parent's lookup
    # does not; the index must not depend on them
    out = kml_run(tmp_path, *SWEEP, jobs=jobs)
    assert out.returncode == 0, out.text
    assert "kml-run summary: 2 ok, 0 cached, 0 skipped, 0 failed (2 runs)" in out.text
    assert FAST not in out.text
    out = kml_run(tmp_path, *SWEEP, jobs=jobs)
    assert out.returncode == 0, out.text
    assert FAST in out.text
    assert "kml-run summary: 0 ok, 2 cached, 0 skipped, 0 failed (2 runs)" in out.text
    # a bad KML_JOBS: the one line and status of the normal path, though no
    # worker is needed
    out = kml_run(tmp_path, *SWEEP, jobs="abc")
    assert out.returncode == 1, out.text
    assert out.text.splitlines() == [
        "kml-run: no job was started: KML_JOBS=abc: expected the number of worker "
        "processes, a whole number other than 0, e.g. KML_JOBS=2 (negative: "
        "joblib's count, -1 = every CPU)"
    ], out.text
    # force=true always runs Hydra (and recomputes)
    out = kml_run(tmp_path, *SWEEP, "force=true")
    assert FAST not in out.text
    assert "2 ok, 0 cached" in out.text
    # a sweep with a job that has no record yet: the normal path, which runs it
    out = kml_run(tmp_path, *SWEEP[:2], "method=svm,fda,svmm", *SWEEP[3:])
    assert FAST not in out.text
    assert "1 ok, 2 cached" in out.text
    # a record removed since it was indexed: the normal path recomputes it
    records = sorted((tmp_path / "results" / "mlsvm_table1").rglob("svm[[]*.json"))
    assert len(records) == 1
    records[0].unlink()
    out = kml_run(tmp_path, *SWEEP)
    assert FAST not in out.text
    assert "1 ok, 1 cached" in out.text


def test_job_digest_follows_overrides_env_and_config_files(monkeypatch, tmp_path):
    job = ["dataset=sonar", "method=svm", "experiment=mlsvm_table1"]
    rerun._setting_digest.cache_clear()
    base = rerun.job_digest(job)
    assert rerun.job_digest(job) == base
    assert rerun.job_digest([*job, "seed=1"]) != base
    assert rerun.job_digest(list(reversed(job))) != base  # Hydra applies in order
    # an environment variable the config files read (paths.data_mirror)
    monkeypatch.setenv("DATA_MIRROR", str(tmp_path / "elsewhere"))
    rerun._setting_digest.cache_clear()
    assert rerun.job_digest(job) != base
    monkeypatch.delenv("DATA_MIRROR", raising=False)
    rerun._setting_digest.cache_clear()
    base = rerun.job_digest(job)
    # a path variable set to the default it has in the config files composes the same
    # job (`make` exports KML_RESULTS=results), so it indexes the same
    monkeypatch.delenv("KML_RESULTS", raising=False)
    rerun._setting_digest.cache_clear()
    base = rerun.job_digest(job)
    monkeypatch.setenv("KML_RESULTS", "results")
    rerun._setting_digest.cache_clear()
    assert rerun.job_digest(job) == base
    monkeypatch.setenv("KML_RESULTS", str(tmp_path / "store"))
    rerun._setting_digest.cache_clear()
    assert rerun.job_digest(job) != base
    monkeypatch.delenv("KML_RESULTS", raising=False)
    rerun._setting_digest.cache_clear()
    # the launcher's worker count is not part of a record's path
    monkeypatch.setenv("KML_JOBS", "7")
    rerun._setting_digest.cache_clear()
    assert rerun.job_digest(job) == base
    # an edited config file
    conf = tmp_path / "conf"
    shutil.copytree(rerun.CONF_DIR, conf)
    monkeypatch.setattr(rerun, "CONF_DIR", conf)
    rerun._setting_digest.cache_clear()
    same_files = rerun.job_digest(job)
    (conf / "protocol" / "smoke.yaml").write_text(
        (conf / "protocol" / "smoke.yaml").read_text() + "\n# edited\n"
    )
    rerun._setting_digest.cache_clear()
    assert rerun.job_digest(job) != same_files
    rerun._setting_digest.cache_clear()


@pytest.mark.parametrize(
    "argv",
    [
        ["dataset=sonar"],  # no experiment: a single run
        ["experiment=mlsvm_table1", "force=true"],
        ["-m", "experiment=mlsvm_table1"],
        ["experiment=mlsvm_table1", "paths.results=/elsewhere"],
        ["experiment=mlsvm_table1", "hydra/launcher=ray"],
        ["experiment=no_such_experiment"],
    ],
)
def test_fast_path_declines(argv, tmp_path, monkeypatch):
    monkeypatch.setenv("KML_RESULTS", str(tmp_path))
    assert rerun.cached_sweep(argv) is False


def test_fast_path_declines_once_a_method_file_of_ones_own_is_edited(
    tmp_path, monkeypatch
):
    """Such a file is in the record's key (method_sources) but not in the setting
    digest: edited, its jobs are new ones, and the old records must not be taken."""
    from runners.run import compose_config, key_config
    from runners.store import ResultStore, config_key

    own = tmp_path / "own_method_rerun.py"
    own.write_text("from methods import SVM as Own\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("KML_RESULTS", str(tmp_path / "results"))
    rerun._setting_digest.cache_clear()
    argv = [
        "experiment=mlsvm_table1",
        "dataset=sonar",
        "method=svm",
        "kernel=linear",
        "method._target_=own_method_rerun.Own",
    ]
    store = ResultStore(tmp_path / "results")
    for job in rerun._sweep_jobs("mlsvm_table1", argv):
        kc = key_config(compose_config(job))
        assert "method_sources" in kc
        path = store.path("mlsvm_table1", "sonar", "svm[kernel=linear]", config_key(kc))
        store.write(path, {"status": "ok", "key": config_key(kc), "config": kc})
        rerun.remember(tmp_path / "results", "mlsvm_table1", job, path)
    assert rerun.cached_sweep(argv) is True
    own.write_text("from methods import SVM as Own  # edited: other numbers\n")
    assert rerun.cached_sweep(argv) is False
    own.write_text("from methods import SVM as Own\n")  # as the records were made
    assert rerun.cached_sweep(argv) is True
    rerun._setting_digest.cache_clear()


def _indexed(tmp_path: Path, argv: list[str]) -> None:
    """Finished records of every job of ``argv``, indexed as a sweep leaves them."""
    from runners.run import compose_config, key_config
    from runners.store import ResultStore, config_key

    store = ResultStore(tmp_path / "results")
    for job in rerun._sweep_jobs("mlsvm_table1", argv):
        kc = key_config(compose_config(job))
        path = store.path("mlsvm_table1", "sonar", "svm[kernel=linear]", config_key(kc))
        store.write(path, {"status": "ok", "key": config_key(kc), "config": kc})
        rerun.remember(tmp_path / "results", "mlsvm_table1", job, path)


def test_a_cached_sweep_reports_a_bad_kml_jobs_as_the_normal_path_does(
    tmp_path, monkeypatch, capsys
):
    """It used to print the summary and exit 0: a typo in KML_JOBS went unnoticed
    until a sweep had work to do."""
    monkeypatch.setenv("KML_RESULTS", str(tmp_path / "results"))
    rerun._setting_digest.cache_clear()
    argv = ["experiment=mlsvm_table1", "dataset=sonar", "method=svm", "kernel=linear"]
    _indexed(tmp_path, argv)
    monkeypatch.setenv("KML_JOBS", "2")
    assert rerun.cached_sweep(argv) is True
    capsys.readouterr()
    monkeypatch.setenv("KML_JOBS", "abc")
    with pytest.raises(SystemExit) as stop:
        rerun.cached_sweep(argv)
    assert stop.value.code == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "kml-run: no job was started: KML_JOBS=abc: expected the number of worker "
        "processes, a whole number other than 0, e.g. KML_JOBS=2 (negative: "
        "joblib's count, -1 = every CPU)\n"
    )
    # a sweep on another launcher (which reads no KML_JOBS) misses the index: the
    # normal path decides, as ConfigCheck does from the launcher's own n_jobs
    assert rerun.cached_sweep([*argv, "hydra/launcher=ray"]) is False
    rerun._setting_digest.cache_clear()
