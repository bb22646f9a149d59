"""Result store: one JSON record per run, keyed by a hash of its resolved config.

A record is written to a temporary file in the same directory and renamed into place,
so a killed sweep leaves either a whole record or none, and two workers writing the
same cell both succeed and leave one whole record (the last rename wins). Records are
created readable by group and others under the usual umask (0644), so a team can
share a results folder. A run whose record exists with status ``ok`` or ``skip`` is
not recomputed (sweeps resume); ``error`` records are kept for the report but rerun
next time.

A damaged record (truncated or invalid JSON, e.g. from a full disk) is named in a
warning and never crashes a reader: the sweep renames it to ``<name>.corrupt`` and
recomputes the run; reports (:meth:`ResultStore.records`, :func:`read_record`) skip
it. Temporary files left by a killed writer are removed by the next write to their
directory once they are older than :data:`ORPHAN_SECONDS`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import secrets
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("kml.store")

FINISHED = ("ok", "skip")
TMP_PREFIX = ".tmp-"
CORRUPT_SUFFIX = ".corrupt"
# A writer holds its temp file for the time of one json.dump and fsync (well under a
# second); one older than this belongs to a killed process.
ORPHAN_SECONDS = 600.0


class DamagedRecordError(ValueError):
    """A record file that is not a whole JSON record; the message names the file."""


def read_record(path: str | os.PathLike) -> dict[str, Any] | None:
    """The record at ``path``; ``None`` if there is none.

    Raises
    ------
    DamagedRecordError
        The file is not a JSON object with a ``status`` (truncated, invalid JSON,
        unreadable bytes); the message names the file.
    """
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise DamagedRecordError(f"damaged result record {path}: {exc}") from exc
    if not isinstance(record, dict) or "status" not in record:
        raise DamagedRecordError(
            f"damaged result record {path}: not a run record (no 'status')"
        )
    return record


def set_aside(path: str | os.PathLike) -> Path | None:
    """Rename a damaged record to ``<name>.corrupt`` (numbered if taken); its new path.

    ``None`` when it cannot be renamed (e.g. a read-only shared folder).
    """
    path = Path(path)
    target = path.with_name(path.name + CORRUPT_SUFFIX)
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}{CORRUPT_SUFFIX}.{n}")
        n += 1
    try:
        os.replace(path, target)
    except FileNotFoundError:  # another worker set it aside first
        return None
    except OSError as exc:
        log.warning("cannot set aside damaged record %s: %s", path, exc)
        return None
    return target


def config_key(config: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of ``config`` (first 16 hex digits)."""
    text = json.dumps(config, sort_keys=True, default=_jsonable, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return None if not math.isfinite(obj) else float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"Cannot store {type(obj).__name__} in a result record.")


class ResultStore:
    """Records under ``root/<experiment>/<dataset>/<label>-<key>.json``."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def path(self, experiment: str, dataset: str, label: str, key: str) -> Path:
        safe = label.replace("/", "_").replace(" ", "")
        return self.root / experiment / dataset / f"{safe}-{key}.json"

    def load(self, path: Path) -> dict[str, Any] | None:
        """The record at ``path``, or ``None`` if there is none or it is damaged.

        A damaged record is named in a warning and set aside (``<name>.corrupt``), so
        the run is recomputed: this is the sweep's reader.
        """
        try:
            return read_record(path)
        except DamagedRecordError as exc:
            moved = set_aside(path)
            log.warning(
                "%s; %s, the run will be recomputed",
                exc,
                f"set aside as {moved.name}" if moved else "left in place",
            )
            return None

    def finished(self, path: Path) -> dict[str, Any] | None:
        """The record at ``path`` if it is finished (ok or skip), else ``None``."""
        record = self.load(path)
        if record is not None and record.get("status") in FINISHED:
            return record
        return None

    def write(self, path: Path, record: Mapping[str, Any]) -> None:
        """Write ``record`` atomically (temp file + fsync + rename), mode 0666 & ~umask.

        Concurrent writers of one path each use their own temp file; the last
        rename wins and the record is always whole.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_orphans(path.parent)
        tmp = path.parent / f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}.json"
        # os.open applies the umask to 0o666 (mkstemp would force 0o600)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh, default=_jsonable, indent=1, allow_nan=False)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def records(self, experiment: str) -> Iterator[dict[str, Any]]:
        """Every readable record of ``experiment``, each with its ``_path``.

        Temporary and set-aside files are skipped; a damaged record is named in a
        warning and skipped (left in place: reports only read; the next sweep sets
        it aside and recomputes it).
        """
        base = self.root / experiment
        if not base.exists():
            return
        for path in sorted(base.rglob("*.json")):
            if path.name.startswith(TMP_PREFIX):
                continue
            try:
                record = read_record(path)
            except DamagedRecordError as exc:
                log.warning("%s; skipped (rerun the sweep to recompute it)", exc)
                continue
            if record is not None:
                record["_path"] = str(path)
                yield record


def remove_orphans(directory: Path, older_than: float = ORPHAN_SECONDS) -> list[Path]:
    """Delete temp files of killed writers in ``directory``; the paths removed.

    Only files older than ``older_than`` seconds go: a live writer's temp file is
    renamed within a second of its creation.
    """
    removed = []
    now = time.time()
    try:
        candidates = [p for p in directory.iterdir() if p.name.startswith(TMP_PREFIX)]
    except OSError:
        return removed
    for p in candidates:
        try:
            if now - p.stat().st_mtime > older_than:
                p.unlink()
                removed.append(p)
        except OSError:  # renamed or removed by its writer meanwhile
            continue
    if removed:
        log.info(
            "removed %d temporary files left by a killed run in %s",
            len(removed),
            directory,
        )
    return removed
