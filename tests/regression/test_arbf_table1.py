"""Regression on arbf Table 1: two small datasets, the full protocol (10 splits).

Reruns KOMD and ARBF_20 on heart and ionosphere with the experiment's own config
and asserts that the AUC means and stds equal the committed
reports/generated/arbf/table1.csv.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from reports.arbf import table1_frame
from reports.records import GENERATED_DIR, load_records
from runners.run import compose_config, run_job

pytestmark = pytest.mark.regression

DATASETS = ("heart_libsvm", "ionosphere_libsvm")
METHODS = ("komd", "arbf_t20")


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    results = str(tmp_path_factory.mktemp("results-arbf"))
    os.environ["KML_RESULTS"] = results
    for dataset in DATASETS:
        for method in METHODS:
            rec = run_job(
                compose_config(
                    [
                        "experiment=arbf_table1",
                        f"dataset={dataset}",
                        f"method={method}",
                        f"paths.results={results}",
                    ]
                )
            )
            assert rec["status"] == "ok", rec.get("reason")
    t = table1_frame(load_records(results, "arbf_table1"))
    return t[t.status == "ok"]


def test_rerun_equals_committed_table(rerun):
    committed = pd.read_csv(GENERATED_DIR / "arbf" / "table1.csv")
    merged = rerun.merge(committed, on=["dataset", "method"], suffixes=("", "_c"))
    assert len(merged) == len(rerun) == len(DATASETS) * len(METHODS)
    assert (merged.n_splits == 10).all()
    for col in ("auc_mean", "auc_std"):  # the CSV keeps 4 decimals
        np.testing.assert_allclose(merged[col], merged[f"{col}_c"], atol=1e-3)
