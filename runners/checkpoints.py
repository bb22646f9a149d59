"""Outer-split checkpoints: a long cell killed half-way resumes from its last split.

A run's record is written only when every outer split is done, so without these a
cell of several hours (lmnnmkl Table 2's LMNN-MKL_P: ~30 min per split) would lose
all its splits when killed. Each finished split is pickled beside the record, under
``<label>-<key>.splits/r<repetition>-s<split>.pkl``; the next run of the same config
(same key, hence the same code version, data and protocol) loads the finished splits
instead of recomputing them, and the folder goes once the record is finished.

Splits are independent: each draws its seeds from ``(dataset, seed, repetition,
split)`` only, so a resumed run gives the record an uninterrupted one would (tested).
A checkpoint is a convenience, never a source of truth: one that cannot be read, or
whose key or test indices differ from the split asked for, is ignored with a warning
and the split recomputed. Files are written to a temporary name and renamed, so a
killed writer leaves either a whole checkpoint or none.
"""

from __future__ import annotations

import logging
import os
import pickle
import secrets
import shutil
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("kml.checkpoints")

SUFFIX = ".splits"
_TMP = ".tmp-"


def checkpoint_dir(record_path: str | os.PathLike) -> Path:
    """The checkpoint folder of the record at ``record_path``."""
    path = Path(record_path)
    return path.with_name(path.stem + SUFFIX)


class SplitCheckpoints:
    """Finished outer splits of one run, keyed by (repetition, split).

    Parameters
    ----------
    directory : path
        The run's checkpoint folder (:func:`checkpoint_dir` of its record).
    key : str
        The run's config key; a checkpoint of another key is never used.
    """

    def __init__(self, directory: str | os.PathLike, key: str) -> None:
        self.directory = Path(directory)
        self.key = key
        self.n_loaded = 0

    def _file(self, repetition: int, split: int) -> Path:
        return self.directory / f"r{int(repetition)}-s{int(split)}.pkl"

    def load(self, repetition: int, split: int, test_idx: np.ndarray) -> Any | None:
        """The saved result of this split, or ``None`` (none, unreadable, foreign)."""
        path = self._file(repetition, split)
        if not path.exists():
            return None
        try:
            with open(path, "rb") as fh:
                saved = pickle.load(fh)
            if saved["key"] != self.key:
                raise ValueError(f"written by run {saved['key']}, not {self.key}")
            result = saved["result"]
            if not np.array_equal(np.asarray(result.test_idx), np.asarray(test_idx)):
                raise ValueError("its test indices differ from this split's")
        except Exception as exc:  # a checkpoint only saves time: recompute instead
            log.warning("ignoring split checkpoint %s (%s); recomputing it", path, exc)
            return None
        self.n_loaded += 1
        return result

    def save(self, result: Any) -> None:
        """Write one finished split (temporary file, then rename)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._file(result.repetition, result.split)
        tmp = self.directory / f"{_TMP}{os.getpid()}-{secrets.token_hex(6)}"
        try:
            with open(tmp, "wb") as fh:
                payload = {"key": self.key, "result": result}
                pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except OSError as exc:  # e.g. a full disk: the run goes on without it
            tmp.unlink(missing_ok=True)
            log.warning("cannot write split checkpoint %s: %s", path, exc)

    def clear(self) -> None:
        """Remove the folder (the record is finished)."""
        shutil.rmtree(self.directory, ignore_errors=True)
