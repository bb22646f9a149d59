"""Errors raised while resolving, locating, verifying and loading datasets.

Each message names the dataset, what was expected, what was found and the fix,
following the data-error style of scikit-learn ("Precomputed matrix must be a
square matrix. Input is a {}x{} matrix.").
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = [
    "ChecksumMismatchError",
    "DataValidationError",
    "DatasetError",
    "DatasetUnavailableError",
    "UnknownDatasetError",
]


class DatasetError(Exception):
    """Base class of every error raised by the ``datasets`` package."""


class UnknownDatasetError(DatasetError, KeyError):
    """A name that is neither a registered dataset nor a published alias.

    Subclasses ``KeyError`` so that ``REGISTRY``-style lookups can catch it
    as usual; ``str()`` gives the full message (``KeyError`` would quote it).

    Parameters
    ----------
    name : str
        The name that was asked for.
    valid_names : sequence of str
        Every registered dataset name.
    aliases : iterable of str, default=()
        Published names (per paper) that are also accepted; used only to
        suggest close matches.
    paper : str or None, default=None
        The paper whose published names were searched, if any.
    """

    def __init__(
        self,
        name: str,
        valid_names: Sequence[str],
        aliases: Iterable[str] = (),
        paper: str | None = None,
    ) -> None:
        self.name = name
        self.valid_names = tuple(valid_names)
        candidates = sorted(set(self.valid_names) | set(aliases))
        self.suggestions = tuple(
            difflib.get_close_matches(str(name).lower(), candidates, n=3, cutoff=0.6)
        )
        where = f" (published names of paper {paper!r} searched too)" if paper else ""
        hint = (
            f" Did you mean {', '.join(repr(s) for s in self.suggestions)}?"
            if self.suggestions
            else ""
        )
        self.message = (
            f"Unknown dataset {name!r}{where}.{hint} "
            f"Valid names: {', '.join(self.valid_names)}."
        )
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class DatasetUnavailableError(DatasetError):
    """No copy of a dataset could be found in any source.

    Parameters
    ----------
    name : str
        Registered dataset name.
    reason : str
        Why the data is missing (the manifest's reason for the five datasets
        with no public copy, or "no copy of <file> found").
    tried : sequence of str
        Every place that was looked at, one entry per place, with its path.
    """

    def __init__(self, name: str, reason: str, tried: Sequence[str]) -> None:
        self.name = name
        self.reason = reason
        self.tried = tuple(tried)
        places = "\n".join(f"  - {t}" for t in self.tried) or "  - (nothing)"
        super().__init__(
            f"Dataset {name!r} is unavailable: {reason}\n"
            f"Places tried, in order:\n{places}"
        )


class ChecksumMismatchError(DatasetError):
    """A raw file's sha256 differs from the one recorded in the manifest.

    Parameters
    ----------
    name : str
        Registered dataset name.
    path : str
        The file that was hashed.
    expected : str
        sha256 recorded in the registry (from the manifest).
    got : str
        sha256 of the file on disk.
    fix : str or None, default=None
        How to get the right file back, when the generic advice (restore it from
        MANIFEST.md's source, or delete it) is wrong: a file inside an installed
        package comes back by reinstalling the pinned package, and deleting a
        mirror file that no other source has leaves none (the loader passes the
        fix for the place the copy is in).
    cause : str or None, default=None
        What is wrong with the file, when the loader can tell (its line endings
        converted); by default "The file is corrupt or is a different version."
    """

    def __init__(
        self,
        name: str,
        path: str,
        expected: str,
        got: str,
        fix: str | None = None,
        cause: str | None = None,
    ) -> None:
        self.name = name
        self.path = path
        self.expected = expected
        self.got = got
        fix = fix or (
            "restore it from the source recorded in MANIFEST.md (or delete it so "
            "the next source in order is used)"
        )
        super().__init__(
            f"Checksum mismatch for dataset {name!r}, file {path}: "
            f"expected sha256 {expected}, got {got}. "
            f"{cause or 'The file is corrupt or is a different version.'} "
            f"Fix: {fix}. To use another version knowingly: "
            "datasets.load(..., verify=False) (kml-run always verifies)."
        )


class DataValidationError(DatasetError, ValueError):
    """Loaded arrays disagree with the registry (shape, classes, NaN/inf)."""
