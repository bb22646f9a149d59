"""The registry is data: datasets/registry.yaml, read and checked by _registry.py."""

from __future__ import annotations

import inspect
import re
from importlib import resources

import pytest
import yaml

import datasets._registry as registry_module
from datasets import REGISTRY
from datasets._registry import REGISTRY_FILE, load_registry
from datasets._spec import PAPERS


def _shipped_text() -> str:
    return resources.files("datasets").joinpath(REGISTRY_FILE).read_text("utf-8")


def test_registry_is_read_from_the_shipped_data_file():
    entries = yaml.safe_load(_shipped_text())
    assert [e["name"] for e in entries] == list(REGISTRY)
    assert len(REGISTRY) == 35
    # the code holds no copy of the data: no checksum, no class count literal
    source = inspect.getsource(registry_module)
    assert not re.search(r"[0-9a-f]{64}", source)
    assert "class_counts=" not in source


def test_every_field_comes_from_the_entry_or_a_stated_rule():
    entries = {e["name"]: e for e in yaml.safe_load(_shipped_text())}
    for name, spec in REGISTRY.items():
        entry = entries[name]
        # papers: the published names' keys, in paper order (PAPERS)
        assert set(spec.papers) == set(entry["published_names"])
        assert list(spec.papers) == sorted(spec.papers, key=PAPERS.index)
        assert [f.sha256 for f in spec.files] == [
            f["sha256"] for f in entry.get("files", [])
        ]
        if "class_counts" in entry:
            assert dict(spec.class_counts) == entry["class_counts"]
        assert spec.available == ("unavailable_reason" not in entry)


def _one_entry(**changes) -> str:
    entry = yaml.safe_load(_shipped_text())[0]
    entry.update(changes)
    return yaml.safe_dump([entry])


def test_unknown_field_names_the_entry():
    with pytest.raises(ValueError, match=r"registry.yaml, entry 'sonar'.*n_sample"):
        load_registry(_one_entry(n_sample=3))


def test_unknown_paper_or_policy_fails_at_import():
    with pytest.raises(ValueError, match="unknown missing policy"):
        load_registry(_one_entry(missing_policy="drop_everything"))
    with pytest.raises(ValueError, match="derived from unknown 'nowhere'"):
        load_registry(_one_entry(derived_from="nowhere"))


def test_duplicate_names_fail():
    entry = yaml.safe_load(_shipped_text())[0]
    with pytest.raises(ValueError, match="duplicate dataset name 'sonar'"):
        load_registry(yaml.safe_dump([entry, entry]))


def test_labels_keep_their_type():
    # YAML keys stay ints where the files' labels are ints, strings where strings
    assert set(REGISTRY["sonar"].class_counts) == {0, 1}
    assert set(REGISTRY["wpbc"].class_counts) == {"N", "R"}
