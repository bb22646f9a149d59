"""The OpenML source goes through the ``openml`` client (no network here: faked)."""

from __future__ import annotations

import numpy as np
import openml
import pandas as pd
import pytest
import requests

import datasets._openml
from datasets import REGISTRY, load
from datasets.exceptions import DatasetUnavailableError


class _FakeDataset:
    default_target_attribute = "Class"

    def __init__(self, calls):
        self.calls = calls

    def get_data(self, target=None, **kwargs):
        self.calls.append(("get_data", target, openml.config._root_cache_directory))
        frame = pd.DataFrame({"a": [0.5, 1.0, np.nan], "b": [1, 2, 3]})
        return frame, pd.Series(["Mine ", "Rock", "Mine"]), [False, False], ["a", "b"]


def test_fetch_uses_the_openml_client_with_our_cache(monkeypatch, tmp_path):
    calls = []

    def get_dataset(dataset_id, **kwargs):
        calls.append(("get_dataset", dataset_id, openml.config._root_cache_directory))
        return _FakeDataset(calls)

    monkeypatch.setattr(openml.datasets, "get_dataset", get_dataset)
    before = openml.config._root_cache_directory
    parsed = datasets._openml.fetch(REGISTRY["sonar"], tmp_path)
    assert calls[0][:2] == ("get_dataset", 40)
    assert calls[1][:2] == ("get_data", "Class")
    assert {str(c[2]) for c in calls} == {str(tmp_path / "openml")}
    assert openml.config._root_cache_directory == before  # global left as found
    np.testing.assert_array_equal(parsed.X, [[0.5, 1.0], [1.0, 2.0], [np.nan, 3.0]])
    assert parsed.X.dtype == np.float64
    assert list(parsed.y) == ["Mine", "Rock", "Mine"]
    assert parsed[2] == ("a", "b")


def test_no_network_is_a_clear_error_in_the_places_tried(monkeypatch, tmp_path):
    def unreachable(dataset_id, **kwargs):
        raise requests.ConnectionError("Max retries exceeded with url: openml.org")

    monkeypatch.setattr(openml.datasets, "get_dataset", unreachable)
    with pytest.raises(ConnectionError, match="OpenML dataset 40 needs network"):
        datasets._openml.fetch(REGISTRY["sonar"], tmp_path)
    monkeypatch.delenv("KML_OFFLINE", raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetUnavailableError) as info:
        load("sonar", mirror=empty, cache_dir=empty)
    assert "needs network access" in info.value.tried[-1]
