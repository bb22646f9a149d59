"""load_records keeps an experiment's own runs apart from command-line variants."""

import logging

import pytest

from reports.records import is_experiment_config, load_records
from runners.run import compose_config, run_job

CELL = ["experiment=mlsvm_table1", "dataset=sonar", "method=svm", "kernel=linear"]


def test_variant_runs_do_not_enter_the_experiment_table(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("KML_RESULTS", str(tmp_path))
    own = run_job(compose_config(CELL))
    variant = run_job(compose_config([*CELL, "kernel.normalize=null"]))
    assert own["status"] == variant["status"] == "ok"
    assert is_experiment_config(own) and not is_experiment_config(variant)
    with caplog.at_level(logging.WARNING, logger="kml.reports"):
        kept = load_records(tmp_path, "mlsvm_table1")
    assert [r["key"] for r in kept] == [own["key"]]
    assert "left out 1 record whose" in caplog.text
    assert "pass --variants --out DIR to kml-report" in caplog.text
    assert "variants=True" not in caplog.text  # not an option of the command line
    newest = load_records(tmp_path, "mlsvm_table1", variants=True)
    assert [r["key"] for r in newest] == [variant["key"]]  # the newer one


def _stored(tmp_path, cell, overrides):
    """A record of ``cell`` as a runner that keeps ``overrides`` stores it."""
    import json

    rec = run_job(compose_config([*cell, f"paths.results={tmp_path}"]))
    rec["overrides"] = overrides
    path = rec.pop("_path", None) or next(
        p for p in tmp_path.rglob("*.json") if rec["key"] in p.name
    )
    with open(path, "w") as fh:
        json.dump(rec, fh)
    return rec


def test_overrides_tell_own_runs_from_variants_without_composing(tmp_path, monkeypatch):
    """With ``overrides`` stored, no config is recomposed (issue 9: 15 s for 40)."""
    import reports.records as records

    own = _stored(tmp_path, CELL, CELL)
    variant = _stored(
        tmp_path, [*CELL, "kernel.normalize=null"], [*CELL, "kernel.normalize=null"]
    )

    def no_compose(*args, **kwargs):
        raise AssertionError("recomposed a config although the record has overrides")

    monkeypatch.setattr(records, "_experiment_config", no_compose)
    kept = load_records(tmp_path, "mlsvm_table1")
    assert [r["key"] for r in kept] == [own["key"]]
    assert variant["key"] != own["key"]


def test_is_own_run_reads_only_override_keys():
    from reports.records import is_own_run, sweep_keys

    keys = sweep_keys("mlsvm_table1")
    assert keys == {"dataset", "method", "kernel"}
    assert sweep_keys("wrbf_table1") == {"dataset", "dataset.noise_donor", "method"}

    def own(*overrides):
        return is_own_run({"overrides": list(overrides)}, keys)

    assert own("experiment=mlsvm_table1", "dataset=sonar", "seed=3", "force=true")
    assert own("dataset=sonar", "paths.results=/tmp/x", "raise_errors=true")
    assert not own("dataset=sonar", "kernel.normalize=null")
    assert not own("dataset=sonar", "protocol=smoke")
    assert not own("+search.grids.eps_svm={C:[1],C2:[1]}")
    assert not own("~method.reg")
    assert is_own_run({}, keys) is None  # an older record: the caller falls back


def test_editing_a_config_does_not_reclassify_records_with_overrides(tmp_path):
    """The verdict comes from the record's overrides, not from today's config files."""
    import json

    import pytest

    from reports.guard import ReportError

    rec = _stored(tmp_path, CELL, CELL)
    path = next(tmp_path.rglob("*.json"))
    # as if conf/experiment/mlsvm_table1.yaml's grid were edited after the run
    rec["config"]["grid"] = {"C": [1.0]}
    path.write_text(json.dumps(rec))
    assert [r["key"] for r in load_records(tmp_path, "mlsvm_table1")] == [rec["key"]]
    del rec["overrides"]  # an older record: the fallback recomposes and differs
    path.write_text(json.dumps(rec))
    with pytest.raises(ReportError, match=r"variant records? left out"):
        load_records(tmp_path, "mlsvm_table1")


def test_an_override_repeating_the_experiments_own_choice_is_not_a_variant():
    from reports.records import experiment_choices, is_own_run, sweep_keys

    keys = sweep_keys("mlsvm_table2")
    choices = experiment_choices("mlsvm_table2")
    assert "kernel=mkl20" in choices  # `- override /kernel: mkl20`
    own = ["experiment=mlsvm_table2", "dataset=sonar", "method=mklm"]
    assert is_own_run({"overrides": [*own, "kernel=mkl20"]}, keys, choices)
    assert not is_own_run({"overrides": [*own, "kernel=linear"]}, keys, choices)
    assert not is_own_run({"overrides": [*own, "protocol=smoke"]}, keys, choices)


def _adhoc_record(root, overrides):
    """A record of `kml-run dataset=wdbc method=svmm ...` (no experiment=): adhoc."""
    import json

    rec = {
        "key": "adhoc0001",
        "label": "svmm[kernel=poly2]",
        "experiment": "adhoc",
        "dataset": "wdbc",
        "method": "svmm",
        "kernel": "poly2",
        "seed": 0,
        "status": "ok",
        "config": {"code_version": "test"},
        "overrides": overrides,
        "finished": "2026-01-01T00:00:00",
    }
    path = root / "adhoc" / "wdbc" / "svmm[kernel=poly2]-adhoc0001.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(rec))
    return rec


def test_records_of_an_experiment_without_a_file_are_kept_and_said_why(
    tmp_path, monkeypatch, caplog
):
    """adhoc has no conf/experiment file: no config of its own to compare records
    with, and none to recompose (Hydra's "cannot compose experiment/adhoc" with its
    list of experiments); the warning says that, not that overrides are missing."""
    import reports.records as records

    rec = _adhoc_record(
        tmp_path,
        ["dataset=wdbc", "method=svmm", "kernel=poly2", "kernel.normalize=cosine"],
    )

    def no_compose(*args, **kwargs):
        raise AssertionError("recomposed a config of an experiment without a file")

    monkeypatch.setattr(records, "_experiment_config", no_compose)
    with caplog.at_level(logging.WARNING, logger="kml.reports"):
        kept = load_records(tmp_path, "adhoc")
    assert [r["key"] for r in kept] == [rec["key"]]
    assert [r.getMessage() for r in caplog.records] == [
        "adhoc has no experiment file (conf/experiment/adhoc.yaml), so no config of "
        "its own: its 1 records are all used, none told apart as a variant"
    ]


def test_variant_of_names_the_overrides_that_make_a_variant(tmp_path):
    """What a table built with --variants lists beside a variant's cell: the
    overrides outside the sweep's keys, in the order given; [] for an own run."""
    from reports.records import variant_of

    def rec(*overrides):
        return {"experiment": "mlsvm_table2", "overrides": list(overrides)}

    own = ["experiment=mlsvm_table2", "dataset=sonar", "method=mklm", "seed=1"]
    assert variant_of(rec(*own, "kernel=mkl20")) == []  # the experiment's choice
    assert variant_of(rec(*own, "protocol=smoke", "++method.normalize=cosine")) == [
        "protocol=smoke",
        "++method.normalize=cosine",
    ]
    assert variant_of({"experiment": "adhoc", "overrides": ["protocol=smoke"]}) == []
    # an older record, without overrides: judged by recomposing its config
    smoke = run_job(
        compose_config([*CELL, "protocol=smoke", f"paths.results={tmp_path}"])
    )
    del smoke["overrides"]
    assert variant_of(smoke) == [
        "a config other than the experiment's (no overrides stored)"
    ]
    # judged once, by load_records or the first call, then read back
    assert smoke["_variant"] == variant_of(smoke)


def test_aligned_predictions_pair_each_instance_across_records():
    """McNemar pairs predictions instance by instance: records store them in their
    folds' order, which differs from method to method of a resumed or merged run,
    so labels and predictions are both put in instance order."""
    from reports.records import aligned_predictions

    def rec(method, order, wrong):
        y = {i: "ab"[i % 2] for i in range(6)}
        pred = {i: ("ba"[i % 2] if i in wrong else y[i]) for i in range(6)}
        return {"method": method, "label": method, "dataset": "toy",
                "predictions": {"index": order, "y_true": [y[i] for i in order],
                                "y_pred": [pred[i] for i in order]}}  # fmt: skip

    a = rec("a", [3, 0, 4, 1, 5, 2], wrong={0, 1})
    b = rec("b", [5, 4, 3, 2, 1, 0], wrong={1, 2})
    y_true, preds = aligned_predictions([a, b])
    assert y_true.tolist() == list("ababab")
    assert preds["a"].tolist() == list("baabab")
    assert preds["b"].tolist() == list("aabbab")
    c = rec("c", [0, 1, 2, 3, 4, 5], wrong=set())
    c["predictions"]["index"][-1] = 6
    with pytest.raises(ValueError, match="tested on other instances"):
        aligned_predictions([a, c])


def test_the_newest_record_is_kept_per_cell_and_seed(tmp_path):
    """load_records keeps the newest record of each (dataset, method, kernel,
    seed): a newer run of another seed (a fold-variance study) does not displace
    the seed-0 run the tables are built from, an older run of the same seed does
    not displace a newer one."""
    import json

    def write(key, seed, finished):
        rec = {"label": "svmm[kernel=poly2]", "experiment": "adhoc",
               "dataset": "wdbc", "method": "svmm", "kernel": "poly2",
               "status": "ok", "config": {"code_version": "test"},
               "overrides": ["dataset=wdbc", "method=svmm", "kernel=poly2"],
               "key": key, "seed": seed, "finished": finished}  # fmt: skip
        path = tmp_path / "adhoc" / "wdbc" / f"svmm[kernel=poly2]-{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec))

    write("old0", 0, "2026-01-01T00:00:00")
    write("new0", 0, "2026-01-03T00:00:00")
    write("new1", 1, "2026-01-05T00:00:00")
    kept = sorted(load_records(tmp_path, "adhoc"), key=lambda r: r["seed"])
    assert [(r["seed"], r["key"]) for r in kept] == [(0, "new0"), (1, "new1")]


def test_a_failed_variant_does_not_hide_a_finished_run_with_variants(tmp_path, caplog):
    """`kml-run experiment=mlsvm_table1 dataset=sonar method=svmm kernel=linear
    protocol.outer_folds=150` fails (too few samples per class) after the own
    run: with --variants the cell kept the failed run, its number gone from the
    table ('— / 21.63 [v1]'). A newer variant that finished still wins; the
    experiment's own runs alone keep their newest, failed or not."""
    import json

    cell = ["dataset=sonar", "method=svmm", "kernel=linear"]

    def write(key, status, finished, extra=()):
        rec = {"label": "svmm[kernel=linear]", "experiment": "mlsvm_table1",
               "dataset": "sonar", "method": "svmm", "kernel": "linear",
               "seed": 0, "status": status, "config": {"code_version": "test"},
               "overrides": ["experiment=mlsvm_table1", *cell, *extra],
               "key": key, "finished": finished}  # fmt: skip
        path = tmp_path / "mlsvm_table1" / "sonar" / f"svmm[kernel=linear]-{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec))

    write("own", "ok", "2026-01-01T00:00:00")
    write("folds150", "error", "2026-01-02T00:00:00", ["protocol.outer_folds=150"])
    with caplog.at_level(logging.WARNING, logger="kml.reports"):
        (kept,) = load_records(tmp_path, "mlsvm_table1", variants=True)
    assert kept["key"] == "own"
    assert (
        "the newest run of 1 cell failed; it shows the newest finished run instead: "
        "sonar/svmm[kernel=linear] (protocol.outer_folds=150)"
    ) in caplog.text
    write("smoke", "ok", "2026-01-03T00:00:00", ["protocol=smoke"])
    (kept,) = load_records(tmp_path, "mlsvm_table1", variants=True)
    assert kept["key"] == "smoke"
    write("own-newer-code", "error", "2026-01-04T00:00:00")
    (kept,) = load_records(tmp_path, "mlsvm_table1")
    assert kept["key"] == "own-newer-code"
