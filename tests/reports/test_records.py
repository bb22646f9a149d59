"""load_records keeps an experiment's own runs apart from command-line variants."""

import logging

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
    assert "left out 1 records" in caplog.text
    newest = load_records(tmp_path, "mlsvm_table1", variants=True)
    assert [r["key"] for r in newest] == [variant["key"]]  # the newer one
