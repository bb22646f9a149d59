"""kml-report never destroys a committed table (issue 9).

No records (missing, empty, mistyped or foreign --results) -> a clear error naming the
folder, exit 2, nothing written. A partial sweep -> refused over the committed table,
written with --out, with its missing cells listed and the published McNemar totals
not compared. Each test runs against a copy of reports/generated (the guard's
GENERATED_DIR is pointed at it), so the committed files are never at risk.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import reports.guard as guard
from reports.__main__ import main
from reports.guard import ReportError, guard_table
from reports.records import GENERATED_DIR
from runners.run import compose_config, run_job


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()
    }


@pytest.fixture
def generated(tmp_path, monkeypatch):
    """A copy of reports/generated that the writers treat as the committed one."""
    copy = tmp_path / "generated"
    shutil.copytree(GENERATED_DIR, copy)
    monkeypatch.setattr(guard, "GENERATED_DIR", copy)
    before = _snapshot(copy)
    yield copy, before


def _named(err: str) -> int:
    """How many cells a refusal names after "Not filled as before:"."""
    listed = re.search(r"Not filled as before: (.*?)\.( |$)", err).group(1)
    more = re.search(r" and (\d+) more$", listed)
    names = listed[: more.start()] if more else listed
    return len(names.split(", ")) + (int(more.group(1)) if more else 0)


def _fails(capsys, generated, argv, *needles):
    copy, before = generated
    assert main(argv) == 2
    err = capsys.readouterr().err
    for needle in needles:
        assert needle in err, (needle, err)
    assert _snapshot(copy) == before, "a refused report wrote files"
    return err


@pytest.mark.parametrize("experiment", ["mlsvm_table1", "mlsvm_table2", "wrbf_table1"])
def test_no_results_folder(tmp_path, capsys, generated, experiment):
    missing = tmp_path / "results"
    _fails(
        capsys,
        generated,
        [experiment, "--results", str(missing)],
        str(missing),
        "does not exist",
        f"{experiment}/<dataset>/<run>.json",
        f"kml-run experiment={experiment}",
    )


@pytest.mark.parametrize("experiment", ["mlsvm_table1", "mlsvm_table2", "wrbf_table1"])
def test_empty_results_folder(tmp_path, capsys, generated, experiment):
    empty = tmp_path / "empty"
    empty.mkdir()
    _fails(
        capsys,
        generated,
        [experiment, "--results", str(empty)],
        f"no records of {experiment} under {empty}",
        "it is empty",
    )


def test_mistyped_results_folder(tmp_path, capsys, generated):
    (tmp_path / "results" / "mlsvm_table1" / "sonar").mkdir(parents=True)
    typo = tmp_path / "reslts"
    _fails(capsys, generated, ["mlsvm_table1", "--results", str(typo)], str(typo))
    # the experiment folder itself instead of the store: the error says which to pass
    inner = tmp_path / "results" / "mlsvm_table1"
    _fails(
        capsys,
        generated,
        ["mlsvm_table1", "--results", str(inner)],
        f"pass --results {tmp_path / 'results'}",
    )


def test_mistyped_experiment_gets_the_name_meant(tmp_path):
    """kml-report compare takes any experiment name: a typo is named, an experiment
    not run yet is not taken for one."""
    from reports.guard import require_store

    (tmp_path / "mlsvm_table1" / "sonar").mkdir(parents=True)
    with pytest.raises(ReportError) as exc:
        require_store(tmp_path, "mlsvm_tabel1")
    assert str(exc.value).endswith("; did you mean mlsvm_table1?")
    with pytest.raises(ReportError) as exc:  # closest to a known one, not run here
        require_store(tmp_path, "mlsvm_tabel2")
    assert (
        "did you mean mlsvm_table2? Its records are not there either: run "
        "`kml-run experiment=mlsvm_table2` first"
    ) in str(exc.value)
    with pytest.raises(ReportError) as exc:
        require_store(tmp_path, "mlsvm_table2")
    assert "did you mean" not in str(exc.value)
    assert "Run `kml-run experiment=mlsvm_table2` first" in str(exc.value)


def test_a_report_name_gets_the_experiments_held_under_it(tmp_path):
    """`kml-report compare kdml` (the name `kml-report kdml` takes) used to get the
    closest name, kdml_fig3, "not there either", beside a store holding kdml_fig1."""
    from reports.guard import require_store

    (tmp_path / "kdml_fig1" / "pima").mkdir(parents=True)
    with pytest.raises(ReportError) as exc:
        require_store(tmp_path, "kdml")
    assert str(exc.value).endswith(
        "; kdml is not an experiment: did you mean kdml_fig1?"
    )
    (tmp_path / "kdml_fig2_wave" / "waveform_v1").mkdir(parents=True)
    with pytest.raises(ReportError) as exc:
        require_store(tmp_path, "kdml")
    assert "did you mean kdml_fig1 or kdml_fig2_wave?" in str(exc.value)


def test_experiment_folder_without_records(tmp_path, capsys, generated):
    (tmp_path / "mlsvm_table1" / "sonar").mkdir(parents=True)
    _fails(
        capsys,
        generated,
        ["mlsvm_table1", "--results", str(tmp_path)],
        str(tmp_path / "mlsvm_table1"),
        "holds no record",
    )


def test_foreign_folder(tmp_path, capsys, generated):
    foreign = tmp_path / "foreign"
    (foreign / "notes").mkdir(parents=True)
    (foreign / "data.csv").write_text("a,b\n1,2\n")
    _fails(
        capsys,
        generated,
        ["mlsvm_table1", "--results", str(foreign)],
        str(foreign),
        "it holds data.csv, notes",
    )


def test_foreign_json_in_the_experiment_folder(tmp_path, capsys, generated):
    bad = tmp_path / "mlsvm_table1" / "sonar" / "something.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps({"name": "not a record"}))
    _fails(
        capsys,
        generated,
        ["mlsvm_table1", "--results", str(tmp_path)],
        str(bad.parent.parent),
        "holds no readable kml-run record",
    )


@pytest.fixture(scope="module")
def partial_results(tmp_path_factory):
    """Two Table I cells (sonar, linear kernel; SVM and FDA) with the full protocol."""
    results = tmp_path_factory.mktemp("partial")
    for method in ("svm", "fda"):
        rec = run_job(
            compose_config(
                [
                    "experiment=mlsvm_table1",
                    "dataset=sonar",
                    f"method={method}",
                    "kernel=linear",
                    f"paths.results={results}",
                ]
            )
        )
        assert rec["status"] == "ok", rec.get("reason")
    return results


def test_partial_sweep_is_refused_over_the_committed_table(
    partial_results, capsys, generated
):
    err = _fails(
        capsys,
        generated,
        ["mlsvm_table1", "--results", str(partial_results)],
        "refusing to overwrite",
        "table1.csv",
        "100 of the 102 filled cells of the committed table would not be filled as "
        "before (the records fill 2 cells of the table; a partial sweep?)",
        "--out DIR",
        "Not filled as before: sonar/linear/svmm, ",
    )
    assert "Nothing was written" in err
    # the cells named are those counted: not the 17 unavailable ovarian cells (not
    # run by the sub-sweep, but never filled)
    assert _named(err) == 100 and "ovarian" not in err


def test_partial_sweep_goes_where_out_points(partial_results, tmp_path, generated):
    copy, before = generated
    out = tmp_path / "partial"
    argv = ["mlsvm_table1", "--results", str(partial_results), "--out", str(out)]
    assert main(argv) == 0
    assert _snapshot(copy) == before
    md = (out / "table1.md").read_text()
    # 119 cells, 2 run, 17 of ovarian (no public copy) skipped as a run would be
    assert "## Cells not run (100)" in md
    assert "- wpbc: all cells" in md
    assert "- ovarian" not in md
    assert "- sonar: linear/svmm, linear/eps_svm, linear/svm_fda, poly2/svmm" in md
    # the one scored dataset is not set against the paper's all-dataset totals
    assert "| McNemar score (1 dataset) |  | 0 / — | 0 / — | 0 / — | 0.5 / — |" in md
    assert (
        "not compared: no complete row for sonar, wpbc, ionosphere, wdbc, liver_bupa, "
        "musk1)" in md
    )
    scores = pd.read_csv(out / "table1_scores.csv")
    assert scores.published_score.isna().all()
    linear = scores[scores.kernel == "linear"].set_index("method")
    assert linear.loc[["svm", "fda"], "reproduced_score"].sum() == 1.0


def test_out_inside_generated_is_still_guarded(partial_results, capsys, generated):
    copy, _ = generated
    _fails(
        capsys,
        generated,
        [
            "mlsvm_table1",
            "--results",
            str(partial_results),
            "--out",
            str(copy / "mlsvm"),
        ],
        "refusing to overwrite",
    )


def test_full_table_keeps_published_totals():
    """The committed table was scored over every dataset with a public copy."""
    scores = pd.read_csv(GENERATED_DIR / "mlsvm" / "table1_scores.csv")
    assert scores.published_score.notna().all()
    assert (
        "not compared: no complete row"
        not in (GENERATED_DIR / "mlsvm" / "table1.md").read_text()
    )


def _wrbf_record(original: str, donor: str, method: str, correct: list[int]) -> dict:
    return {
        "key": f"{original}{donor}{method}",
        "label": f"{method}[kernel=none]",
        "experiment": "wrbf_table1",
        "dataset": f"{original}+{donor}",
        "original_dataset": original,
        "noise_donor": donor,
        "method": method,
        "method_class": None,
        "kernel": "none",
        "seed": 0,
        "status": "ok",
        "config": {"code_version": "test"},
        "overrides": [
            "experiment=wrbf_table1",
            f"dataset={original}",
            f"dataset.noise_donor={donor}",
            f"method={method}",
        ],
        "finished": "2026-01-01T00:00:00",
        "folds": [
            {
                "repetition": i,
                "n_test": 10,
                "n_errors": 10 - c,
                "solver": {"dual_objective": 1.0 + c, "converged": True},
            }
            for i, c in enumerate(correct)
        ],
    }


def _store_wrbf(results: Path, rec: dict) -> None:
    """``rec`` where kml-run writes it, as ``<method>.json`` of its cell."""
    path = results / "wrbf_table1" / rec["dataset"] / f"{rec['method']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))


def test_wrbf_partial_sweep_is_refused(tmp_path, capsys, generated):
    for method, correct in (("rbf", [7, 8, 6]), ("wrbf", [8, 8, 9])):
        _store_wrbf(tmp_path, _wrbf_record("iris", "glass", method, correct))
    err = _fails(
        capsys,
        generated,
        ["wrbf_table1", "--results", str(tmp_path)],
        "refusing to overwrite",
        "7 of the 7 filled cells of the committed table (4200 experiments) would "
        "not be filled as before (the records fill 1 cell of the table, with 3 "
        "experiments; a partial sweep?)",
        "iris (3 of 600 experiments)",
        "Runs not made (kml-run's names; in the table, breast_w is "
        "breast_cancer_wisconsin, house_votes is voting): breast_w+ecoli/rbf, ",
    )
    assert _named(err) == 7
    out = tmp_path / "out"
    assert main(["wrbf_table1", "--results", str(tmp_path), "--out", str(out)]) == 0
    table = pd.read_csv(out / "table1.csv")
    assert list(table.n_experiments) == [3]


def test_wrbf_one_method_sub_sweep_refusal_counts_and_names_the_table_rows(
    tmp_path, capsys, generated
):
    """`kml-run experiment=wrbf_table1 method=rbf` on two originals: the table it
    would write holds 2 rows (RBF's side only, no paired experiment). The refusal
    counted "0 cells", and named breast_w by its row name only beside runs named
    breast_w."""
    for original, donor in (("breast_w", "glass"), ("house_votes", "iris")):
        _store_wrbf(tmp_path, _wrbf_record(original, donor, "rbf", [7, 8, 6]))
    err = _fails(
        capsys,
        generated,
        ["wrbf_table1", "--results", str(tmp_path)],
        "7 of the 7 filled cells of the committed table (4200 experiments) would "
        "not be filled as before (the records fill 2 cells of the table, with 0 "
        "experiments; a partial sweep?)",
        "Not filled as before: breast_cancer_wisconsin (0 of 600 experiments), ecoli,",
        ", voting (0 of 600 experiments).",
        "Runs not made (kml-run's names; in the table, breast_w is "
        "breast_cancer_wisconsin, house_votes is voting): breast_w+ecoli/rbf, ",
    )
    assert _named(err) == 7
    out = tmp_path / "out"
    assert main(["wrbf_table1", "--results", str(tmp_path), "--out", str(out)]) == 0
    table = pd.read_csv(out / "table1.csv")
    assert list(table.dataset) == ["breast_cancer_wisconsin", "voting"]
    assert list(table.n_experiments) == [0, 0]
    md = (out / "table1.md").read_text()
    assert "\n- breast_cancer_wisconsin (breast_w): ecoli/rbf, ecoli/wrbf, " in md
    assert "\n- voting (house_votes): breast_w/rbf, " in md
    assert "\n- iris: all runs\n" in md


def test_guard_counts_filled_cells(tmp_path, monkeypatch):
    """The one guard every writer calls: fewer filled cells under generated/ fail."""
    monkeypatch.setattr(guard, "GENERATED_DIR", tmp_path)
    path = tmp_path / "lmnnmkl" / "table1.csv"
    path.parent.mkdir()
    pd.DataFrame({"status": ["ok", "ok", "skip"]}).to_csv(path, index=False)
    guard_table(path, pd.DataFrame({"status": ["ok", "ok"]}))  # as many: fine
    with pytest.raises(
        ReportError, match=r"1 of the 2 filled cells .* fill 1 cell of the table;"
    ):
        guard_table(path, pd.DataFrame({"status": ["ok", "error"]}))
    outside = tmp_path.parent / "elsewhere.csv"
    pd.DataFrame({"status": ["ok", "ok"]}).to_csv(outside, index=False)
    guard_table(outside, pd.DataFrame({"status": []}))  # --out elsewhere: free


def test_guard_refuses_a_swapped_cell(tmp_path, monkeypatch):
    """As many filled cells, but one committed cell lost: refused, and named."""
    monkeypatch.setattr(guard, "GENERATED_DIR", tmp_path)
    path = tmp_path / "mlsvm" / "table1.csv"
    path.parent.mkdir()
    committed = pd.DataFrame(
        {
            "kernel": ["linear"] * 3,
            "dataset": ["sonar", "wdbc", "ovarian"],
            "method": ["svmm"] * 3,
            "status": ["ok", "ok", "not run"],
        }
    )
    committed.to_csv(path, index=False)
    swapped = committed.assign(status=["error", "ok", "ok"])
    with pytest.raises(
        ReportError, match="1 of the 2 filled cells.*as before: linear/sonar/svmm."
    ):
        guard_table(path, swapped)
    guard_table(path, committed.assign(status=["ok", "ok", "ok"]))  # more: fine


def test_guard_weighs_cells_by_their_runs(tmp_path, monkeypatch):
    """kdml's figures: a cell with fewer runs (a reduced 5-run figure) is refused."""
    from reports.guard import filled_cells

    monkeypatch.setattr(guard, "GENERATED_DIR", tmp_path)
    path = tmp_path / "kdml" / "fig1.csv"
    path.parent.mkdir()
    committed = pd.DataFrame(
        {"dataset": ["pima", "iono"], "method": ["knn", "knn"], "runs": [20, 20]}
    )
    committed.to_csv(path, index=False)
    runs = filled_cells(("dataset", "method"), weight="runs")
    with pytest.raises(ReportError) as exc:
        guard_table(path, committed.assign(runs=[5, 20]), filled=runs)
    # cells counted as cells, runs as runs
    assert (
        "1 of the 2 filled cells of the committed table (40 runs) would not be "
        "filled as before (the records fill 2 cells of the table, with 25 runs;"
    ) in str(exc.value)
    assert "Not filled as before: pima/knn (5 of 20 runs)." in str(exc.value)
    guard_table(path, committed, filled=runs)
    # the row count alone (the old rule) would have let it through
    guard_table(path, committed.assign(runs=[5, 20]), filled=filled_cells(()))


def test_failed_runs_are_named(partial_results, tmp_path, capsys, generated):
    """A store whose runs failed is not a full table either; the failures are named."""
    results = tmp_path / "results"
    shutil.copytree(partial_results, results)
    svm = next(results.rglob("svm*.json"))
    rec = json.loads(svm.read_text())
    rec.update(
        key="0" * 16,
        method="svmm",
        label="svmm[kernel=linear]",
        status="error",
        reason="ValueError: C must be positive",
    )
    rec["overrides"] = [
        o.replace("method=svm", "method=svmm") for o in rec["overrides"]
    ]
    (svm.parent / "svmm-failed.json").write_text(json.dumps(rec))
    _fails(
        capsys,
        generated,
        ["mlsvm_table1", "--results", str(results)],
        "sonar/linear/svmm (error)",
    )
    out = tmp_path / "out"
    assert main(["mlsvm_table1", "--results", str(results), "--out", str(out)]) == 0
    md = (out / "table1.md").read_text()
    assert "## Cells whose run failed (1)" in md
    assert "- sonar/linear/svmm: ValueError: C must be positive" in md


def test_guard_matches_cells_read_back_from_csv(tmp_path, monkeypatch):
    """An empty name in a key column (NaN once read back) is still the same cell."""
    monkeypatch.setattr(guard, "GENERATED_DIR", tmp_path)
    path = tmp_path / "mlsvm" / "table1_checks.csv"
    path.parent.mkdir()
    frame = pd.DataFrame(
        {"check": ["band", "seeds"], "kernel": ["linear", None], "value": [1.0, 2.0]}
    )
    frame.to_csv(path, index=False)
    from reports.guard import filled_cells

    guard_table(path, frame, filled=filled_cells(("check", "kernel")))
