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
The memo lives on the loader instance (a new ``initialize`` or ``hydra.main`` has a
new loader, so config files edited between them are read again) and holds at most
:data:`MAX_ENTRIES` configs. Composition reads only the config files and the
overrides (interpolations such as ``oc.env`` stay unresolved until used), so a copy
equals a fresh composition.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.override_parser.overrides_parser import OverridesParser

#: Configs a loader keeps (a Table I sweep has 140 jobs; a config is ~100 kB).
MAX_ENTRIES = 256
_MEMO_ATTR = "_kml_compose_memo"
_original = ConfigLoaderImpl.load_configuration


def _load_configuration(
    self: ConfigLoaderImpl,
    config_name: str | None,
    overrides: list[str],
    run_mode: Any,
    from_shell: bool = True,
    validate_sweep_overrides: bool = True,
):
    memo: OrderedDict = self.__dict__.setdefault(_MEMO_ATTR, OrderedDict())
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


def install() -> None:
    """Route Hydra's config loader through the memo (idempotent)."""
    ConfigLoaderImpl.load_configuration = _load_configuration


def uninstall() -> None:
    """Hydra's own ``load_configuration`` again (tests)."""
    ConfigLoaderImpl.load_configuration = _original
