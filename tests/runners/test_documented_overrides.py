"""Options the README and the reports document as overrides compose as written.

A documented override that Hydra refuses is a dead end for a user. Every
backticked snippet of README.md and reports/*.py that sets ``method.<key>=`` is
taken as a command line: the sweep's primary config (what Hydra composes before
the sweep picks each method, with the default method unless the snippet names
one) and every job of the sweep are composed with it, and each job's estimator is
built, so a key that a method does not take fails here as it would in the run.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from runners.run import CONF_DIR

REPO = Path(__file__).resolve().parents[2]
SOURCES = [REPO / "README.md", *sorted((REPO / "reports").glob("*.py"))]
METHOD_KEY = re.compile(r"(?:^|\s|')(?:\+\+)?method\.[a-z_.]+=")


def _snippets() -> list[tuple[str, str]]:
    found = []
    for path in SOURCES:
        # Markdown code spans may wrap; in Python sources a span stays on its line
        text = path.read_text()
        if path.suffix == ".md":
            text = re.sub(r"```.*?```", "", text, flags=re.S)  # fenced blocks
        else:  # join implicitly concatenated string literals, as the report prints
            text = re.sub(r"\"\s*\n\s*\"", "", text)
        span = r"`([^`]+)`" if path.suffix == ".md" else r"`([^`\n]+)`"
        for m in re.finditer(span, text):
            text = " ".join(m.group(1).split())  # a snippet may wrap across lines
            if METHOD_KEY.search(text):
                found.append((path.name, text))
    return found


SNIPPETS = _snippets()
_ABSENT = object()


def _is_sweep(override: str) -> bool:
    value = override.split("=", 1)[1]
    return "," in value and value[:1] not in "[{'\""


def test_the_documented_options_are_found():
    names = {text for _, text in SNIPPETS}
    assert any("lmnn_params" in t for t in names), names
    assert any("score_rule=vote" in t for t in names), names


@pytest.mark.parametrize(("source", "snippet"), SNIPPETS)
def test_documented_method_override_composes_for_every_job(source, snippet):
    overrides = [w for w in shlex.split(snippet) if "=" in w and not w.startswith("-")]
    fixed = [o for o in overrides if not _is_sweep(o)]
    swept = {o.split("=", 1)[0]: o.split("=", 1)[1].split(",") for o in overrides
             if _is_sweep(o)}
    assert set(swept) <= {"method", "dataset"}, f"{source}: {snippet}"
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        primary = compose("config", overrides=fixed, return_hydra_config=True)
        params = primary.hydra.sweeper.get("params") or {}
        if "method" in swept:
            methods = swept["method"]
        elif any(o.startswith("method=") for o in fixed):
            methods = [None]  # the snippet's own single method
        elif "method" in params:
            methods = str(params.method).split(",")
        else:
            methods = [None]
        for method in methods:
            job = compose(
                "config",
                overrides=fixed + ([f"method={method}"] if method else []),
            )
            instantiate(job.method)  # a key the estimator does not take fails here
            for o in fixed:
                key, value = o.lstrip("+").split("=", 1)
                if key.startswith("method."):
                    found = OmegaConf.select(job, key, default=_ABSENT)
                    assert found is not _ABSENT, (source, method, o)
