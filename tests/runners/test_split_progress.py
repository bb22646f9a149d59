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
