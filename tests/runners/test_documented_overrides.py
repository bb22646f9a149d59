"""Options the README and the reports document as overrides compose as written.

A documented override that Hydra refuses is a dead end for a user; these compose
the sweep's primary config (what Hydra builds before the sweep picks a method) and
every job of the sweep with the override exactly as documented.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from runners.run import CONF_DIR

REPO = Path(__file__).resolve().parents[2]
SOURCES = [REPO / "README.md", REPO / "reports" / "lmnnmkl.py"]


def _documented(pattern: str) -> list[str]:
    """Every override matching ``pattern`` in the sources, shell quoting removed."""
    found = []
    for path in SOURCES:
        for m in re.finditer(r"`([^`]*" + pattern + r"[^`]*)`", path.read_text()):
            words = shlex.split(m.group(1))
            found += [w for w in words if re.search(pattern, w)]
    return found


LMNN_OVERRIDES = _documented(r"method\.lmnn_params=")


def test_the_lighter_lmnn_option_is_documented():
    assert LMNN_OVERRIDES, "README / reports/lmnnmkl.py: no method.lmnn_params option"


@pytest.mark.parametrize("override", sorted(set(LMNN_OVERRIDES)))
@pytest.mark.parametrize("experiment", ["lmnnmkl_table1", "lmnnmkl_table2"])
def test_documented_lmnn_params_override_composes(experiment, override):
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        primary = compose(
            "config", overrides=[f"experiment={experiment}", override],
            return_hydra_config=True,
        )
        methods = str(primary.hydra.sweeper.params.method).split(",")
        for method in methods:
            job = compose(
                "config",
                overrides=[f"experiment={experiment}", f"method={method}", override],
            )
            params = OmegaConf.to_container(job.method.lmnn_params)
            assert params == {"max_iter": 200, "tol": 1e-5}, method
