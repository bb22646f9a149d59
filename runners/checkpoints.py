"""Outer-split checkpoints: a long cell killed half-way resumes from its last split.

A run's record is written only when every outer split is done, so without these a
cell of several hours (lmnnmkl Table 2's LMNN-MKL_P: ~30 min per split) would lose
all its splits when killed. Each finished split is pickled beside the record, under
``<label>-<key>.splits/r<repetition>-s<split>.pkl``; the next run of the same config
(same key, hence the same code version, data and protocol) loads the finished splits
instead of recomputing them, and the folder goes once the record is finished.

Splits are independent: each draws its seeds from ``(dataset, seed, repetition,
split)`` only, so a resumed run gives the record an uninterrupted one would (tested).
The key does not cover what the run read from outside the code and config: the
package versions and Python (a Ray job rerun on another node, an upgrade between the
killed run and its resumption), the CPU kernels (:func:`cpu_kernels`: each BLAS
library's kernel architecture and version, numpy's enabled CPU features, and the
variables that choose them, ``OPENBLAS_CORETYPE`` and ``NPY_DISABLE_CPU_FEATURES``;
an AVX-512 and an AVX2 machine give some cells other predictions, README) and the
data's content (``DATA_MIRROR``). So each checkpoint carries a ``stamp`` of those
(:func:`environment_stamp`, plus a digest of the loaded data, :func:`data_digest`);
one of another stamp is not mixed into this run's record, whose provenance names
this process's versions, and two cluster workers on different CPUs sharing a cell
each compute their own splits rather than make a record matching neither machine.
A checkpoint is a convenience, never a source of truth: one that cannot be read, or
whose key, stamp or test indices differ from the split asked for, is ignored with a
warning and the split recomputed. ``force=true`` recomputes every split: its stamp
carries the sweep's id (``KML_SWEEP_ID``), so the checkpoints of earlier runs are
passed over (silently) and those of the jobs of the same sweep that share the cell
are used; a run without force uses a killed force run's checkpoints. Files are
written to a temporary name and renamed, so a killed writer leaves either a whole
checkpoint or none.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import pickle
import platform
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("kml.checkpoints")

SUFFIX = ".splits"
_TMP = ".tmp-"


#: Environment variables that choose the CPU kernels: OpenBLAS's (e.g. ``Haswell``
#: on an AVX-512 machine) and the SIMD loops numpy leaves out (README: together they
#: made an AVX-512 machine give an AVX2 machine's predictions).
KERNEL_ENV = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")
#: Modules that load a BLAS of their own which the project's code calls (numpy's is
#: loaded already): scipy's, and the one cvxopt bundles (its QP solver).
_BLAS_MODULES = ("scipy.linalg", "cvxopt")


def _numpy_cpu_features() -> list[str]:
    """The CPU features numpy reports as on: those of the machine it detected, less
    the dispatch targets ``NPY_DISABLE_CPU_FEATURES`` turned off (numpy 2.4 shows
    a disabled group such as ``X86_V4`` as False while its members, e.g.
    ``AVX512_SKX``, stay True; the variable itself is in ``kernel_env``)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__
    return sorted(name for name, on in __cpu_features__.items() if on)


def cpu_kernels() -> dict[str, Any]:
    """Which CPU kernels this process computes with (not in the key or the versions).

    ``blas``: ``internal_api``, ``version`` and ``architecture`` (the kernel OpenBLAS
    or BLIS picked for this CPU) of every BLAS the code calls (numpy's, scipy's,
    cvxopt's), from threadpoolctl; ``cpu_features``: numpy's enabled CPU features;
    ``kernel_env``: the values of :data:`KERNEL_ENV` (None: unset).
    """
    from threadpoolctl import threadpool_info

    # threadpoolctl lists loaded libraries only: each BLAS the code may call is
    # loaded first, so that the list does not depend on what an earlier job of this
    # worker process imported (a resumed run in a fresh process must match it)
    for name in _BLAS_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # not installed: its BLAS cannot be called either
            pass

    fields = ("internal_api", "version", "architecture")
    blas = {
        tuple(str(lib.get(f)) for f in fields)
        for lib in threadpool_info()
        if lib.get("user_api") == "blas"
    }
    return {
        "blas": [dict(zip(fields, lib)) for lib in sorted(blas)],
        "cpu_features": _numpy_cpu_features(),
        "kernel_env": {name: os.environ.get(name) for name in KERNEL_ENV},
    }


def environment_stamp() -> dict[str, Any]:
    """What, besides the key, a split's numbers depend on: packages, Python and the
    CPU kernels (:func:`cpu_kernels`)."""
    from runners import provenance  # looked up per call: tests patch the versions

    return {
        "packages": provenance.package_versions(),
        "python": platform.python_version(),
        **cpu_kernels(),
    }


def data_digest(X: np.ndarray, y: np.ndarray) -> str:
    """sha256 of the loaded features and labels (the run's data, before any fold)."""
    h = hashlib.sha256()
    X = np.ascontiguousarray(X, dtype=np.float64)
    h.update(np.asarray(X.shape).tobytes())
    h.update(X.tobytes())
    h.update(repr(np.asarray(y).tolist()).encode())
    return h.hexdigest()[:16]


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
    stamp : mapping, optional
        What else the numbers depend on (:func:`environment_stamp`; the runner adds
        ``data``, :func:`data_digest`, once the data are loaded); a checkpoint of
        another stamp is never used.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        key: str,
        stamp: Mapping[str, Any] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.key = key
        self.stamp = dict(stamp or {})
        self.n_loaded = 0
        #: what the loaded splits cost when computed (search + predict seconds)
        self.seconds_loaded = 0.0
        self._loaded: dict[tuple[int, int], Any] = {}
        # file -> (inode, mtime, size) when it was rejected
        self._rejected: dict[Path, tuple[int, int, int]] = {}

    def path(self, repetition: int, split: int) -> Path:
        """The checkpoint file of one outer split."""
        return self.directory / f"r{int(repetition)}-s{int(split)}.pkl"

    def load(self, repetition: int, split: int, test_idx: np.ndarray) -> Any | None:
        """The saved result of this split, or ``None`` (none, unreadable, foreign).

        A split once loaded is kept (and counted once); a file once rejected is not
        read, nor warned about, again until it changes.
        """
        done = self._loaded.get((repetition, split))
        if done is not None:
            same = np.array_equal(np.asarray(done.test_idx), np.asarray(test_idx))
            return done if same else None
        path = self.path(repetition, split)
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        version = (st.st_ino, st.st_mtime_ns, st.st_size)  # a rename: a new inode
        if self._rejected.get(path) == version:
            return None
        try:
            with open(path, "rb") as fh:
                saved = pickle.load(fh)
            if saved["key"] != self.key:
                raise ValueError(f"written by run {saved['key']}, not {self.key}")
            theirs, mine = saved.get("stamp") or {}, self.stamp
            keys = {*theirs, *mine} - ({"force"} if "force" not in mine else set())
            diff = sorted(k for k in keys if theirs.get(k) != mine.get(k))
            if diff == ["force"]:  # an earlier run's, which force=true recomputes
                self._rejected[path] = version
                return None
            if diff:
                raise ValueError(f"written with other {', '.join(diff)}")
            result = saved["result"]
            if not np.array_equal(np.asarray(result.test_idx), np.asarray(test_idx)):
                raise ValueError("its test indices differ from this split's")
        except FileNotFoundError:  # removed since (the cell's record was written)
            return None
        except Exception as exc:  # a checkpoint only saves time: recompute instead
            self._rejected[path] = version
            log.warning("ignoring split checkpoint %s (%s); recomputing it", path, exc)
            return None
        self._loaded[(repetition, split)] = result
        self.n_loaded += 1
        self.seconds_loaded += result.search_seconds + result.predict_seconds
        return result

    def save(self, result: Any) -> None:
        """Write one finished split (temporary file, then rename)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path(result.repetition, result.split)
        tmp = self.directory / f"{_TMP}{os.getpid()}-{secrets.token_hex(6)}"
        try:
            with open(tmp, "wb") as fh:
                payload = {"key": self.key, "stamp": self.stamp, "result": result}
                pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except OSError as exc:  # e.g. a full disk: the run goes on without it
            tmp.unlink(missing_ok=True)
            log.warning("cannot write split checkpoint %s: %s", path, exc)

    def clear(self) -> None:
        """Remove the folder (the record is finished)."""
        shutil.rmtree(self.directory, ignore_errors=True)
