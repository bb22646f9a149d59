"""Compose each distinct Hydra config once per ``kml-run`` process (issue 14).

Hydra composes the same config several times in one multirun: ``Hydra.get_mode``
composes the primary config to learn the mode and ``Hydra.multirun`` composes it
again; the basic sweeper composes every job to validate the batch
(``Sweeper.validate_batch_is_legal``) and the launcher composes it once more to run
it (in this process when the job runs here: one worker or a one-job sweep, see
:mod:`runners.launch_local`). Each composition reads and merges the config files
(~0.2 s), 5 of them for one Table I cell, where the plain scikit-learn nested CV
of a small cell takes ~3.6 s in all (``benchmarks/bench_cell.py``).

:func:`install` wraps ``ConfigLoaderImpl.load_configuration`` so that a loader
returns a deep copy of what it composed before for the same config name,
overrides, run mode and shell flag; a request that asks for the sweep-override
validation the first composition skipped (``get_mode`` skips it) runs that check.
The memo belongs to the loader instance (a new ``initialize`` or ``hydra.main`` has a
new loader, so config files edited between them are read again) and holds at most
:data:`MAX_ENTRIES` configs. Composition reads only the config files and the
overrides (interpolations such as ``oc.env`` stay unresolved until used), so a copy
equals a fresh composition.

The memo is kept beside the loader, in a weak-keyed table, not in its ``__dict__``:
the joblib launcher pickles the loader (in its ``HydraContext`` and again in Hydra's
singleton state) into every job it sends to a worker, and a Table I sweep's 141
compositions made that 5.3 MB and ~3 s of CPU per job, where composing the job
again in the worker costs ~0.1 s (``benchmarks/README.md``, session 11).

:func:`install` also narrows the sweeper's batch check to the jobs that
:func:`runners.callbacks.check_sweep` did not cover: that check composes one job
per signature and per override line, so every config file of the sweep, and a
Table I sweep no longer composes its 140 jobs in the parent (~14 s of one core)
before the first one starts.
"""

from __future__ import annotations

import copy
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.plugins.sweeper import Sweeper

#: Configs a loader keeps (a Table I sweep has 140 jobs; a config is ~100 kB).
MAX_ENTRIES = 256
_MEMOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_original = ConfigLoaderImpl.load_configuration
_original_validate = Sweeper.validate_batch_is_legal


def _load_configuration(
    self: ConfigLoaderImpl,
    config_name: str | None,
    overrides: list[str],
    run_mode: Any,
    from_shell: bool = True,
    validate_sweep_overrides: bool = True,
):
    memo = _MEMOS.get(self)
    if memo is None:
        memo = _MEMOS[self] = OrderedDict()
    key = (config_name, tuple(overrides), run_mode, from_shell)
    hit = memo.get(key)
    if hit is None:
        cfg = _original(
            self,
            config_name=config_name,
            overrides=overrides,
            run_mode=run_mode,
            from_shell=from_shell,
            validate_sweep_overrides=validate_sweep_overrides,
        )
        memo[key] = (copy.deepcopy(cfg), validate_sweep_overrides)
        if len(memo) > MAX_ENTRIES:
            memo.popitem(last=False)
        return cfg
    memo.move_to_end(key)
    cfg, validated = hit
    if validate_sweep_overrides and not validated:
        parsed = OverridesParser.create(config_loader=self).parse_overrides(
            list(overrides)
        )
        self.validate_sweep_overrides_legal(
            overrides=parsed, run_mode=run_mode, from_shell=from_shell
        )
        memo[key] = (cfg, True)
    return copy.deepcopy(cfg)


# Per loader (so per sweep: Hydra makes one per ``hydra.main`` or ``initialize``), the
# jobs whose every config file the sweep check (runners.callbacks.check_sweep)
# composed and checked: Hydra's batch check skips exactly these.
_CHECKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def mark_checked(loader: ConfigLoaderImpl, jobs: Iterable[Sequence[str]]) -> None:
    """Record ``jobs`` (override lists) as checked by the sweep check of ``loader``."""
    _CHECKED.setdefault(loader, set()).update(tuple(job) for job in jobs)


def _validate_batch_is_legal(self: Sweeper, batch: Sequence[Sequence[str]]) -> None:
    """Hydra's batch check, minus the jobs the sweep check covered.

    Hydra composes every job of a batch before launching any (~0.1 s each); the
    sweep check has composed one job per checked signature and per override line,
    so every config file these jobs name (and every dataset-method pair file). Jobs
    it has not seen (another loader, another sweeper, a batch it did not expand) get
    Hydra's check. The launcher composes each job again where it runs; a job that
    fails there stops the sweep (Hydra's launchers raise), with the records of the
    finished jobs kept, so the sweep check must not miss a failure: it relies on
    dataset and method files writing only into their own package
    (``tests/runners/test_config_checks.py``).
    """
    context = getattr(self, "hydra_context", None)
    loader = context.config_loader if context is not None else self.config_loader
    checked = _CHECKED.get(loader, ())
    unchecked = [job for job in batch if tuple(job) not in checked]
    if unchecked:
        _original_validate(self, unchecked)


def install() -> None:
    """Route Hydra's config loader through the memo and its batch check past the
    jobs the sweep check covered (idempotent)."""
    ConfigLoaderImpl.load_configuration = _load_configuration
    Sweeper.validate_batch_is_legal = _validate_batch_is_legal


def uninstall() -> None:
    """Hydra's own ``load_configuration`` and batch check again (tests)."""
    ConfigLoaderImpl.load_configuration = _original
    Sweeper.validate_batch_is_legal = _original_validate
