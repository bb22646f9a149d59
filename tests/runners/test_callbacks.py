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
