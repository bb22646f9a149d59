"""Workers sharing one cell claim its outer splits: each split is computed once.

Unit tests drive :func:`runners.split_claims.shared_splits` with stand-ins for the
other worker (a claim file of another live process, of a dead one, of another host);
the end-to-end test runs two real worker processes on one cell and checks that
together they computed every split exactly once and wrote the record one worker
alone writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import runners.split_claims as split_claims
from runners.checkpoints import SplitCheckpoints
from runners.split_claims import CellFinishedElsewhere, SplitClaims, shared_splits
from tests.runners.test_split_checkpoints import CELL  # the same small cell

SPLITS = [(0, j, None, np.array([j])) for j in range(4)]


@dataclass
class _Result:
    repetition: int
    split: int
    test_idx: np.ndarray
    search_seconds: float = 1.0
    predict_seconds: float = 0.0


@pytest.fixture
def checkpoints(tmp_path):
    return SplitCheckpoints(tmp_path / "cell.splits", "key")


def _claim_file(claims: SplitClaims, j: int, host: str, pid: int) -> Path:
    path = claims.path(0, j)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"host": host, "pid": pid, "token": "theirs"}))
    return path


def _checkpoint(checkpoints: SplitCheckpoints, j: int) -> None:
    checkpoints.save(_Result(0, j, np.array([j])))


def _never() -> bool:
    return False


def test_a_split_another_live_worker_holds_is_put_off_then_waited_for(checkpoints):
    claims = SplitClaims(checkpoints)
    _claim_file(claims, 1, claims.host, os.getppid())  # alive: our parent
    slept = []

    def sleep(seconds):  # the other worker finishes split 1 while we wait
        slept.append(seconds)
        if len(slept) == 2:
            _checkpoint(checkpoints, 1)

    got = []
    for split in shared_splits(SPLITS, claims, _never, poll=0.5, sleep=sleep):
        got.append(split[1])
        if split[1] != 1:
            assert claims.path(0, split[1]).exists()  # held while evaluated
            _checkpoint(checkpoints, split[1])
    assert got == [0, 2, 3, 1]
    assert slept == [0.05, 0.1]  # from 0.05 s, doubling up to poll
    assert not any(claims.path(0, j).exists() for j in (0, 2, 3))  # given up


def test_the_claim_of_a_dead_process_on_this_host_is_taken_over(checkpoints):
    claims = SplitClaims(checkpoints)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    _claim_file(claims, 0, claims.host, int(dead.stdout))
    got = [s[1] for s in shared_splits(SPLITS, claims, _never, sleep=pytest.fail)]
    assert got == [0, 1, 2, 3]


def test_a_claim_this_process_left_behind_is_taken_over_at_once(checkpoints):
    """A claim of this very process (left by an earlier failed run in it) is not
    another worker's: the split is claimed again without waiting for it to go
    stale, although the process is alive."""
    claims = SplitClaims(checkpoints)
    _claim_file(claims, 0, claims.host, claims.pid)
    assert not claims.held_by_other(0, 0)
    got = [s[1] for s in shared_splits(SPLITS, claims, _never, sleep=pytest.fail)]
    assert got == [0, 1, 2, 3]


def test_a_claim_from_another_host_is_stale_when_not_touched(checkpoints):
    now = [1_000_000.0]
    claims = SplitClaims(checkpoints, stale=300.0, clock=lambda: now[0])
    path = _claim_file(claims, 2, "elsewhere", 1)
    os.utime(path, (now[0] - 100.0, now[0] - 100.0))
    assert claims.held_by_other(0, 2)
    assert claims.claim(0, 2) is None
    os.utime(path, (now[0] - 301.0, now[0] - 301.0))
    assert not claims.held_by_other(0, 2)
    held = claims.claim(0, 2)
    assert held is not None
    assert json.loads(path.read_text())["host"] == claims.host
    held.release()
    assert not path.exists()


def test_a_held_claim_is_touched_while_its_split_runs(checkpoints):
    claims = SplitClaims(checkpoints, heartbeat=0.05)
    held = claims.claim(0, 0)
    path = claims.path(0, 0)
    os.utime(path, (0.0, 0.0))
    deadline = time.time() + 5.0
    while path.stat().st_mtime == 0.0 and time.time() < deadline:
        time.sleep(0.02)
    assert path.stat().st_mtime > 0.0
    held.release()


def test_a_taken_over_claim_is_not_removed_by_its_first_owner(checkpoints):
    claims = SplitClaims(checkpoints)
    held = claims.claim(0, 3)
    path = claims.path(0, 3)
    path.write_text(json.dumps({"host": "elsewhere", "pid": 1, "token": "new"}))
    held.release()
    assert json.loads(path.read_text())["token"] == "new"


def test_a_record_finished_elsewhere_stops_a_worker_that_finds_no_checkpoint(
    checkpoints,
):
    claims = SplitClaims(checkpoints)
    _claim_file(claims, 1, claims.host, os.getppid())
    finished = [False]

    def sleep(_):  # the other worker writes the record, clearing the checkpoints
        checkpoints.clear()
        finished[0] = True

    got = []
    with pytest.raises(CellFinishedElsewhere):
        for split in shared_splits(SPLITS, claims, lambda: finished[0], sleep=sleep):
            got.append(split[1])
            _checkpoint(checkpoints, split[1])
    assert got == [0, 2, 3]


def test_a_claim_is_given_up_when_the_evaluation_fails(checkpoints):
    claims = SplitClaims(checkpoints)
    with pytest.raises(RuntimeError):
        for _split in shared_splits(SPLITS, claims, _never):
            raise RuntimeError("the fit failed")
    assert not claims.path(0, 0).exists()


def test_a_stale_claim_of_a_live_process_id_is_taken_over(checkpoints):
    """A process id reused after a crash is alive, but its claim has no heartbeat."""
    claims = SplitClaims(checkpoints, stale=300.0)
    path = _claim_file(claims, 0, claims.host, os.getppid())
    assert claims.held_by_other(0, 0)
    old = time.time() - 301.0
    os.utime(path, (old, old))
    assert not claims.held_by_other(0, 0)
    assert claims.claim(0, 0) is not None


def _abandoned(claims: SplitClaims, j: int) -> Path:
    path = _claim_file(claims, j, "gone", 3)
    old = time.time() - 1000.0
    os.utime(path, (old, old))
    return path


def test_of_two_workers_taking_over_one_abandoned_claim_one_does(
    checkpoints, monkeypatch
):
    a = SplitClaims(checkpoints, owner=("host-a", 1))
    b = SplitClaims(checkpoints, owner=("host-b", 2))
    path = _abandoned(a, 0)
    real_rename = os.rename
    held = {}

    def a_first(src, dst):  # a takes it over between b's look and b's move
        monkeypatch.setattr(split_claims.os, "rename", real_rename)
        held["a"] = a.claim(0, 0)
        return real_rename(src, dst)

    monkeypatch.setattr(split_claims.os, "rename", a_first)
    assert b.claim(0, 0) is None  # b moved a's new claim aside, saw it, put it back
    assert held["a"] is not None
    assert json.loads(path.read_text())["token"] == held["a"].token
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    held["a"].release()


def test_a_takeover_cut_short_leaves_nothing_that_blocks(checkpoints):
    claims = SplitClaims(checkpoints)
    _abandoned(claims, 0)
    os.rename(claims.path(0, 0), claims.path(0, 0).with_suffix(".claim.gone-dead"))
    held = claims.claim(0, 0)  # the worker that moved it aside died there
    assert held is not None
    held.release()


def test_a_claim_is_refused_when_the_folder_goes_away(checkpoints, monkeypatch):
    claims = SplitClaims(checkpoints)

    def gone(*args, **kwargs):  # the cell's record written, its folder cleared
        raise FileNotFoundError("cleared")

    monkeypatch.setattr(split_claims.os, "open", gone)
    assert claims.claim(0, 0) is None


def test_a_folder_that_cannot_be_made_is_an_error_not_a_wait(tmp_path):
    """A results folder behind a dangling symlink (a share not mounted): the claim
    was taken for another worker's, and the run waited for it forever."""
    (tmp_path / "results").symlink_to(tmp_path / "not-mounted" / "results")
    claims = SplitClaims(SplitCheckpoints(tmp_path / "results" / "cell.splits", "key"))
    with pytest.raises(OSError):
        claims.claim(0, 0)
    waits = []
    with pytest.raises(OSError):
        next(shared_splits(SPLITS, claims, _never, sleep=waits.append))
    assert waits == []


def test_the_heartbeat_outlives_a_passing_read_error(checkpoints):
    claims = SplitClaims(checkpoints, heartbeat=0.05)
    held = claims.claim(0, 0)
    path = claims.path(0, 0)
    mine = path.read_text()
    path.write_text("{half a file")  # read fails once (as a passing NFS error)
    time.sleep(0.2)
    path.write_text(mine)
    os.utime(path, (0.0, 0.0))
    deadline = time.time() + 5.0
    while path.stat().st_mtime == 0.0 and time.time() < deadline:
        time.sleep(0.02)
    assert path.stat().st_mtime > 0.0  # still touched
    held.release()


def test_an_unusable_checkpoint_is_claimed_and_recomputed(checkpoints, caplog):
    claims = SplitClaims(checkpoints)
    checkpoints.directory.mkdir(parents=True)
    checkpoints.path(0, 0).write_bytes(b"not a pickle")
    held = []
    for split in shared_splits(SPLITS[:1], claims, _never, sleep=pytest.fail):
        held.append(claims.path(0, split[1]).exists())
    assert held == [True]  # claimed, so no other worker computes it too
    assert "ignoring split checkpoint" in caplog.text


def test_a_record_written_while_claiming_stops_the_worker_and_leaves_no_folder(
    checkpoints,
):
    claims = SplitClaims(checkpoints)
    answers = iter([False, True])  # finished between the check and the claim
    with pytest.raises(CellFinishedElsewhere):
        for _ in shared_splits(SPLITS, claims, lambda: next(answers)):
            pytest.fail("the split was handed out although the cell is finished")
    assert not checkpoints.directory.exists()


def test_force_uses_this_sweeps_checkpoints_only(tmp_path, caplog):
    folder = tmp_path / "cell.splits"
    earlier = SplitCheckpoints(folder, "key", {"force": "sweep-1"})
    earlier.save(_Result(0, 0, np.array([0])))
    partner = SplitCheckpoints(folder, "key", {"force": "sweep-2"})
    partner.save(_Result(0, 1, np.array([1])))
    mine = SplitCheckpoints(folder, "key", {"force": "sweep-2"})
    assert mine.load(0, 0, np.array([0])) is None  # the run force replaces
    assert mine.load(0, 1, np.array([1])) is not None  # a job of the same sweep
    assert "ignoring" not in caplog.text  # passed over without a warning
    assert mine.n_loaded == 1 and mine.load(0, 1, np.array([1])) is not None
    assert mine.n_loaded == 1  # a split is counted once however often it is asked
    plain = SplitCheckpoints(folder, "key")  # a rerun without force resumes from them
    assert plain.load(0, 0, np.array([0])) is not None


WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    import runners.protocols as protocols
    from runners.run import compose_config, run_job

    log, ready, go = (Path(p) for p in sys.argv[1:4])
    real = protocols.evaluate_split

    def evaluate_split(*args, **kwargs):
        with open(log, "a") as fh:
            fh.write(json.dumps([os.getpid(), [int(i) for i in args[4][:3]]]) + "\\n")
        time.sleep(1.0)  # long enough that the two workers overlap
        return real(*args, **kwargs)

    protocols.evaluate_split = evaluate_split
    cfg = compose_config(sys.argv[4:])
    ready.with_suffix(f".{os.getpid()}").touch()
    while not go.exists():
        time.sleep(0.05)
    rec = run_job(cfg)
    print(json.dumps({"status": rec["status"], "n_errors": rec["n_errors"]}))
    """
)

@pytest.mark.slow
def test_two_worker_processes_compute_each_split_once(tmp_path, monkeypatch):
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "KML_RESULTS": str(tmp_path / "shared")}
    env["PYTHONPATH"] = str(root)
    log, ready, go = tmp_path / "computed.log", tmp_path / "ready", tmp_path / "go"
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), str(log), str(ready), str(go), *CELL],
            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)  # both start at the first split: only claims part them
    ]
    deadline = time.time() + 120
    while len(list(tmp_path.glob("ready.*"))) < 2 and time.time() < deadline:
        assert all(w.poll() is None for w in workers), workers[0].stderr.read()
        time.sleep(0.1)
    go.touch()
    outs = [w.communicate(timeout=300) for w in workers]
    assert all(w.returncode == 0 for w in workers), [o[1][-2000:] for o in outs]

    computed = [json.loads(line) for line in log.read_text().splitlines()]
    tests = [tuple(t) for _, t in computed]
    assert len(tests) == len(set(tests)) == 4  # every split once, by someone
    assert len({pid for pid, _ in computed}) == 2  # both worked

    from runners.run import compose_config, run_job

    monkeypatch.setenv("KML_RESULTS", str(tmp_path / "alone"))
    alone = run_job(compose_config(CELL))
    shared = [p for p in (tmp_path / "shared").rglob("*.json")]
    assert len(shared) == 1
    rec = json.loads(shared[0].read_text())
    for field in ("index", "y_pred", "decision"):
        np.testing.assert_array_equal(
            rec["predictions"][field], alone["predictions"][field]
        )
    assert not list((tmp_path / "shared").rglob("*.splits"))  # cleared
