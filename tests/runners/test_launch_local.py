"""The local launcher starts no more workers than the sweep has jobs (issue 14).

A one-job sweep (one Table I cell) runs in the parent process: joblib falls back to
its sequential backend when ``n_jobs=1``, so no worker process is started.
"""

from __future__ import annotations

import re

import pytest
from omegaconf import OmegaConf

from runners.launch_local import RESOLVER, jobs_problem, worker_count
from tests.runners.test_cli import kml_run


@pytest.mark.parametrize(
    "requested,size,expected",
    [
        (2, "1", 1),     # one job: in the parent process
        (2, "", 2),      # size unknown: as requested
        (2, None, 2),
        (2, "0", 2),
        (2, "5", 2),
        (4, "3", 3),
        (1, "140", 1),
        (-1, "1", 1),    # joblib's "every CPU", capped by the job count
        ("2", 1, 1),     # oc.decode / oc.env give strings or ints
    ],
)
def test_worker_count(requested, size, expected):
    assert worker_count(requested, size) == expected


def test_worker_count_refuses_zero():
    with pytest.raises(ValueError, match="KML_JOBS=0"):
        worker_count(0, "1")


@pytest.mark.parametrize("value", ["0", "abc", "", "2.5", "true"])
def test_a_bad_kml_jobs_is_named_in_one_line(value):
    problem = jobs_problem({"KML_JOBS": value})
    assert problem is not None and "\n" not in problem
    assert problem.startswith(f"KML_JOBS={value or '(empty)'}: expected the number")
    assert "e.g. KML_JOBS=2" in problem
    with pytest.raises(ValueError, match="KML_JOBS="):
        worker_count(value, "")


@pytest.mark.parametrize("environ", [{}, {"KML_JOBS": "3"}, {"KML_JOBS": " -1"}])
def test_a_valid_or_unset_kml_jobs_passes(environ):
    assert jobs_problem(environ) is None


@pytest.mark.parametrize("value", ["0", "abc"])
def test_a_bad_kml_jobs_stops_the_sweep_in_one_line(tmp_path, value):
    # it used to end in a ~140-line omegaconf traceback when Hydra instantiated
    # the launcher, the useful line at its bottom
    out = kml_run(
        tmp_path,
        "-m",
        "dataset=sonar",
        "method=fda",
        "protocol=smoke",
        module=True,
        KML_JOBS=value,
    )
    assert out.returncode == 1, out.text
    lines = [line for line in out.text.splitlines() if line.strip()]
    assert lines == [
        f"kml-run: no job was started: KML_JOBS={value}: expected the number of "
        "worker processes, a whole number other than 0, e.g. KML_JOBS=2 (negative: "
        "joblib's count, -1 = every CPU)"
    ], out.text
    assert not (tmp_path / "results").exists()


def test_local_launcher_config_resolves(monkeypatch):
    monkeypatch.setenv("KML_JOBS", "2")
    cfg = OmegaConf.create(
        {"n_jobs": f"${{{RESOLVER}:${{oc.decode:${{oc.env:KML_JOBS,2}}}},"
                   "${oc.env:KML_SWEEP_SIZE,''}}"}
    )
    monkeypatch.setenv("KML_SWEEP_SIZE", "1")
    assert cfg.n_jobs == 1
    monkeypatch.setenv("KML_SWEEP_SIZE", "4")
    assert cfg.n_jobs == 2
    monkeypatch.delenv("KML_SWEEP_SIZE")
    assert cfg.n_jobs == 2


def _n_jobs(text: str) -> int:
    return int(re.search(r"Joblib\.Parallel\(n_jobs=(-?\d+)", text).group(1))


@pytest.mark.parametrize("datasets,expected", [("sonar", 1), ("sonar,wpbc", 2)])
def test_sweep_uses_at_most_one_worker_per_job(tmp_path, datasets, expected):
    """The launcher's own log line: one job gets n_jobs=1 although KML_JOBS=2."""
    out = kml_run(
        tmp_path, "-m", f"dataset={datasets}", "method=fda", "protocol=smoke",
        module=True, KML_JOBS="2",
    )
    assert out.returncode == 0, out.text
    assert _n_jobs(out.text) == expected, out.text
