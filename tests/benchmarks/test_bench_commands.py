"""Every benchmark command the documentation quotes parses with its script's options.

The commands come from ``README.md`` and ``benchmarks/README.md`` (spans in
backticks naming a script of ``benchmarks/``) and from each script's docstring (its
``Usage::``/``Run:`` lines). Each is parsed by the script's own ``main`` with the
argument parser stopped right after parsing, so nothing is timed; an option that
was renamed or dropped fails here instead of in a user's shell.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import shlex
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
SCRIPT = r"(?:benchmarks/)?((?:bench_\w+|diff_records)\.py)"
#: Placeholders the docs write for a value.
PLACEHOLDERS = {"MAX_ITER": "40"}


def _command(name: str, rest: str) -> tuple[str, list[str]]:
    rest = rest.replace("[", " ").replace("]", " ")  # optional parts: all given
    return name, [PLACEHOLDERS.get(a, a) for a in shlex.split(rest)]


def _readme_commands(path: Path) -> list[tuple[str, list[str]]]:
    out = []
    # one paragraph at most: a span may wrap, never crosses a blank line or a fence
    for span in re.findall(r"`([^`]+)`", path.read_text()):
        if "\n\n" in span or not (m := re.search(SCRIPT + r"(.*)", span, re.S)):
            continue
        # a bare name is a mention, not a command; "--gemm/--lbfgs/--floor" is prose
        if not m.group(2).strip() or "/--" in m.group(2):
            continue
        out.append(_command(m.group(1), m.group(2)))
    return out


def _docstring_commands(path: Path) -> list[tuple[str, list[str]]]:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    # "Run: ``python ...``" spans (they may wrap), then the lines of Usage:: blocks
    spans = re.findall(r"``(.*?)``", doc, flags=re.S)
    lines = [line for line in doc.splitlines() if "``" not in line]
    out = []
    for text in spans + lines:
        m = re.search(r"python\s+" + SCRIPT + r"([^#]*)", text, flags=re.S)
        if m:
            out.append(_command(m.group(1), m.group(2)))
    return out


def _all_commands() -> list[tuple[str, str, list[str]]]:
    found = []
    for doc in (REPO / "README.md", BENCH / "README.md"):
        found += [(doc.name, *c) for c in _readme_commands(doc)]
    for script in sorted(BENCH.glob("*.py")):
        found += [(script.name, *c) for c in _docstring_commands(script)]
    return found


COMMANDS = _all_commands()


class _Parsed(Exception):
    pass


def test_the_docs_quote_commands():
    scripts = {name for _, name, _ in COMMANDS}
    assert len(COMMANDS) > 40
    assert {p.name for p in BENCH.glob("bench_*.py")} <= scripts
    assert "diff_records.py" in scripts


@pytest.mark.parametrize(
    "doc,script,argv", COMMANDS, ids=[f"{d}:{s} {' '.join(a)}" for d, s, a in COMMANDS]
)
def test_documented_command_parses(monkeypatch, doc, script, argv):
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        parse(self, args, namespace)
        raise _Parsed

    monkeypatch.syspath_prepend(str(REPO))
    module = importlib.import_module(f"benchmarks.{script[:-3]}")
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [script, *argv])
    with pytest.raises(_Parsed):
        module.main()


def _options(script: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The option strings of ``script``'s parser (as its ``main`` builds it)."""
    parsers = []

    def keep_and_stop(self, args=None, namespace=None):
        parsers.append(self)
        raise _Parsed

    module = importlib.import_module(f"benchmarks.{script[:-3]}")
    with monkeypatch.context() as mp:
        mp.setattr(argparse.ArgumentParser, "parse_args", keep_and_stop)
        mp.setattr(sys, "argv", [script])
        with pytest.raises(_Parsed):
            module.main()
    return set(parsers[0]._option_string_actions)


def test_every_option_benchmarks_readme_names_exists(monkeypatch):
    """An option quoted alone (`--split`, `--lbfgs 40`) is some script's, spelled out.

    argparse accepts unambiguous prefixes, so the check is on exact names: a
    prefix that is one script's today can become ambiguous with its next option.
    """
    monkeypatch.syspath_prepend(str(REPO))
    known = set().union(
        *(_options(p.name, monkeypatch) for p in BENCH.glob("*.py") if p.name[0] != "_")
    )
    # spans about other tools: kml-report's --out
    known |= {"--out"}
    text = (BENCH / "README.md").read_text()
    named = {
        opt
        for span in re.findall(r"`([^`]+)`", text)
        if "\n\n" not in span and not re.search(r"kml-|make |pytest", span)
        for opt in re.findall(r"(?<![\w-])--[a-z][\w-]*", span)
    }
    assert named, "no option found in benchmarks/README.md"
    assert sorted(named - known) == []
