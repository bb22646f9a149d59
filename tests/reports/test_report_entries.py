"""Every ``kml-report`` entry takes what the CLI passes and guards committed tables."""

from __future__ import annotations

import hashlib
import importlib
import inspect

import pytest

from reports.__main__ import REPORTS, main
from reports.records import GENERATED_DIR


@pytest.mark.parametrize("experiment", sorted(REPORTS))
def test_entry_accepts_the_cli_arguments(experiment):
    module, func = REPORTS[experiment].split(":")
    fn = getattr(importlib.import_module(module), func)
    # as reports/__main__.py calls it: kml-report EXP --results R --out D ...
    inspect.signature(fn).bind(
        "results", out_dir="out", mcnemar_method="chi2_cc", variants=False
    )


def _digest() -> str:
    h = hashlib.sha256()
    for path in sorted(GENERATED_DIR.rglob("*")):
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize(
    "experiment", ["lmnnmkl_table1", "lmnnmkl_table2", "arbf_table1", "kdml_reduced"]
)
def test_empty_store_is_an_error_and_writes_nothing(experiment, tmp_path, capsys):
    (tmp_path / "results").mkdir()
    before = _digest()
    code = main([experiment, "--results", str(tmp_path / "results")])
    assert code == 2, capsys.readouterr()
    assert "error" in capsys.readouterr().err
    assert _digest() == before  # the committed reports are untouched
