"""Fixtures for the datasets tests.

Every test runs offline (``KML_OFFLINE=1``: OpenML is never contacted) and with
an empty private cache directory, so a user's ``~/.cache/kml-repro`` cannot change
what the tests see. Tests that need the shared mirror skip when it is absent.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from datasets import REGISTRY, default_mirror


@pytest.fixture(autouse=True, scope="session")
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("kml-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KML_OFFLINE", "1")
        mp.setenv("KML_CACHE", str(cache))
        yield


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The shared mirror; tests that read staged files skip without it."""
    path = default_mirror()
    if not (path / "sonar" / "sonar.tsv.gz").is_file():
        pytest.skip(f"dataset mirror not found at {path} (set DATA_MIRROR)")
    return path


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    """An empty directory, to use as a mirror or cache that has nothing."""
    path = tmp_path / "empty"
    path.mkdir()
    return path


@pytest.fixture
def mirror_copy(tmp_path: Path, mirror: Path):
    """Copy one dataset's mirror files to a private mirror; returns a function.

    ``mirror_copy("heart_libsvm")`` gives the new mirror root, whose files
    can be altered without touching the shared mirror.
    """

    def copy(name: str) -> Path:
        root = tmp_path / "mirror"
        for raw in REGISTRY[name].files:
            target = root / raw.relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(mirror / raw.relpath, target)
        return root

    return copy
