"""Wall times of ``make reproduce-all``'s artifacts, kept across resumed runs.

``make reproduce-all`` resumes where an earlier run stopped, so the wall time of one
invocation says little about what an artifact cost: a resumed artifact shows the
seconds of its last part only. Each artifact run of ``reproduce-all`` therefore
appends one line to ``<result store>/reproduce_all_times.jsonl`` (paper, artifact,
seconds, whether it finished, failed or was interrupted, code version, host, time),
and the summary adds the lines up. The ledger sits beside the records it timed, so
``make clean-results`` starts it afresh together with them.

Command line (the Makefile's ``reproduce-all`` calls it)::

    python -m runners.run_ledger add PAPER ARTIFACT SECONDS STATUS

with STATUS one of ``finished``, ``failed``, ``interrupted``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

LEDGER_NAME = "reproduce_all_times.jsonl"
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


def append(
    paper: str,
    artifact: str,
    seconds: float,
    status: str,
    results: Path | None = None,
) -> Path:
    """Append one artifact run to the ledger; returns the ledger's path."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}; got {status!r}.")
    if not seconds >= 0:
        raise ValueError(f"seconds must be >= 0; got {seconds!r}.")
    path = ledger_path(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(
        {
            "paper": paper,
            "artifact": artifact,
            "seconds": float(seconds),
            "status": status,
            **_versions(),
            "host": socket.gethostname(),
            "cpus": os.cpu_count(),
            "ended_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    )
    # one write of one line on an O_APPEND descriptor: runs never interleave lines
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
    return path


@dataclass(frozen=True)
class ArtifactTime:
    """An artifact's runs in the ledger."""

    seconds: float
    runs: int
    unfinished: int  # runs that failed or were interrupted


def totals(results: Path | None = None) -> dict[tuple[str, str], ArtifactTime]:
    """Seconds and runs per ``(paper, artifact)``; unreadable lines are skipped."""
    path = ledger_path(results)
    out: dict[tuple[str, str], ArtifactTime] = {}
    if not path.is_file():
        return out
    for raw in path.read_text().splitlines():
        try:
            row = json.loads(raw)
            key = (str(row["paper"]), str(row["artifact"]))
            seconds = float(row["seconds"])
            status = str(row["status"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by a full disk; the others still count
        prev = out.get(key, ArtifactTime(0.0, 0, 0))
        out[key] = ArtifactTime(
            prev.seconds + seconds,
            prev.runs + 1,
            prev.unfinished + (status != "finished"),
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m runners.run_ledger add PAPER ARTIFACT SECONDS STATUS``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 5 and args[0] == "add":
        try:
            append(args[1], args[2], float(args[3]), args[4])
        except ValueError as exc:
            print(f"run_ledger: {exc}", file=sys.stderr)
            return 2
        return 0
    print(
        "usage: python -m runners.run_ledger add PAPER ARTIFACT SECONDS "
        "{finished,failed,interrupted}",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
