"""reproduce-all's run ledger: an artifact's seconds over resumed runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reports import site
from runners import run_ledger

REPO_ROOT = Path(__file__).resolve().parents[2]


def _rows(results: Path, event: str | None = None) -> list[dict]:
    """The ledger's end lines (``event=None``) or its ``"start"`` lines."""
    path = run_ledger.ledger_path(results)
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in rows if r.get("event") == event]


def test_totals_add_up_runs_and_count_the_unfinished(tmp_path) -> None:
    run_ledger.append("mlsvm", "table1", 100.0, "interrupted", tmp_path)
    run_ledger.append("mlsvm", "table1", 40.5, "finished", tmp_path)
    run_ledger.append("wrbf", "table1", 7.0, "failed", tmp_path)
    with run_ledger.ledger_path(tmp_path).open("a") as f:
        f.write('{"paper": "mlsvm", "artif')  # cut by a full disk: skipped
    totals = run_ledger.totals(tmp_path)
    assert totals == {
        ("mlsvm", "table1"): run_ledger.ArtifactTime(140.5, 2, 1),
        ("wrbf", "table1"): run_ledger.ArtifactTime(7.0, 1, 1),
    }
    row = _rows_first(tmp_path)
    assert row["status"] == "interrupted" and row["cpus"] == os.cpu_count()
    assert {"code_version", "commit", "host", "ended_utc"} <= row.keys()


def _rows_first(results: Path) -> dict:
    return json.loads(run_ledger.ledger_path(results).read_text().splitlines()[0])


def test_a_start_line_without_an_end_line_is_a_killed_run(tmp_path) -> None:
    alive = run_ledger.start("lmnnmkl", "table2", "run-1", tmp_path)
    assert alive == tmp_path / ".reproduce_all_alive" / "run-1" and alive.is_file()
    started = _rows(tmp_path, "start")[0]["started"]
    assert float(alive.read_text()) == started
    alive.write_text(f"{started + 600.0}\n")  # the last tick, 10 min in
    os.utime(alive, (0, 0))  # a copy's mtime (cp -r): the written time counts
    run_ledger.start("lmnnmkl", "table2", "run-2", tmp_path)
    run_ledger.append("lmnnmkl", "table2", 30.0, "finished", tmp_path, run="run-2")
    assert not run_ledger.alive_path("run-2", tmp_path).exists()
    assert run_ledger.totals(tmp_path) == {
        ("lmnnmkl", "table2"): run_ledger.ArtifactTime(630.0, 2, 1, 1)
    }
    alive.unlink()  # no sign of life after the start: counted, with 0 s
    assert run_ledger.totals(tmp_path)[("lmnnmkl", "table2")] == (
        run_ledger.ArtifactTime(30.0, 2, 1, 1)
    )
    assert run_ledger.main(["start", "mlsvm", "table1"]) == 2
    with pytest.raises(ValueError, match="run id must be"):
        run_ledger.start("mlsvm", "table1", "../../x", tmp_path)
    with pytest.raises(ValueError, match="run id must be"):
        run_ledger.append("mlsvm", "table1", 1.0, "finished", tmp_path, run="../x")


def test_bad_entries_are_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="status must be one of"):
        run_ledger.append("mlsvm", "table1", 1.0, "done", tmp_path)
    with pytest.raises(ValueError, match="seconds must be >= 0"):
        run_ledger.append("mlsvm", "table1", float("nan"), "finished", tmp_path)
    assert run_ledger.main(["add", "mlsvm", "table1", "x", "finished"]) == 2
    assert run_ledger.main(["add", "mlsvm"]) == 2
    assert not run_ledger.ledger_path(tmp_path).exists()


def test_summary_gives_a_resumed_artifact_its_time_over_all_runs(tmp_path) -> None:
    plain = "mlsvm table1: 102/119 cells, within 2 SE 79 (77%), wall 3 s"
    # no ledger, or a single run: the line is this run's
    assert site.summary_line("mlsvm", "table1", 3, results=tmp_path) == plain
    run_ledger.append("mlsvm", "table1", 3.0, "finished", tmp_path)
    assert site.summary_line("mlsvm", "table1", 3, results=tmp_path) == plain
    run_ledger.append("mlsvm", "table1", 177.0, "interrupted", tmp_path)
    assert site.summary_line("mlsvm", "table1", 3, results=tmp_path) == (
        plain + " this run, 3.0 min over 2 runs"
    )
    assert site.total_line(50, tmp_path) == (
        f"total wall time (site included): 50 s this run; the artifacts took "
        f"3.0 min over the 2 runs into {tmp_path}"
    )
    assert site.total_line(50, tmp_path / "empty") == (
        "total wall time (site included): 50 s"
    )
    alive = run_ledger.start("mlsvm", "table1", "r1", tmp_path)
    alive.write_text(f"{_rows(tmp_path, 'start')[0]['started'] + 60.0}\n")
    killed = " (1 run killed or still running: counted to the last sign of life)"
    assert site.summary_line("mlsvm", "table1", 3, results=tmp_path) == (
        plain + " this run, 4.0 min over 3 runs" + killed
    )
    assert site.total_line(50, tmp_path).endswith(f"3 runs into {tmp_path}{killed}")


def _default_int() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ignore_term() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _reproduce_all(
    tmp_path: Path, sig: signal.Signals | None, second: str = "fake-slow"
) -> tuple[Path, str, int]:
    """Run the Makefile's loop on two fake artifacts (the second sleeps, or
    fails), send ``sig`` to its process group once the second has started (no
    signal: make starts with TERM ignored); returns the result store, make's output
    and its return code."""
    extra = tmp_path / "fake.mk"
    started = tmp_path / "slow-started"
    extra.write_text(
        f"fake-quick:\n\t@true\nfake-slow:\n\t@touch {started}; sleep 60\n"
        "fake-fail:\n\t@false\n"
    )
    stamp = tmp_path / "stamp"
    stamp.touch()  # newer than pyproject.toml: `setup` has nothing to do
    results = tmp_path / "results"
    cmd = [
        "make",
        "-s",
        "reproduce-all",
        f"STAMP={stamp}",
        f"VENV={Path(sys.executable).parent.parent}",
        f"RESULTS={results}",
        "LEDGER_TICK=0.5",
        f"REPRODUCE_ALL=mlsvm:table1:fake-quick mlsvm:table2:{second}",
    ]
    # MAKEFILES: read by every make, also the loop's sub-makes. Under `make test`
    # the outer make's flags and overrides (RESULTS=...) would reach this make.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    }
    env.update(KML_RESULTS=str(results), MAKEFILES=str(extra))
    proc = subprocess.Popen(
        cmd,
        cwd=REPO_ROOT,
        env=env,
        start_new_session=True,  # its own process group, as a terminal's job
        # a shell starts background jobs with SIGINT ignored (`.ci/run &`), and a
        # signal ignored at entry cannot be trapped: give make a terminal's default
        preexec_fn=_default_int if sig is not None else _ignore_term,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if sig is None:  # a wrapper that ignores TERM (`trap '' TERM; make ...`)
        try:
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        return results, out, proc.returncode
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(3.0)  # a few ticks of the alive file
        os.killpg(proc.pid, sig)  # Ctrl-C sends INT to the whole group
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return results, out, proc.returncode


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"]
)
def test_reproduce_all_records_finished_and_interrupted_runs(
    tmp_path, sig: signal.Signals, code: int
) -> None:
    """The Makefile's loop writes a ledger line per artifact, also when Ctrl-C (INT)
    or a TERM reaches its process group; one line per run."""
    results, out, returncode = _reproduce_all(tmp_path, sig)
    got = [(r["paper"], r["artifact"], r["status"]) for r in _rows(results)]
    assert got == [
        ("mlsvm", "table1", "finished"),
        ("mlsvm", "table2", "interrupted"),
    ], out
    starts = [r["run"] for r in _rows(results, "start")]
    assert [r["run"] for r in _rows(results)] == starts  # each end answers its start
    assert not any((results / run_ledger.ALIVE_DIR).iterdir())  # alive files gone
    assert run_ledger.totals(results)[("mlsvm", "table2")].killed == 0
    assert returncode != 0
    assert f"Error {code}" in out, out


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_reproduce_all_killed_outright_keeps_its_seconds_to_the_last_tick(
    tmp_path,
) -> None:
    """KILL to the process group: no end line, but the start line and the alive
    file's last time give the run its seconds (at least the 3 s it ran, minus a
    tick and the whole second `date +%s` drops), counted as killed."""
    t0 = time.time()
    results, out, returncode = _reproduce_all(tmp_path, signal.SIGKILL)
    elapsed = time.time() - t0
    assert returncode == -signal.SIGKILL
    got = [(r["paper"], r["artifact"], r["status"]) for r in _rows(results)]
    assert got == [("mlsvm", "table1", "finished")], out
    slow = run_ledger.totals(results)[("mlsvm", "table2")]
    assert (slow.runs, slow.unfinished, slow.killed) == (1, 1, 1)
    assert 3.0 - 0.5 - 1.0 - 0.2 <= slow.seconds <= elapsed


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_reproduce_all_records_a_failed_run_also_with_term_ignored(tmp_path) -> None:
    """A failing artifact gets its `failed` line, and the loop stops its alive-file
    ticker even when make started with TERM ignored (a TERM cannot stop it then)."""
    results, out, returncode = _reproduce_all(tmp_path, None, second="fake-fail")
    got = [(r["artifact"], r["status"]) for r in _rows(results)]
    assert got == [("table1", "finished"), ("table2", "failed")], out
    starts = [r["run"] for r in _rows(results, "start")]
    assert [r["run"] for r in _rows(results)] == starts
    assert not any((results / run_ledger.ALIVE_DIR).iterdir())
    assert returncode != 0
