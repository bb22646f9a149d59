"""One results folder shared by several workers (runners/store.py).

Workers on several machines write into one folder; a record is written to a temporary
file beside it and renamed into place (atomic within one directory, also on NFS). Two
workers that race on the same cell both finish and leave one valid record; a reader
never sees half a record.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import time
from pathlib import Path

import pytest

from runners.store import ResultStore
from tests.cluster.cluster_sweeps import (
    BIN,
    ONE_JOB,
    assert_same_predictions,
    load_records,
    sweep_env,
)

pytestmark = pytest.mark.cluster


@pytest.mark.slow
def test_two_workers_racing_on_one_cell(joblib_reference, tmp_path) -> None:
    """Two kml-run processes on the same cell at once: both succeed, one record."""
    env = sweep_env(tmp_path)
    procs = [
        subprocess.Popen(
            [str(BIN / "kml-run"), *ONE_JOB, f"hydra.run.dir={tmp_path}/run{i}"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-3000:]
    # each computed the cell, or found the other's finished record
    statuses = [("cached" if " cached " in out else "computed") for out in outs]
    print(f"racing workers: {statuses}")
    got = load_records(tmp_path / "results")  # also: no temporary file left
    assert len(got) == 1, sorted(got)
    name = next(iter(got))
    assert got[name]["status"] == "ok"
    assert_same_predictions(got, {name: joblib_reference[name]})


def _writer(root: str, n: int, tag: int) -> None:
    store = ResultStore(root)
    path = store.path("race", "cell", "m[kernel=k]", "0123456789abcdef")
    # a record of a realistic size (about 200 kB), distinct per writer and round
    body = {"tag": tag, "status": "ok", "predictions": list(range(20000))}
    for i in range(n):
        store.write(path, {**body, "round": i})


def test_concurrent_writes_are_atomic_for_readers(tmp_path) -> None:
    """Two processes rewrite one record 100 times each while it is read: every read
    is a whole record of one of them, and no temporary file is left behind."""
    ctx = mp.get_context("spawn")
    writers = [
        ctx.Process(target=_writer, args=(str(tmp_path), 100, t)) for t in (1, 2)
    ]
    for w in writers:
        w.start()
    path = ResultStore(tmp_path).path("race", "cell", "m[kernel=k]", "0123456789abcdef")
    reads, deadline = 0, time.monotonic() + 120
    try:
        while any(w.is_alive() for w in writers):
            assert time.monotonic() < deadline, "writers did not finish"
            if path.exists():
                rec = json.loads(path.read_text())  # never a partial file
                assert rec["tag"] in (1, 2) and len(rec["predictions"]) == 20000
                reads += 1
    finally:
        for w in writers:
            w.join(timeout=60)
    assert [w.exitcode for w in writers] == [0, 0]
    assert reads > 0
    assert json.loads(path.read_text())["round"] == 99
    assert [p.name for p in Path(path.parent).iterdir()] == [path.name]
