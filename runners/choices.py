"""Unknown config choices on the command line, caught before Hydra starts.

Hydra answers ``dataset=sonr`` with the whole option list (schema names
included), the config search path and a hint about stack traces. ``kml-run``
checks the values of its config groups against the files in ``conf/`` first and
names the closest ones. Anything it cannot judge (sweep functions such as
``range(...)``, interpolations, an added search path) is left to Hydra.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
GROUPS = ("dataset", "method", "kernel", "protocol", "experiment")
_SPECIAL = set("()[]{}$*?")


def options(group: str) -> list[str]:
    """The choices of a config group: its YAML files, relative to the group."""
    folder = CONF_DIR / group
    files = folder.rglob("*.yaml")
    return sorted(str(p.relative_to(folder).with_suffix("")) for p in files)


def unknown_choices(argv: Sequence[str]) -> str | None:
    """A message naming each unknown group value of ``argv``, or None."""
    if any("searchpath" in a or a.startswith(("-cd", "--config-dir")) for a in argv):
        return None  # choices may live in another config directory
    problems = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        key = key.lstrip("+")
        if arg.startswith("-") or not sep or key not in GROUPS:
            continue
        if _SPECIAL & set(value):
            continue
        known = options(key)
        for choice in (v.strip() for v in value.split(",")):
            if not choice or choice == "null" or choice in known:
                continue
            close = difflib.get_close_matches(choice, known, n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            problems.append(
                f"{key}={choice}: no such {key} ({hint}conf/{key}/ has "
                f"{', '.join(known)})"
            )
    if not problems:
        return None
    return "kml-run: no run was started:\n  " + "\n  ".join(problems)
