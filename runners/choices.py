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
from typing import Any

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
GROUPS = ("dataset", "method", "kernel", "protocol", "experiment")
# command-line flags that point Hydra at other config files
_OTHER_CONFIG_DIR = (
    "-cp", "--config-path", "-cd", "--config-dir", "-cn", "--config-name"
)


def options(group: str) -> list[str]:
    """The choices of a config group: its YAML files, relative to the group."""
    folder = CONF_DIR / group
    files = folder.rglob("*.yaml")
    return sorted(str(p.relative_to(folder).with_suffix("")) for p in files)


def _closest(choice: str, known: Sequence[str]) -> list[str]:
    """Up to three names of ``known`` that ``choice`` may mean, likeliest first.

    The names that contain it come first: the reports label rows by the paper's
    short names (arbf's "heart", kdml's "Robot", "Wave", "Cardio"), and
    ``dataset=heart`` was answered "did you mean mfeat?", since difflib's ratio
    ranks heart_libsvm below it. Then difflib's close matches, for typos.
    """
    low = choice.lower()
    within = (
        sorted(
            (k for k in known if low in k.lower()),
            key=lambda k: (not k.lower().startswith(low), len(k), k),
        )
        if len(low) >= 3  # "a" or "kn" would name half the folder
        else []
    )
    typos = difflib.get_close_matches(choice, known, n=3, cutoff=0.6)
    return (within + [k for k in typos if k not in within])[:3]


def _published_as(choice: str, known: Sequence[str]) -> list[str]:
    """The datasets of ``known`` that a paper publishes as ``choice``.

    The reports name rows as the papers do (kdml's "Molecular" is ``splice_uci``),
    and a name by which a paper calls a dataset rarely resembles the registry's;
    the registry lists them (``published_names``). Imported only for an unknown
    name: the registry is read once, without scikit-learn.
    """
    from datasets._names import ALIASES

    low = choice.lower()
    return sorted({t[low] for t in ALIASES.values() if t.get(low) in known})


#: The packages each launcher of ``conf/hydra/launcher/`` needs (its Hydra plugin
#: first), from ``make setup-cluster``; ``local`` uses joblib's, installed with the
#: rest.
LAUNCHER_PLUGINS = {
    "ray": ("hydra_plugins.hydra_ray_launcher", "ray"),
    "slurm": ("hydra_plugins.hydra_submitit_launcher", "submitit"),
    "submitit_local": ("hydra_plugins.hydra_submitit_launcher", "submitit"),
}


#: Hydra's flags that print instead of running
_PRINTOUTS = ("-h", "--help", "--hydra-help", "-c", "--cfg", "-i", "--info",
              "--resolve", "-p", "--package", "--shell-completion", "-sc")


def missing_launcher(argv: Sequence[str]) -> str | None:
    """A message when ``argv`` picks a launcher whose plugin is not installed.

    Without ``make setup-cluster``, ``hydra/launcher=ray`` and ``submitit_local``
    died in a traceback ("Unknown plugin class : '...RayLauncher'") and
    ``slurm`` in Hydra's "Could not load 'hydra/launcher/submitit_slurm'" with the
    config search path, neither naming the missing install. Not checked for a
    help or config printout (``--help``, ``--cfg job``), which launches nothing.
    """
    if any(a.split("=", 1)[0] in _PRINTOUTS for a in argv):
        return None
    for arg in argv:
        key, _, value = arg.partition("=")
        if key.lstrip("+") != "hydra/launcher" or value not in LAUNCHER_PLUGINS:
            continue
        missing = [m for m in LAUNCHER_PLUGINS[value] if not _importable(m)]
        if missing:
            return (
                f"kml-run: no run was started: hydra/launcher={value} needs "
                f"{' and '.join(missing)}, which this environment lacks; install the "
                "cluster extras with `make setup-cluster` (README.md, \"Running on a "
                'cluster")'
            )
    return None


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def unknown_choices(argv: Sequence[str]) -> str | None:
    """A message naming each unknown group value of ``argv``, or None (also a
    launcher whose plugin is missing: :func:`missing_launcher`)."""
    if problem := missing_launcher(argv):
        return problem
    if any(a.split("=", 1)[0] in _OTHER_CONFIG_DIR for a in argv):
        return None  # choices may live in another config directory
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ChoiceSweep

    lines = [a for a in argv if "=" in a and not a.startswith("-")]
    try:  # Hydra's own parser: quotes, lists and sweeps as Hydra reads them
        overrides = OverridesParser.create().parse_overrides(lines)
    except Exception:  # noqa: BLE001 (a syntax error is Hydra's to explain)
        return None
    if any("searchpath" in a for a in argv):
        # choices may live in another config directory: not judged unknown, but
        # one that conf/ also has is conf/'s, which Hydra reads first
        return _shadowed(overrides, ChoiceSweep)
    problems = []
    example = None  # (group, choice) of the first unknown value, for the hint
    for override in overrides:
        key = override.key_or_group
        if key not in GROUPS or override.is_delete() or override.package:
            continue
        value = override.value()
        if isinstance(value, ChoiceSweep):
            values = list(value.list)
        elif isinstance(value, str):
            values = [value]
        else:  # range(), glob(), intervals: left to Hydra
            continue
        known = options(key)
        for choice in values:
            if not isinstance(choice, str) or "${" in choice or choice in known:
                continue  # null, numbers, interpolations
            close = _closest(choice, known)
            if key == "dataset":
                close = (_published_as(choice, known) + close)[:3]
                close = list(dict.fromkeys(close))
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            problems.append(
                f"{key}={choice}: no such {key} ({hint}conf/{key}/ has "
                f"{', '.join(known)})"
            )
            example = example or (key, choice)
    if not problems:
        return None
    group, choice = example
    # a file of one's own (README: "Comparing a method of your own") lives outside
    # conf/, and Hydra finds it only through an added search path
    problems.append(
        "a config file of your own outside conf/ is found through its folder: add "
        f'"hydra.searchpath=[file://$PWD/myconf]" for myconf/{group}/{choice}.yaml'
    )
    return "kml-run: no run was started:\n  " + "\n  ".join(problems)


def _group_values(override: Any, choice_sweep: type) -> list[str]:
    """The plain string values of a config-group override (none for a sweep
    function, an interpolation, a package or a delete)."""
    if override.key_or_group not in GROUPS or override.is_delete() or override.package:
        return []
    value = override.value()
    values = list(value.list) if isinstance(value, choice_sweep) else [value]
    return [v for v in values if isinstance(v, str) and "${" not in v]


def _shadowed(overrides: Sequence[Any], choice_sweep: type) -> str | None:
    """A message naming each chosen config file of an added search path that a
    file of ``conf/`` with the same name hides, or None.

    Hydra reads ``conf/`` before the folders of ``hydra.searchpath``, so
    ``myconf/method/fda.yaml`` selected by ``method=fda`` is never read: the run
    is the paper's FDA, recorded (or found cached) under the name the user gave
    their own method, and ``kml-report compare --method fda`` then compares the
    paper's FDA. A file equal to conf/'s (a copy kept as a template) changes
    nothing. Only ``file://`` folders are looked in.
    """
    folders = []
    for override in overrides:
        if override.key_or_group.lstrip("+") != "hydra.searchpath":
            continue
        value = override.value()
        for entry in value if isinstance(value, list) else [value]:
            if isinstance(entry, str) and entry.startswith("file://"):
                folders.append(Path(entry.removeprefix("file://")))
    problems = []
    for override in overrides:
        group = override.key_or_group
        for choice in _group_values(override, choice_sweep):
            if choice not in options(group):
                continue
            for folder in folders:
                mine = folder / group / f"{choice}.yaml"
                ours = CONF_DIR / group / f"{choice}.yaml"
                if mine.is_file() and mine.read_bytes() != ours.read_bytes():
                    problems.append(
                        f"{group}={choice}: {mine} is hidden by the repository's "
                        f"conf/{group}/{choice}.yaml, which Hydra reads first, so "
                        f"the run would be conf/'s {choice}, not yours; give your "
                        f"file a name conf/{group}/ does not have (e.g. "
                        f"{mine.with_name(choice + '_mine.yaml')}, "
                        f"{group}={choice}_mine)"
                    )
    if not problems:
        return None
    return "kml-run: no run was started:\n  " + "\n  ".join(problems)
