"""Say so when the numba QP solvers are about to be compiled (a cold on-disk cache).

The solvers of ``methods._qp`` are compiled with ``cache=True``: the first run on a
fresh clone (or after a solver edit) compiles them for about a minute and a half and
writes the machine code under ``methods/_qp/__pycache__`` (or ``NUMBA_CACHE_DIR``);
later runs load it in well under a second. Without a word, that first minute looks
like a hang, hence one log line per process when the cache is cold.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger("kml")

# Measured on the 2-core development machine (shared, loaded): smoke runs of SVM
# (SMO, 26 s) then SVM_m (interior point, 102 s) on a fresh clone.
COMPILE_SECONDS = 120

_announced = False


def _solver_dispatchers() -> list:
    from numba.core.registry import CPUDispatcher

    from methods._qp import _ipm, _smo

    return [
        obj
        for mod in (_smo, _ipm)
        for obj in vars(mod).values()
        if isinstance(obj, CPUDispatcher) and obj.__module__ == mod.__name__
    ]


def cold_solvers() -> list[str]:
    """Names of the cached solvers with no index file in numba's cache yet.

    Checks the index file numba's cache locator would read (no compilation, no
    import of the cache itself); an unusual cache layout counts as warm.
    """
    cold = []
    for disp in _solver_dispatchers():
        try:
            index = disp._cache._cache_file._index_path
        except AttributeError:  # not cached, or another numba cache layout
            continue
        if not os.path.exists(index):
            cold.append(disp.py_func.__qualname__)
    return cold


def announce_compilation() -> bool:
    """Log once per process that the QP solvers compile now; whether it logged."""
    global _announced
    if _announced:
        return False
    _announced = True
    cold = cold_solvers()
    if cold:
        log.info("compiling the QP solvers (first run only, ~%d s)", COMPILE_SECONDS)
    return bool(cold)
