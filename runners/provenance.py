"""Where a record came from: code version, git commit, packages, host, time."""

from __future__ import annotations

import hashlib
import platform
import socket
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# Source that can change a number in a record. Reports and docs are left out, so
# editing a table template does not invalidate finished runs. The YAML is data read
# by the code: datasets/registry.yaml's loading steps (missing values, columns).
_VERSIONED_PACKAGES = ("datasets", "methods", "runners")
_VERSIONED_SUFFIXES = (".py", ".yaml")
_PACKAGES = (
    "numpy",
    "scipy",
    "scikit-learn",
    "cvxopt",
    "numba",
    "pandas",
    "hydra-core",
    "statsmodels",
    "joblib",
)


@lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 (first 12 hex digits) of every ``.py``/``.yaml`` file of the versioned
    packages."""
    h = hashlib.sha256()
    for pkg in _VERSIONED_PACKAGES:
        paths = (REPO_ROOT / pkg).rglob("*")
        for path in sorted(p for p in paths if p.suffix in _VERSIONED_SUFFIXES):
            h.update(str(path.relative_to(REPO_ROOT)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


def outside_sources(node: object) -> dict[str, str]:
    """Digest of the file of every ``_target_`` in ``node`` that lies outside the
    versioned packages: a method of one's own, which :func:`code_version` cannot
    see, so that editing it makes its runs new ones. Nothing for this project's
    classes (their records keep their keys); a target that does not import is
    the run's to report."""
    import importlib

    out: dict[str, str] = {}
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            target = item.get("_target_")
            if isinstance(target, str) and "." in target:
                try:
                    module = importlib.import_module(target.rsplit(".", 1)[0])
                    path = Path(module.__file__ or "").resolve()
                except Exception:  # noqa: BLE001
                    path = None
                if path is not None and path.is_file() and not any(
                    path.is_relative_to(REPO_ROOT / pkg) for pkg in _VERSIONED_PACKAGES
                ):
                    out[target] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


@lru_cache(maxsize=1)
def git_state() -> dict[str, object]:
    """Commit SHA and whether the work tree had uncommitted changes."""

    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False
        )
        return out.stdout.strip() if out.returncode == 0 else ""

    return {
        "sha": git("rev-parse", "HEAD") or None,
        "dirty": bool(git("status", "--porcelain")),
    }


def package_versions() -> dict[str, str]:
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def provenance() -> dict[str, object]:
    return {
        "code_version": code_version(),
        "git": git_state(),
        "packages": package_versions(),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
    }
