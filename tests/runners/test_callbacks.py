"""The multirun job count and the progress counter shared by worker processes."""

import pytest

from runners.callbacks import PROGRESS_ENV, record_progress, sweep_size


@pytest.mark.parametrize(
    "params,command_line,expected",
    [
        ({"dataset": "a,b,c", "method": "x,y"}, [], 6),
        ({"dataset": "a,b,c", "method": "x,y"}, ["method=x"], 3),  # command line wins
        ({"dataset": "a,b,c"}, ["seed=range(0,4)", "kernel.sigma=0.5"], 12),
        (None, ["experiment=e"], 1),
        ({"x": "a,b"}, ["+x=c,d,e"], 6),  # "+x" and "x" are different sweep keys
    ],
)
def test_sweep_size_is_the_product_of_swept_keys(params, command_line, expected):
    assert sweep_size(params, command_line) == expected


def test_progress_counts_every_finished_job(tmp_path, monkeypatch):
    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    assert record_progress("ok a") is None  # not a multirun
    monkeypatch.setenv(PROGRESS_ENV, str(tmp_path / "progress.log"))
    assert [record_progress(f"ok {i}\nsplit") for i in range(3)] == [1, 2, 3]
    monkeypatch.setenv(PROGRESS_ENV, str(tmp_path / "missing-dir" / "progress.log"))
    assert record_progress("ok") is None  # a display, never a failure


def test_summary_counts_and_names_each_failure():
    from runners.callbacks import summarize

    outcomes = [
        {"status": "ok"},
        {"status": "cached"},
        {"status": "skip", "reason": "not available"},
        {
            "status": "error",
            "dataset": "sonar",
            "label": "svm[kernel=linear]",
            "reason": "ValueError: bad\nsecond line",
            "record": "results/adhoc/sonar/svm[kernel=linear]-abc.json",
        },
    ]
    text, n_failed = summarize(outcomes, total=4)
    assert n_failed == 1
    assert text.splitlines()[0] == (
        "kml-run summary: 1 ok, 1 cached, 1 skipped, 1 failed (4 runs)"
    )
    assert "FAILED sonar svm[kernel=linear]: ValueError: bad\n    second line" in text
    assert "record: results/adhoc/sonar/svm[kernel=linear]-abc.json" in text
    assert summarize(outcomes[:3])[1] == 0
    one = summarize(outcomes[:1])[0].splitlines()[0]
    assert one == "kml-run summary: 1 ok, 0 cached, 0 skipped, 0 failed (1 run)"


def test_jobs_that_reported_nothing_count_as_failed(tmp_path):
    from runners.callbacks import read_outcomes, summarize

    progress = tmp_path / "progress.log"
    progress.write_text('{"status": "ok"}\nnot json\n')
    text, n_failed = summarize(read_outcomes(progress), total=3)
    assert n_failed == 2
    assert "0 cached, 0 skipped, 2 failed (3 runs)" in text
    assert "2 runs reported no outcome" in text
    # one job cut short (a Ray node lost mid-sweep): "1 run", not "1 runs"
    text, _ = summarize(read_outcomes(progress), total=2)
    assert (
        "  1 run reported no outcome (a worker killed mid-run?); rerun the same "
        "command to complete it"
    ) in text
