"""kdml report: Method 1's stopping-rule count read from the records."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports.kdml import method1_stops


def _record(method, warnings, rhos, ml=None):
    return {
        "method": method,
        "config": {
            "method": {"metric_learner": ml if ml is not None else
                       {"max_metric_norm": 1e8}},
            "grid": {"n_neighbors": [3], "metric_learner__sigma": [2.0, 4.0],
                     "metric_learner__rho": [0.1, 1.0]},
            "protocol": {"inner_folds": 3},
        },
        "folds": [
            {"inner_convergence_warnings": w,
             "best_params": {"metric_learner__rho": r}}
            for w, r in zip(warnings, rhos)
        ],
    }


def test_method1_stops_counts_fits_warnings_and_chosen_rho():
    recs = [
        _record("kdml_method1", [3, 7], [0.1, 1.0]),
        _record("kdml_method1", [1], [1.0]),
        _record("kdml_method2", [5], [10.0]),  # another method: not counted
        _record("kdml_method1", [9], [1.0], ml={}),  # old code: never warned
    ]
    text = method1_stops(recs)
    # 3 outer splits x (4 candidates x 3 inner folds + 1 refit) = 39 fits
    assert "11 of 39 fits" in text
    assert "rho = 0.1 in 1, rho = 1 in 2 outer splits" in text
    assert method1_stops(recs[2:]) == ""


def test_full_or_reduced_takes_the_20_runs_only_when_they_cover_the_reduced_cells(
    monkeypatch,
):
    import reports.kdml as kdml

    def ok(d, m, status="ok"):
        return {"dataset": d, "method": m, "status": status}

    store = {
        "kdml_fig1_reduced": [ok("pima", "knn"), ok("pima", "itml_knn")],
        "kdml_fig1": [ok("pima", "knn"), ok("pima", "itml_knn", status="error")],
        "kdml_fig2_reduced": [ok("pima", "knn")],
    }

    def load(results, experiment, variants=False):
        if experiment not in store:
            raise FileNotFoundError(experiment)
        return store[experiment]

    monkeypatch.setattr(kdml, "load_records", load)
    # one of the two reduced cells has no finished 20-run record: the reduced one
    assert kdml.full_or_reduced("r", "kdml_fig1") == "kdml_fig1_reduced"
    store["kdml_fig1"][1]["status"] = "ok"
    assert kdml.full_or_reduced("r", "kdml_fig1") == "kdml_fig1"
    # as many cells as the reduced variant, but not the same ones
    store["kdml_fig1"] = [ok("pima", "knn"), ok("vehicle", "knn")]
    assert kdml.full_or_reduced("r", "kdml_fig1") == "kdml_fig1_reduced"
    # no 20-run records at all
    assert kdml.full_or_reduced("r", "kdml_fig2") == "kdml_fig2_reduced"
    # nothing anywhere: the reduced name, whose absence the report then states
    store.clear()
    assert kdml.full_or_reduced("r", "kdml_fig1") == "kdml_fig1_reduced"


def _run_record(d, m, accs, status="ok"):
    return {
        "dataset": d,
        "method": m,
        "status": status,
        "config": {"method": {}},
        "folds": [
            {"repetition": i, "n_errors": round((1 - a) * 100), "n_test": 100}
            for i, a in enumerate(accs)
        ],
    }


def _store(monkeypatch, store):
    import reports.kdml as kdml

    def load(results, experiment, variants=False):
        if experiment not in store:
            raise FileNotFoundError(experiment)
        return store[experiment]

    monkeypatch.setattr(kdml, "load_records", load)


def test_supplement_fills_only_the_datasets_the_figure_lacks(monkeypatch):
    import reports.kdml as kdml

    main = [
        _run_record("pima", "knn", [0.7] * 20),
        _run_record("waveform_v1", "knn", [0.8] * 20, status="error"),
    ]
    _store(monkeypatch, {
        "kdml_fig2_wave": [
            _run_record("waveform_v1", "knn", [0.81] * 5),
            _run_record("pima", "knn", [0.1] * 5),  # the 20-run row wins
        ]
    })
    recs, lines, own = kdml.supplement(main, "r", ("kdml_fig2_wave", "absent"), False)
    summ = kdml.summary(kdml.run_accuracies(recs)).set_index("dataset")
    assert summ.loc["pima", "runs"] == 20 and summ.loc["pima", "mean_pct"] == 70.0
    assert summ.loc["waveform_v1", "runs"] == 5
    assert summ.loc["waveform_v1", "mean_pct"] == 81.0
    assert lines == ["`kdml_fig2_wave` (1 records, Wave; runs per cell [5])"]
    assert own == 1  # main's failed Wave record gave way to the supplement's row
    # every cell finished in the main experiment: nothing is added
    main[1]["status"] = "ok"
    assert kdml.supplement(main, "r", ("kdml_fig2_wave",), False) == (main, [], 2)


def test_supplement_never_mixes_run_counts_in_a_row(monkeypatch):
    import reports.kdml as kdml

    # a 20-run Wave sweep that finished one method of the two the 5-run one has
    main = [_run_record("waveform_v1", "knn", [0.8] * 20)]
    _store(monkeypatch, {
        "kdml_fig2_wave": [
            _run_record("waveform_v1", "knn", [0.7] * 5),
            _run_record("waveform_v1", "lmnn_knn", [0.75] * 5),
        ]
    })
    recs, _, own = kdml.supplement(main, "r", ("kdml_fig2_wave",), False)
    summ = kdml.summary(kdml.run_accuracies(recs))
    assert set(summ.runs) == {5} and len(summ) == 2 and own == 0
    # the 20-run row once it has every method the 5-run one has: only its own
    main.append(_run_record("waveform_v1", "lmnn_knn", [0.9] * 20))
    recs, lines, own = kdml.supplement(main, "r", ("kdml_fig2_wave",), False)
    assert recs == main and lines == [] and own == 2
    # a supplement with a method the main row lacks but fewer cells: not a
    # replacement (the row would shrink, and the report be refused)
    main.append(_run_record("waveform_v1", "itml_knn", [0.9] * 20))
    _store(monkeypatch, {
        "kdml_fig2_wave": [_run_record("waveform_v1", "kdml_method1", [0.7] * 5)]
    })
    recs, lines, own = kdml.supplement(main, "r", ("kdml_fig2_wave",), False)
    assert recs == main and lines == [] and own == 3


def test_figure_names_a_run_count_that_differs_from_the_usual_one(tmp_path):
    import reports.kdml as kdml

    recs = [
        _run_record("pima", "knn", [0.7, 0.72] * 10),
        _run_record("pima", "kdml_method2", [0.75, 0.7] * 10),
        _run_record("waveform_v1", "knn", [0.8, 0.82, 0.81, 0.8, 0.79]),
    ]
    summ = kdml.summary(kdml.run_accuracies(recs))
    kdml.write_figure(summ, "fig2", "Fig. 2 (50% training)", tmp_path, "NOTE")
    text = (tmp_path / "fig2.md").read_text()
    assert "over 20 seeded runs (other counts are named beside the dataset)" in text
    assert "| Wave (5 runs) |" in text and "| Pima |" in text
    assert "\nNOTE\n" in text
    assert (tmp_path / "fig2.png").stat().st_size > 0


@pytest.mark.parametrize("refused", ["fig2.csv", "claims.csv"])
def test_a_refused_table_leaves_every_file_as_it_was(monkeypatch, tmp_path, refused):
    """`KDML_VARIANT=_reduced` over a committed 20-run report: fig. 2 (fewer cells)
    or the claims are refused, and no file may have been replaced before that."""
    import reports.kdml as kdml
    from reports.guard import ReportError

    _store(monkeypatch, {
        "kdml_fig1": [_run_record("pima", "knn", [0.7] * 20)],
        "kdml_fig2": [_run_record("pima", "knn", [0.8] * 20)],
    })

    def guard(path, new, filled=len, missing=()):
        if path.name == refused:
            raise ReportError("fewer cells")

    monkeypatch.setattr(kdml, "guard_table", guard)
    with pytest.raises(ReportError):
        kdml.report("r", out_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
    # the same records with the guard passing: everything is written
    monkeypatch.setattr(kdml, "guard_table", lambda *a, **k: None)
    kdml.report("r", out_dir=tmp_path)
    assert {"fig1.md", "fig2.md", "claims.md"} <= {p.name for p in tmp_path.iterdir()}


def test_uniform_run_counts_name_no_other_count(tmp_path):
    import reports.kdml as kdml

    recs = [_run_record("pima", "knn", [0.7, 0.72] * 10)]
    kdml.write_figure(kdml.summary(kdml.run_accuracies(recs)), "fig1", "F", tmp_path)
    text = (tmp_path / "fig1.md").read_text()
    assert "over 20 seeded runs with the t-based" in text
    assert "other counts" not in text


@pytest.mark.parametrize("wave", [False, True])
def test_wave_protocol_note_only_when_its_row_is_the_five_run_one(
    monkeypatch, tmp_path, wave
):
    import reports.kdml as kdml

    store = {
        "kdml_fig1": [_run_record("pima", "knn", [0.7] * 20)],
        "kdml_fig2": [_run_record("pima", "knn", [0.8] * 20)],
    }
    if wave:
        store["kdml_fig2_wave"] = [_run_record("waveform_v1", "knn", [0.8] * 5)]
    _store(monkeypatch, store)
    monkeypatch.setattr(kdml, "guard_table", lambda *a, **k: None)
    kdml.report("r", out_dir=tmp_path)
    claims = (tmp_path / "claims.md").read_text()
    fig2 = (tmp_path / "fig2.md").read_text()
    assert ("Wave at 50% has 5 runs, not 20" in claims) == wave
    assert (kdml.WAVE_NOTE in fig2) == wave
    assert "- Prototype targets" in claims  # the notes around it are whole


@pytest.mark.parametrize(
    ("sets", "runs_wave"),
    [
        (None, True),  # the default: seven sets, then Wave's 5 runs
        ("KDML_FIG2_SETS=dataset=pima", True),
        ("KDML_FIG2_SETS=", False),  # all eight sets with 20 runs
        ("KDML_FIG2_SETS=dataset=waveform_v1,pima", False),
        ("KDML_VARIANT=_reduced", False),
    ],
)
def test_reproduce_kdml_runs_the_wave_supplement_only_when_fig2_leaves_wave_out(
    sets, runs_wave
):
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", "reproduce-kdml"]
        + ([sets] if sets else []),
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout
    assert ("experiment=kdml_fig2_wave" in out) == runs_wave
