"""Name lookup: registry names, the published names of each paper, listing."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from datasets._registry import REGISTRY
from datasets._spec import PAPER_LETTERS, PAPERS, DatasetSpec
from datasets.exceptions import UnknownDatasetError

__all__ = ["ALIASES", "list_datasets", "normalize_paper", "resolve"]


def _aliases() -> Mapping[str, Mapping[str, str]]:
    # paper -> {published name: registry name}
    table: dict[str, dict[str, str]] = {p: {} for p in PAPERS}
    for spec in REGISTRY.values():
        for paper, published in spec.published_names.items():
            table[paper][published.lower()] = spec.name
    return MappingProxyType({p: MappingProxyType(t) for p, t in table.items()})


#: Paper key -> {published name (lower case): registry name}.
ALIASES: Mapping[str, Mapping[str, str]] = _aliases()


def normalize_paper(paper: str) -> str:
    """Paper key from a key or a letter ("mlsvm" or "A").

    Raises
    ------
    ValueError
        If ``paper`` is neither.
    """
    key = PAPER_LETTERS.get(paper.strip().upper(), paper.strip().lower())
    if key not in PAPERS:
        raise ValueError(
            f"Unknown paper {paper!r}; expected one of {', '.join(PAPERS)} "
            f"(or the letters {', '.join(PAPER_LETTERS)})."
        )
    return key


def resolve(name_or_alias: str, paper: str | None = None) -> str:
    """Registry name for a registry name or a published name.

    Parameters
    ----------
    name_or_alias : str
        A registry name (``"breast_w"``) or a name a paper's published CSV uses
        (``"breast_cancer_wisconsin"``); case-insensitive.
    paper : str or None, default=None
        Paper key or letter. When given, that paper's published names win over
        registry names: ``resolve("ionosphere", paper="arbf")`` is
        ``"ionosphere_libsvm"``, ``resolve("wine", paper="kdml")`` is
        ``"wine_quality_white"``. When None, registry names win and a
        published name is accepted if it means one dataset in every paper.

    Returns
    -------
    str
        Registry name.

    Raises
    ------
    UnknownDatasetError
        If nothing matches; the message lists valid names and close matches.

    Examples
    --------
    >>> resolve("voting")
    'house_votes'
    >>> resolve("diabetes", paper="arbf")
    'diabetes_libsvm'
    """
    key = str(name_or_alias).strip().lower()
    if paper is not None:
        paper = normalize_paper(paper)
        if key in ALIASES[paper]:
            return ALIASES[paper][key]
    if key in REGISTRY:
        return key
    if paper is None:
        targets = {t[key] for t in ALIASES.values() if key in t}
        if len(targets) == 1:
            return targets.pop()
    all_aliases = {a for t in ALIASES.values() for a in t}
    raise UnknownDatasetError(name_or_alias, list(REGISTRY), all_aliases, paper)


def list_datasets(paper: str | None = None) -> list[DatasetSpec]:
    """Registry entries, in manifest order.

    Parameters
    ----------
    paper : str or None, default=None
        Only the datasets of this paper (key or letter), with the stand-ins
        that replace one of its unavailable datasets.

    Returns
    -------
    list of DatasetSpec
    """
    specs = list(REGISTRY.values())
    if paper is None:
        return specs
    paper = normalize_paper(paper)
    return [
        s
        for s in specs
        if paper in s.papers or any(paper in REGISTRY[n].papers for n in s.standin_for)
    ]
