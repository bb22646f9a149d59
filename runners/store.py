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

JSON has no NaN or infinity. A non-finite float anywhere in a record (a diverged
solver's ``objective``, an inner candidate's error) is stored as ``null``, except in
a run's results (:data:`RESULT_FIELDS`: the error rate, the predictions and decision
values reports compute AUC from, ...): there a ``null`` would pass a wrong number off
as a missing one, so an ``ok`` record with one is refused
(:class:`UnstorableRecordError`, naming the file and the field) and the runner
records the run as an error instead (:func:`nonfinite_results`). An ``error`` record
does not replace a finished one: a worker whose copy of a cell failed leaves the
record of the worker that finished it (:meth:`ResultStore.write`; but for a finished
record renamed in within the microseconds between the last check and the rename,
which the next sweep then recomputes, as an error record is never cached).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
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


#: Where a run's record holds its results, not diagnostics (runners.run._record_of):
#: the error rate, the predicted labels, the decision values (reports/arbf.py ranks
#: them for the test AUC), the staged test AUCs, the 2-D test maps (reports/kdml.py)
#: and a check estimator's measures (reports/mlsvm_checks.py). ``*``: every item of a
#: list.
RESULT_FIELDS: tuple[tuple[str, ...], ...] = (
    ("error_pct",),
    ("accuracy_pct",),
    ("predictions", "y_pred"),
    ("predictions", "decision"),
    ("folds", "*", "staged_test_auc"),
    ("folds", "*", "embedding"),
    ("folds", "*", "solver", "check"),
)


class DamagedRecordError(ValueError):
    """A record file that is not a whole JSON record; the message names the file."""


class UnstorableRecordError(ValueError, TypeError):
    """A record the store cannot write; the message names the file and the field.

    A value of a type JSON cannot hold (a ``TypeError``, as ``json.dump`` raises), or
    a non-finite result in an ``ok`` record (a ``ValueError``): both, so that callers
    catching either keep working.
    """


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


def _nonfinite(obj: Any) -> int:
    """How many non-finite floats ``obj`` holds (in any nested list, dict, array)."""
    if isinstance(obj, (float, np.floating)):
        return 0 if math.isfinite(obj) else 1
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fc":
            return int(np.count_nonzero(~np.isfinite(obj)))
        return _nonfinite(obj.tolist()) if obj.dtype.kind == "O" else 0
    if isinstance(obj, Mapping):
        return sum(_nonfinite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_nonfinite(v) for v in obj)
    return 0


def nonfinite_results(record: Mapping[str, Any]) -> list[str]:
    """The result fields (:data:`RESULT_FIELDS`) of ``record`` holding NaN or inf.

    Each as ``<field> (<n> non-finite)``, e.g. ``folds[3].staged_test_auc (1
    non-finite)``; empty when every result is finite.
    """
    out: list[str] = []

    def visit(node: Any, rest: tuple[str, ...], where: str) -> None:
        if not rest:
            n = _nonfinite(node)
            if n:
                out.append(f"{where} ({n} non-finite)")
        elif rest[0] == "*":
            if isinstance(node, (list, tuple)):
                for i, item in enumerate(node):
                    visit(item, rest[1:], f"{where}[{i}]")
        elif isinstance(node, Mapping) and rest[0] in node:
            sep = "." if where else ""
            visit(node[rest[0]], rest[1:], f"{where}{sep}{rest[0]}")

    for field in RESULT_FIELDS:
        visit(record, field, "")
    return out


class _Unstorable(Exception):
    """Raised inside :func:`_plain`; collects the field's path on its way out."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.path: list[str] = []

    def field(self) -> str:
        return "".join(reversed(self.path)).lstrip(".") or "(the record)"


def _plain(obj: Any) -> Any:
    """``obj`` in JSON's types, every non-finite float as ``None``.

    ``json.dump`` never asks its ``default`` about a float (``np.float64`` is one),
    so NaN has to go before it writes; a value of another type raises
    :class:`_Unstorable` with the path of its field.
    """
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biu" or (
            obj.dtype.kind == "f" and np.isfinite(obj).all()
        ):
            return obj.tolist()  # the common case, without a loop in Python
        return _plain(obj.tolist())
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, Mapping):
        out: dict[Any, Any] = {}
        key = None
        try:
            for key, value in obj.items():
                # a NumPy key (a class label) as its Python value; json refuses it
                out[key.item() if isinstance(key, np.generic) else key] = _plain(value)
        except _Unstorable as exc:
            exc.path.append(f".{key}")
            raise
        return out
    if isinstance(obj, (list, tuple)):
        items: list[Any] = []
        try:
            for value in obj:
                items.append(_plain(value))
        except _Unstorable as exc:
            exc.path.append(f"[{len(items)}]")
            raise
        return items
    raise _Unstorable(f"Cannot store {type(obj).__name__} in a result record")


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


def _is_finished(record: Mapping[str, Any]) -> bool:
    return record.get("status") in FINISHED


def _version(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns, st.st_size  # a rename in: a new inode


def _place_unless_kept(
    tmp: Path, path: Path, keep: Callable[[Mapping[str, Any]], bool]
) -> bool:
    """Rename ``tmp`` to ``path`` unless the record there is one ``keep`` keeps.

    Where no record is, a hard link places ``tmp`` without replacing one that
    appeared meanwhile; where one is, it is judged and then replaced only if it is
    still the same file (a finished record renamed in while it was read is judged
    in its turn). What is left is the time between that last check and the rename.
    """
    while True:
        try:
            seen = _version(path)
        except FileNotFoundError:
            try:
                os.link(tmp, path)  # fails if a record appeared since the check
            except FileExistsError:
                continue
            except OSError:  # a file system without hard links
                os.replace(tmp, path)
            return True
        try:
            current = read_record(path)
        except DamagedRecordError:
            current = None
        if current is not None and keep(current):
            log.info("%s is finished: an unfinished record does not replace it", path)
            return False
        try:
            if _version(path) != seen:
                continue  # replaced while it was read: judge the new one
        except FileNotFoundError:
            continue
        os.replace(tmp, path)
        return True


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

    def write(
        self,
        path: Path,
        record: Mapping[str, Any],
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> bool:
        """Write ``record`` atomically (temp file + fsync + rename), mode 0666 & ~umask.

        Concurrent writers of one path each use their own temp file; the last
        rename wins and the record is always whole, with one exception: a record
        that is not finished (``error``) does not replace one that is, so a worker
        whose copy of a shared cell failed does not undo the worker that finished
        it (but for the window between the last check and the rename; see
        :func:`_place_unless_kept`). Non-finite floats are stored as ``null`` (see
        the module docstring).

        Parameters
        ----------
        path : Path
            The record's file (:meth:`path`).
        record : mapping
            The record; NumPy scalars and arrays are stored as JSON numbers/lists.
        keep : callable, optional
            For an unfinished ``record``: which existing records it must leave in
            place (default: every finished one). ``force=true`` passes one that
            keeps only its own sweep's, so a failed recomputation still replaces
            the record it was asked to redo.

        Returns
        -------
        bool
            False when ``record`` was not written because the record in place is
            one ``keep`` keeps.

        Raises
        ------
        UnstorableRecordError
            A value JSON cannot hold, or a non-finite result in an ``ok`` record;
            the message names the file and the field. The record in place stays.
        """
        if record.get("status") == "ok" and (bad := nonfinite_results(record)):
            raise UnstorableRecordError(
                f"result record {path}: non-finite result in {', '.join(bad)}; an ok "
                "record would show it as null (record the run as an error)"
            )
        try:
            text = json.dumps(_plain(record), indent=1, allow_nan=False)
        except _Unstorable as exc:
            raise UnstorableRecordError(
                f"result record {path}: field {exc.field()}: {exc.what}"
            ) from None
        except (TypeError, ValueError) as exc:  # e.g. a dict key json refuses
            raise UnstorableRecordError(f"result record {path}: {exc}") from exc
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_orphans(path.parent)
        tmp = path.parent / f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}.json"
        # os.open applies the umask to 0o666 (mkstemp would force 0o600)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if record.get("status") in FINISHED:
                os.replace(tmp, path)  # a finished record replaces any other
                return True
            return _place_unless_kept(tmp, path, keep or _is_finished)
        finally:
            tmp.unlink(missing_ok=True)  # renamed: nothing; else the failed write's

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
