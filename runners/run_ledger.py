"""Wall times of ``make reproduce-all``'s artifacts, kept across resumed runs.

``make reproduce-all`` resumes where an earlier run stopped, so the wall time of one
invocation says little about what an artifact cost: a resumed artifact shows the
seconds of its last part only. Each artifact run of ``reproduce-all`` therefore
appends one line to ``<result store>/reproduce_all_times.jsonl`` (paper, artifact,
seconds, whether it finished, failed or was interrupted, code version, host, time),
and the summary adds the lines up. The ledger sits beside the records it timed, so
``make clean-results`` starts it afresh together with them.

A run killed outright (SIGKILL, the out-of-memory killer, a machine that lost power)
writes no end line, and a ledger of end lines alone would drop its seconds without a
word. So a run also writes a start line when it begins, and the Makefile writes the
time (its own clock: not a file server's mtime, and a copy keeps it) into a file named
after the run every ``LEDGER_TICK`` seconds (15) while it is alive
(``<results>/.reproduce_all_alive/<run>``); a start line that no end line answers
counts as a killed run (or one still running) whose seconds reach that file's last
time: short by at most one tick and a second (``date +%s``), 0 if the file is
gone.

Command line (the Makefile's ``reproduce-all`` calls it)::

    python -m runners.run_ledger start PAPER ARTIFACT RUN   # prints its alive file
    python -m runners.run_ledger add PAPER ARTIFACT SECONDS STATUS [RUN]

with STATUS one of ``finished``, ``failed``, ``interrupted``; RUN names the run
(letters, digits, ``-``, ``_``), and the Makefile makes it up.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

LEDGER_NAME = "reproduce_all_times.jsonl"
ALIVE_DIR = ".reproduce_all_alive"  # hidden: not a result folder of the store
STATUSES = ("finished", "failed", "interrupted")


def results_root() -> Path:
    """The result store the Makefile and the runner use (``KML_RESULTS``)."""
    return Path(os.environ.get("KML_RESULTS") or "results")


def ledger_path(results: Path | None = None) -> Path:
    """``<results>/reproduce_all_times.jsonl``."""
    return (results_root() if results is None else Path(results)) / LEDGER_NAME


def _versions() -> dict[str, object]:
    from runners.provenance import code_version, git_state

    try:
        return {"code_version": code_version(), "commit": git_state()["sha"]}
    except Exception:  # noqa: BLE001 - a timing line must not fail the run
        return {"code_version": None, "commit": None}


def alive_path(run: str, results: Path | None = None) -> Path:
    """The file the Makefile writes the time into while run ``run`` is alive."""
    if not re.fullmatch(r"[0-9A-Za-z_-]{1,64}", run):
        raise ValueError(
            f"run id must be 1-64 letters, digits, '-' or '_'; got {run!r}."
        )
    root = results_root() if results is None else Path(results)
    return root / ALIVE_DIR / run


def _write_line(path: Path, row: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(row)
    # one write of one line on an O_APPEND descriptor: runs never interleave lines
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def start(paper: str, artifact: str, run: str, results: Path | None = None) -> Path:
    """Write run ``run``'s start line and its alive file; returns the alive file."""
    alive = alive_path(run, results)
    now = time.time()
    alive.parent.mkdir(parents=True, exist_ok=True)
    alive.write_text(f"{now}\n")
    _write_line(
        ledger_path(results),
        {
            "event": "start",
            "run": run,
            "paper": paper,
            "artifact": artifact,
            "started": now,
            **_versions(),
            "host": socket.gethostname(),
            "cpus": os.cpu_count(),
            "started_utc": _utc(),
        },
    )
    return alive


def append(
    paper: str,
    artifact: str,
    seconds: float,
    status: str,
    results: Path | None = None,
    run: str | None = None,
) -> Path:
    """Append one artifact run to the ledger; returns the ledger's path.

    ``run``: the id of the run's start line; its alive file is removed.
    """
    alive = alive_path(run, results) if run else None  # refuses a bad id first
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}; got {status!r}.")
    if not seconds >= 0:
        raise ValueError(f"seconds must be >= 0; got {seconds!r}.")
    path = ledger_path(results)
    _write_line(
        path,
        {
            "paper": paper,
            "artifact": artifact,
            "seconds": float(seconds),
            "status": status,
            **({"run": run} if run else {}),
            **_versions(),
            "host": socket.gethostname(),
            "cpus": os.cpu_count(),
            "ended_utc": _utc(),
        },
    )
    if alive is not None:
        alive.unlink(missing_ok=True)
    return path


@dataclass(frozen=True)
class ArtifactTime:
    """An artifact's runs in the ledger."""

    seconds: float
    runs: int
    unfinished: int  # runs that failed, were interrupted or were killed
    killed: int = 0  # runs with a start line and no end line (their seconds: a bound)


def totals(results: Path | None = None) -> dict[tuple[str, str], ArtifactTime]:
    """Seconds and runs per ``(paper, artifact)``; unreadable lines are skipped.

    A start line no end line answers is a killed run (or one still running): its
    seconds run from its start to the last time in its alive file, 0 without one.
    """
    path = ledger_path(results)
    out: dict[tuple[str, str], ArtifactTime] = {}
    if not path.is_file():
        return out
    starts: dict[str, tuple[tuple[str, str], float]] = {}
    ended: set[str] = set()

    def add(key: tuple[str, str], seconds: float, unfinished: bool, killed: bool):
        prev = out.get(key, ArtifactTime(0.0, 0, 0, 0))
        out[key] = ArtifactTime(
            prev.seconds + seconds,
            prev.runs + 1,
            prev.unfinished + unfinished,
            prev.killed + killed,
        )

    for raw in path.read_text().splitlines():
        try:
            row = json.loads(raw)
            key = (str(row["paper"]), str(row["artifact"]))
            if row.get("event") == "start":
                starts[str(row["run"])] = (key, float(row["started"]))
                continue
            seconds = float(row["seconds"])
            status = str(row["status"])
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a line cut by a full disk; the others still count
        if row.get("run"):
            ended.add(str(row["run"]))
        add(key, seconds, status != "finished", False)
    for run, (key, started) in starts.items():
        if run in ended:
            continue
        try:  # the time the run's own loop wrote last
            last = float(alive_path(run, path.parent).read_text())
        except (OSError, ValueError):
            last = started  # gone (or cut mid-write): no sign of life to count
        add(key, max(last - started, 0.0), True, True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m runners.run_ledger start PAPER ARTIFACT RUN`` (prints the run's
    alive file) and ``... add PAPER ARTIFACT SECONDS STATUS [RUN]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if len(args) == 4 and args[0] == "start":
            print(start(args[1], args[2], args[3]))
            return 0
        if len(args) in (5, 6) and args[0] == "add":
            run = args[5] if len(args) == 6 else None
            append(args[1], args[2], float(args[3]), args[4], run=run)
            return 0
    except ValueError as exc:
        print(f"run_ledger: {exc}", file=sys.stderr)
        return 2
    print(
        "usage: python -m runners.run_ledger start PAPER ARTIFACT RUN | add PAPER "
        "ARTIFACT SECONDS {finished,failed,interrupted} [RUN]",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
