"""Result store: one JSON record per run, keyed by a hash of its resolved config.

A record is written to a temporary file in the same directory and renamed into place,
so a killed sweep leaves either a whole record or none. A run whose record exists with
status ``ok`` or ``skip`` is not recomputed (sweeps resume); ``error`` records are kept
for the report but rerun next time.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

FINISHED = ("ok", "skip")


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
        try:
            with open(path) as fh:
                return json.load(fh)
        except FileNotFoundError:
            return None

    def finished(self, path: Path) -> dict[str, Any] | None:
        """The record at ``path`` if it is finished (ok or skip), else ``None``."""
        record = self.load(path)
        if record is not None and record.get("status") in FINISHED:
            return record
        return None

    def write(self, path: Path, record: Mapping[str, Any]) -> None:
        """Write ``record`` atomically (temp file + fsync + rename)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(record, fh, default=_jsonable, indent=1, allow_nan=False)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def records(self, experiment: str) -> Iterator[dict[str, Any]]:
        """Every record of ``experiment`` (temporary files are skipped)."""
        base = self.root / experiment
        if not base.exists():
            return
        for path in sorted(base.rglob("*.json")):
            if path.name.startswith(".tmp-"):
                continue
            record = self.load(path)
            if record is not None:
                record["_path"] = str(path)
                yield record
