"""Workers sharing one long cell claim its outer splits instead of racing for them.

A cell's outer splits are independent (:mod:`runners.checkpoints`), so several
workers can compute one cell together: each finished split is checkpointed, and each
worker assembles the record from its own splits and the others' checkpoints. Without
claims two workers could only start at different splits (``split_start``) and hope
not to meet: the one that ran out of work computed a split the other was still on,
a whole split (half an hour for lmnnmkl Table 2's LMNN-MKL_P) thrown away per
meeting, and one that started late recomputed every split whose checkpoint the
first had already cleared with its record.

A claim is a file ``r<repetition>-s<split>.claim`` in the checkpoint folder, created
with ``O_EXCL`` (atomic on a local disk and on NFS v3 or later), holding the host,
process id and a token. :func:`shared_splits` yields a split to evaluate only once it
is checkpointed (the evaluation loads it) or claimed by this worker (the evaluation
computes and checkpoints it); a split claimed by another worker is put off to the
end, then waited for. A claim is given up once its split is checkpointed, and the
claiming process touches it every ``heartbeat`` seconds while it computes, so a
claim is abandoned, and taken over, when its process is gone from this host or its
file has not been touched for ``stale`` seconds (a worker killed on another
machine, or a reused process id); of several workers taking over one abandoned
claim, one does (it is renamed aside, which only one rename can do).

Every worker that ends with all the splits writes the record (the same numbers; the
store's atomic rename keeps one whole file). The record is written before the
checkpoints are cleared, so a worker that finds no checkpoint of a split asks
whether the record is finished (before claiming the split, and again once it holds
the claim): if another worker finished it, :class:`CellFinishedElsewhere` says so
and the runner returns that record.

A split is computed twice only in rare cases: a live worker's claim taken over (its
heartbeat stopped for ``stale`` seconds), a checkpoint another worker cannot read
back (other package versions: each worker recomputes the other's splits), or a
claim lost in a takeover race. The record does not depend on which worker computed
which split (tested).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from runners.checkpoints import SplitCheckpoints

log = logging.getLogger("kml.checkpoints")

CLAIM_SUFFIX = ".claim"
#: How often a worker touches the claims of the split it computes (seconds).
HEARTBEAT_SECONDS = 30.0
#: A claim not touched for this long belongs to a worker that is gone (seconds).
STALE_SECONDS = 300.0
#: How often a worker waiting for another's split looks again (seconds).
POLL_SECONDS = 5.0


class CellFinishedElsewhere(Exception):
    """Another worker sharing the cell wrote its finished record."""


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


class _Claim:
    """A split this worker claimed; a thread touches the file until it is released."""

    def __init__(self, path: Path, token: str, heartbeat: float) -> None:
        self.path = path
        self.token = token
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(heartbeat,), daemon=True, name="split-claim"
        )
        self._thread.start()

    def _beat(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                with open(self.path, encoding="utf-8") as fh:
                    token = json.load(fh).get("token")
                if token != self.token:
                    return  # taken over: not ours to touch
                os.utime(self.path)
            except FileNotFoundError:
                return  # removed: the folder cleared, or taken over
            except (OSError, ValueError, AttributeError) as exc:
                # e.g. a passing NFS error: try again at the next beat
                log.warning("cannot touch split claim %s: %s", self.path, exc)

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        if _read_claim(self.path).get("token") == self.token:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass


def _read_claim(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            claim = json.load(fh)
        return claim if isinstance(claim, dict) else {}
    except (OSError, ValueError):
        return {}


class SplitClaims:
    """Claims on the outer splits of one cell, in its checkpoint folder.

    Parameters
    ----------
    checkpoints : SplitCheckpoints
        The cell's checkpoints; claims live in the same folder.
    heartbeat, stale : float
        Seconds between touches of a held claim; age after which a claim counts as
        abandoned.
    clock : callable
        Wall-clock seconds, comparable with file modification times (tests).
    owner : (host, pid), optional
        Who claims; default this host and process (tests stand in for other ones).
    """

    def __init__(
        self,
        checkpoints: SplitCheckpoints,
        *,
        heartbeat: float = HEARTBEAT_SECONDS,
        stale: float = STALE_SECONDS,
        clock: Callable[[], float] = time.time,
        owner: tuple[str, int] | None = None,
    ) -> None:
        self.checkpoints = checkpoints
        self.heartbeat = heartbeat
        self.stale = stale
        self.clock = clock
        self.host, self.pid = owner or (socket.gethostname(), os.getpid())

    def path(self, repetition: int, split: int) -> Path:
        return self.checkpoints.directory / (
            f"r{int(repetition)}-s{int(split)}{CLAIM_SUFFIX}"
        )

    def _live(self, path: Path, st: os.stat_result) -> bool:
        """The claim at ``path``, whose stat is ``st``, belongs to a live worker.

        A claim is live while its file is touched (``stale``); on this host, also only
        while its process exists (a killed worker's claims are free at once; a
        process id reused since has no heartbeat, so its claim still goes stale).
        """
        claim = _read_claim(path)
        if claim.get("host") == self.host and isinstance(claim.get("pid"), int):
            if claim["pid"] == self.pid or not _process_alive(claim["pid"]):
                return False  # ours (left by a failed run of this process), or dead
        return self.clock() - st.st_mtime <= self.stale

    def held_by_other(self, repetition: int, split: int) -> bool:
        """Another live worker holds the split's claim."""
        path = self.path(repetition, split)
        try:
            return self._live(path, path.stat())
        except FileNotFoundError:
            return False

    def claim(self, repetition: int, split: int) -> _Claim | None:
        """Claim the split, taking over an abandoned claim; ``None`` if it is held
        (or the folder went away: the cell's record was written)."""
        path = self.path(repetition, split)
        # Outside the try: a folder that cannot be made (a results folder behind a
        # dangling symlink, an unmounted share) is an error, not a claim held by
        # another worker, which left the run waiting for it forever.
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            try:
                st = path.stat()
            except FileNotFoundError:
                st = None
            if st is not None:
                if self._live(path, st):
                    return None
                # Take the abandoned claim over by moving it aside: of several
                # workers only one rename finds it. If the file moved is not the one
                # judged abandoned (a new claim replaced it meanwhile), put it back.
                aside = path.with_name(f"{path.name}.gone-{secrets.token_hex(4)}")
                try:
                    os.rename(path, aside)
                except FileNotFoundError:
                    return None
                moved = aside.stat()
                if (moved.st_ino, moved.st_mtime_ns) != (st.st_ino, st.st_mtime_ns):
                    try:
                        os.link(aside, path)
                    except FileExistsError:
                        pass
                    aside.unlink(missing_ok=True)
                    return None
                aside.unlink(missing_ok=True)
            token = secrets.token_hex(8)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except (FileExistsError, FileNotFoundError):
            return None
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"host": self.host, "pid": self.pid, "token": token}, fh)
        return _Claim(path, token, self.heartbeat)


def shared_splits(
    splits: Sequence[tuple[int, int, Any, Any]],
    claims: SplitClaims,
    finished_elsewhere: Callable[[], bool],
    *,
    poll: float = POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    label: str = "",
) -> Iterator[tuple[int, int, Any, Any]]:
    """Yield each split when this worker may evaluate it (see the module docstring).

    A yielded split is checkpointed already or claimed by this worker; its claim is
    given up when the caller asks for the next split (by then the evaluation has
    checkpointed it) or stops iterating. A worker left waiting looks again after
    0.05 s, then twice as long each time up to ``poll`` seconds, so a short cell
    does not keep it long.

    Raises
    ------
    CellFinishedElsewhere
        The cell's record was finished by another worker while this one had splits
        left that it could not find checkpointed.
    """
    checkpoints = claims.checkpoints
    pending = list(splits)
    told = False
    pause = min(0.05, poll)

    def stop() -> CellFinishedElsewhere:
        # the record is written before its checkpoints are cleared, so a worker
        # that finds neither checkpoint nor record has work left; one that finds
        # the record leaves no folder behind
        try:
            checkpoints.directory.rmdir()
        except OSError:
            pass
        return CellFinishedElsewhere()

    while pending:
        deferred = []
        for split in pending:
            rep, j, _, test = split
            if checkpoints.load(rep, j, test) is not None:
                yield split  # the evaluation takes the loaded result
                continue
            if finished_elsewhere():
                raise stop()
            held = claims.claim(rep, j)
            if held is None:
                deferred.append(split)
                continue
            if finished_elsewhere():  # written between the check and the claim
                held.release()
                raise stop()
            try:
                yield split
            finally:
                held.release()
        if deferred and len(deferred) == len(pending):
            if not told:
                told = True
                log.info(
                    "       %s: waiting for %d outer split(s) another worker computes",
                    label or "cell",
                    len(deferred),
                )
            sleep(pause)
            pause = min(2.0 * pause, poll)
        pending = deferred
