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
from collections.abc import Mapping
from typing import Any

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


#: Families whose estimators never call the ``methods._qp`` solvers (they have their
#: own solvers): a run of theirs compiles nothing there, so it announces nothing.
QP_FREE_PACKAGES = ("methods.metric_learning", "methods.komd", "methods.fda")


def _targets(node: Any) -> list[str]:
    if isinstance(node, Mapping):
        own = [str(node["_target_"])] if "_target_" in node else []
        return own + [t for v in node.values() for t in _targets(v)]
    if isinstance(node, (list, tuple)):
        return [t for v in node for t in _targets(v)]
    return []


def uses_qp_solvers(method_cfg: Mapping) -> bool:
    """Whether a method config may call the compiled QP solvers.

    False only when every ``_target_`` in it (nested ones too) resolves to a class of
    :data:`QP_FREE_PACKAGES`; an unknown or unresolvable target counts as a user.
    """
    from hydra.utils import get_class
    from omegaconf import DictConfig, OmegaConf

    if isinstance(method_cfg, DictConfig):  # targets only: leave interpolations be
        method_cfg = OmegaConf.to_container(method_cfg, resolve=False)
    targets = _targets(method_cfg)
    if not targets:
        return True
    for target in targets:
        try:
            module = get_class(target).__module__
        except Exception:  # noqa: BLE001 (the run itself reports a bad target)
            return True
        if not module.startswith(QP_FREE_PACKAGES):
            return True
    return False


def announce_compilation(method_cfg: Mapping | None = None) -> bool:
    """Log once per process that the QP solvers compile now; whether it logged.

    With ``method_cfg``, only for a method that may call them
    (:func:`uses_qp_solvers`): the metric-learning, KOMD and FDA runs of kdml,
    lmnnmkl and arbf never compile them.
    """
    global _announced
    if _announced:
        return False
    if method_cfg is not None and not uses_qp_solvers(method_cfg):
        return False
    _announced = True
    cold = cold_solvers()
    if cold:
        log.info("compiling the QP solvers (first run only, ~%d s)", COMPILE_SECONDS)
    return bool(cold)
