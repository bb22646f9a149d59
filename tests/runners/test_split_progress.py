"""A long job reports its finished outer splits; a short one stays silent."""

from __future__ import annotations

import logging

from runners.run import split_progress


def test_long_job_logs_each_split_but_the_last(caplog):
    on_split = split_progress("wdbc lmnn_mkl_cv[kernel=lmnn20]", 3, interval=0.0)
    with caplog.at_level(logging.INFO, logger="kml"):
        for i in range(3):
            on_split(i)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2  # the job's own closing line reports the last split
    assert "wdbc lmnn_mkl_cv[kernel=lmnn20]: outer split 1/3 done" in lines[0]
    assert "outer split 2/3 done" in lines[1]


def test_short_job_logs_nothing(caplog):
    on_split = split_progress("iris knn1", 10, interval=3600.0)
    with caplog.at_level(logging.INFO, logger="kml"):
        for i in range(10):
            on_split(i)
    assert not caplog.records


def test_a_finished_job_shows_its_experiments_measure(caplog, tmp_path, monkeypatch):
    """arbf's table is AUC (search.scoring=roc_auc): its lines used to say
    ``error 21.85%`` for knn_raw on heart, whose cell is AUC 77.4."""
    import json

    import numpy as np

    from reports.arbf import fold_aucs
    from runners.run import compose_config, run_job

    monkeypatch.setenv("KML_RESULTS", str(tmp_path))
    overrides = ["experiment=arbf_table1", "dataset=heart_libsvm", "method=knn_raw"]
    with caplog.at_level(logging.INFO, logger="kml"):
        record = run_job(compose_config(overrides))
    (line,) = [m for r in caplog.records if (m := r.getMessage()).startswith("ok ")]
    # the report's cell (mean test AUC over the splits), to two decimals
    stored = json.loads(json.dumps(record))
    assert line.endswith(f"AUC {np.mean(fold_aucs(stored)):.2f}%"), line
    assert "error" not in line
    # an accuracy experiment keeps its error rate
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kml"):
        record = run_job(
            compose_config(["dataset=sonar", "method=svm", "protocol=smoke"])
        )
    (line,) = [m for r in caplog.records if (m := r.getMessage()).startswith("ok ")]
    assert line.endswith(f"error {record['error_pct']:.2f}%"), line
    # a rerun finds the record: its cached line shows the same number
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kml"):
        run_job(compose_config(["dataset=sonar", "method=svm", "protocol=smoke"]))
    (line,) = [
        m for r in caplog.records if (m := r.getMessage()).startswith("cached ")
    ]
    assert line.endswith(f"error {record['error_pct']:.2f}%"), line


def test_auc_without_decision_values_says_so():
    from runners.run import progress_measure

    record = {"error_pct": 12.5, "folds": [{}], "predictions": {"decision": None}}
    assert progress_measure(record, "roc_auc") == (
        "AUC n/a (no decision values), error 12.50%"
    )
    assert progress_measure(record, "accuracy") == "error 12.50%"
