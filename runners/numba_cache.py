"""Say so when the numba QP solvers are being compiled (a cold on-disk cache).

The solvers of ``methods._qp`` are compiled with ``cache=True``: the first run on a
fresh clone (or after a solver edit) compiles them for about a minute and a half and
writes the machine code under ``methods/_qp/__pycache__`` (or ``NUMBA_CACHE_DIR``);
later runs load it in well under a second. Without a word, that first minute looks
like a hang, hence one log line per process when a solver compiles.

The line is given by a listener on numba's ``numba:compile`` event, which numba
fires only when it really compiles (after looking in its cache), so it appears
exactly when a run compiles a solver. Judging the cache beforehand cannot be
right: each run compiles only the solvers it reaches (the interior-point solver
when SMO is slow, the pivoted Cholesky for a low-rank kernel), so a cache with any
of them missing would be announced by every run that does not compile it.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("kml")

# Measured on the 2-core development machine (shared, loaded): smoke runs of SVM
# (SMO, 26 s) then SVM_m (interior point, 102 s) on a fresh clone.
COMPILE_SECONDS = 120

#: Modules whose numba functions are "the QP solvers" of the notice.
QP_MODULES = ("methods._qp._smo", "methods._qp._ipm")

_announced = False
_listener: Any = None


def _compiling_qp_solver(event: Any) -> bool:
    """Whether a ``numba:compile`` event compiles a function of :data:`QP_MODULES`."""
    data = event.data if isinstance(event.data, dict) else {}
    func = getattr(data.get("dispatcher"), "py_func", None)
    return getattr(func, "__module__", None) in QP_MODULES


def _on_compile(event: Any) -> None:
    global _announced
    if _announced or not _compiling_qp_solver(event):
        return
    _announced = True
    log.info("compiling the QP solvers (first use only, up to ~%d s)", COMPILE_SECONDS)


def announce_compilation() -> bool:
    """Log once per process, when a QP solver starts compiling, that it does.

    Installs the listener (once per process) and returns whether this call
    installed it. Nothing is logged when every solver a run calls comes from the
    cache, nor for runs that call none (the metric-learning, KOMD and FDA runs of
    kdml, lmnnmkl and arbf, a user's scikit-learn estimator).
    """
    global _listener
    if _listener is not None:
        return False
    from numba.core import event

    class _CompileNotice(event.Listener):
        def on_start(self, ev: Any) -> None:
            _on_compile(ev)

        def on_end(self, ev: Any) -> None:
            pass

    _listener = _CompileNotice()
    event.register("numba:compile", _listener)
    return True
