"""kdml report: Method 1's stopping-rule count read from the records."""

from __future__ import annotations

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
        "folds": [
            {"repetition": i, "n_errors": round((1 - a) * 100), "n_test": 100}
            for i, a in enumerate(accs)
        ],
    }


def test_supplement_fills_only_the_cells_the_figure_lacks(monkeypatch):
    import reports.kdml as kdml

    main = [
        _run_record("pima", "knn", [0.7] * 20),
        _run_record("waveform_v1", "knn", [0.8] * 20, status="error"),
    ]
    store = {
        "kdml_fig2_wave": [
            _run_record("waveform_v1", "knn", [0.81] * 5),
            _run_record("pima", "knn", [0.1] * 5),  # the 20-run cell wins
        ]
    }

    def load(results, experiment, variants=False):
        if experiment not in store:
            raise FileNotFoundError(experiment)
        return store[experiment]

    monkeypatch.setattr(kdml, "load_records", load)
    recs, lines = kdml.supplement(main, "r", ("kdml_fig2_wave", "absent"), False)
    summ = kdml.summary(kdml.run_accuracies(recs)).set_index("dataset")
    assert summ.loc["pima", "runs"] == 20 and summ.loc["pima", "mean_pct"] == 70.0
    assert summ.loc["waveform_v1", "runs"] == 5
    assert summ.loc["waveform_v1", "mean_pct"] == 81.0
    assert lines == ["`kdml_fig2_wave` (1 records, Wave; runs per cell [5])"]
    # every cell finished in the main experiment: nothing is added
    main[1]["status"] = "ok"
    assert kdml.supplement(main, "r", ("kdml_fig2_wave",), False) == (main, [])


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
    assert "over 20 seeded runs" in text
    assert "| Wave (5 runs) |" in text and "| Pima |" in text
    assert "\nNOTE\n" in text
    assert (tmp_path / "fig2.png").stat().st_size > 0
