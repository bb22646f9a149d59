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
