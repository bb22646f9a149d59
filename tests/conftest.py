"""Session-wide test hygiene: no test writes into the user's folders or leaks env vars.

- ``KML_RESULTS`` and ``KML_OUTPUTS`` point to a private temporary folder, so a test
  that forgets to set them never writes into the checkout's ``results/``.
- ``KML_OFFLINE=1``: OpenML is never contacted.
- Every test module and every test gets back the environment it started with, so a
  test (or a module fixture) that sets ``os.environ`` cannot change what later tests
  see; use ``monkeypatch.setenv`` or pass ``paths.results=...`` as an override.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_run_folders(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("kml-session")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KML_RESULTS", str(root / "results"))
        mp.setenv("KML_OUTPUTS", str(root / "outputs"))
        mp.setenv("KML_OFFLINE", "1")
        yield


def _restore(saved: dict[str, str]) -> None:
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(autouse=True, scope="module")
def _module_environment():
    saved = dict(os.environ)
    yield
    _restore(saved)


@pytest.fixture(autouse=True)
def _test_environment():
    saved = dict(os.environ)
    yield
    _restore(saved)
