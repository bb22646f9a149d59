"""The Table I checks are runs of the experiment mlsvm_table1_checks (issue 9).

The report reads their records from --results (it used to fit them itself and ignore
--results); a few of the runs, made through the runner here, give exactly the numbers
the committed table1_checks.csv holds.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import reports.guard as guard
import reports.mlsvm_checks as checks
from reports.guard import ReportError
from reports.records import GENERATED_DIR
from runners.run import compose_config, run_job

COMMITTED = GENERATED_DIR / "mlsvm" / "table1_checks.csv"


def test_the_experiment_file_holds_every_check_run():
    jobs = checks.check_jobs()
    assert len(jobs) == 48
    committed = pd.read_csv(COMMITTED)
    for check in ("alt", "band"):
        mine = [j for j in jobs if j.check == check]
        assert len(mine) == int((committed.check == check).sum())
    assert {j.cell["seed"] for j in jobs if j.what == "seeds"} == {
        str(s) for s in range(20)
    }
    cmds = checks.sweep_commands()
    assert all(c.startswith("experiment=mlsvm_table1_checks ") for c in cmds)
    # what a user gets from `kml-run experiment=mlsvm_table1_checks` alone: no sweep
    cfg = compose_config(["experiment=mlsvm_table1_checks"])
    assert cfg.experiment == "mlsvm_table1_checks"
    assert cfg.kernel.normalize == "cosine"  # Table I's config underneath


def _run(results, job):
    rec = run_job(
        compose_config(
            [
                "experiment=mlsvm_table1_checks",
                *job.overrides,
                f"paths.results={results}",
            ]
        )
    )
    assert rec["status"] == "ok", rec.get("reason")
    return rec


@pytest.fixture(scope="module")
def some_checks(tmp_path_factory):
    """The no-cosine alt run and the five fixed-C reach runs, through the runner."""
    results = tmp_path_factory.mktemp("checks")
    jobs = [
        j
        for j in checks.check_jobs()
        if j.what in ("no cosine normalization", "fixed_c")
    ]
    for job in jobs:
        _run(results, job)
    return results


def test_rows_from_records_are_the_committed_numbers(some_checks):
    from reports.records import load_records

    records = load_records(
        some_checks, "mlsvm_table1_checks", variants=True, per_config=True
    )
    rows, missing = checks.rows_from_records(records)
    assert len(missing) == 48 - 6
    got = pd.DataFrame(rows)
    committed = pd.read_csv(COMMITTED)
    for check in ("alt", "reach"):
        mine = got[got.check == check].iloc[0]
        same = committed[(committed.check == check) & (committed.what == mine.what)]
        assert len(same) == 1, mine.what
        assert mine.value == same.value.iloc[0]
        if check == "reach":
            assert mine.bound == same.bound.iloc[0]
            assert mine.detail == same.detail.iloc[0]


def test_records_with_overrides_are_matched_without_composing(some_checks, monkeypatch):
    from reports.records import load_records

    records = load_records(
        some_checks, "mlsvm_table1_checks", variants=True, per_config=True
    )
    jobs = checks.check_jobs()
    for r in records:  # as the runner stores them once it keeps overrides
        cell = [
            f"dataset={r['dataset']}",
            f"method={r['method']}",
            f"kernel={r['kernel']}",
        ]
        grid = r["config"]["grid"]["C"]
        extra = (
            ["kernel.normalize=null"]
            if r["config"]["kernel"]["normalize"] is None
            else [f"search.grids.default.C={json.dumps(grid).replace(' ', '')}"]
        )
        r["overrides"] = ["experiment=mlsvm_table1_checks", *cell, *extra]

    def no_compose(*args):
        raise AssertionError("composed a config although records have overrides")

    monkeypatch.setattr(checks, "_job_config", no_compose)
    found = checks.match_records(jobs, records)
    assert sum(f is not None for f in found) == 6


def test_report_reads_results_and_never_shrinks_the_committed_table(
    some_checks, tmp_path, monkeypatch
):
    copy = tmp_path / "generated"
    (copy / "mlsvm").mkdir(parents=True)
    (copy / "mlsvm" / "table1_checks.csv").write_bytes(COMMITTED.read_bytes())
    monkeypatch.setattr(guard, "GENERATED_DIR", copy)
    with pytest.raises(ReportError, match="does not exist.*make check-table1"):
        checks.table1_checks(tmp_path / "empty")
    with pytest.raises(ReportError) as exc:
        checks.table1_checks(some_checks)
    assert "refusing to overwrite" in str(exc.value)
    assert "Not filled as before: band sonar/gauss1/svmm: max_i" in str(exc.value)
    assert "alt sonar/linear/svm_fda (method.normalize=null), " in str(exc.value)
    assert (copy / "mlsvm" / "table1_checks.csv").read_bytes() == COMMITTED.read_bytes()
    md = checks.table1_checks(some_checks, out_dir=tmp_path / "out").read_text()
    assert "| alt | sonar | linear | svm | nested-CV error (%) with no cosine" in md
    # the check runs the partial table lacks are in it, not only on the console
    assert "\n## Check runs not made (42)\n" in md
    assert (
        "\n- band sonar/band_check/gauss1 dataset=sonar method=band_check "
        "kernel=gauss1 protocol.kind=nested_training_sets\n"
    ) in md


def test_the_committed_checks_table_lists_no_missing_run():
    """A full table says nothing of missing runs: the committed file as is."""
    df = pd.read_csv(COMMITTED)
    assert checks._markdown(df, []) == checks._markdown(df)
    assert "not made" not in (COMMITTED.parent / "table1_checks.md").read_text()


def test_band_rows_are_read_from_band_check_records(tmp_path):
    """A band run is a runner record (BandCheck on every nested training set); the
    row aggregates its folds. Here on a small protocol, one C, through run_job."""
    (job,) = [j for j in checks.check_jobs() if j.what == "eps-SVM (eps = 0)"]
    rec = run_job(
        compose_config(
            [
                "experiment=mlsvm_table1_checks",
                *job.overrides,
                "protocol.outer_folds=2",
                "protocol.inner_folds=2",
                "search.grids.band_check.C=[1]",
                f"paths.results={tmp_path}",
            ]
        )
    )
    assert rec["status"] == "ok", rec.get("reason")
    assert rec["config"]["protocol"]["kind"] == "nested_training_sets"
    row = checks._band_row(job, rec)
    assert row["method"] == "eps_svm" and row["bound"] == 1.0
    assert row["what"].startswith("max_i y_i f_SVM(x_i) over 6 (training set, C)")
    margins = [f["solver"]["check"]["max_margin"] for f in rec["folds"]]
    assert row["value"] == round(max(margins), 6)
    assert row["holds"] is True  # every sonar point is a support vector here too
    assert "fits without a free multiplier: 0;" in row["detail"]
    assert "on training points: < 1e-03" in row["detail"]


def test_a_kml_run_sweep_of_a_check_is_matched_by_its_overrides(tmp_path, monkeypatch):
    """Through Hydra's multirun: the overrides a job stores are those the report
    expects (e.g. ``method.reg=1e-9`` is stored as ``1e-09``), no compose needed."""
    import os
    import subprocess
    import sys

    from reports.records import load_records

    env = {**os.environ, "KML_RESULTS": str(tmp_path / "results"), "KML_JOBS": "1"}
    for args in (
        [
            "dataset=sonar",
            "method=svm",
            "kernel=linear",
            "search.grids.default.C=[0.1],[1]",
        ],
        ["kernel=linear", "dataset=sonar", "method=fda", "method.reg=1e-9"],
    ):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "runners.run",
                "experiment=mlsvm_table1_checks",
                *args,
                f"hydra.sweep.dir={tmp_path / 'outputs'}",
            ],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr[-2000:]
    records = load_records(
        tmp_path / "results", "mlsvm_table1_checks", variants=True, per_config=True
    )
    assert all("overrides" in r for r in records)
    monkeypatch.setattr(checks, "_job_config", None)  # calling it would fail
    found = checks.match_records(checks.check_jobs(), records)
    assert sum(f is not None for f in found) == 3
