"""Regression on lmnnmkl Table 1: colon with 1-NN and LMNN_H, the full protocol.

Reruns the two methods on colon with the experiment's own config (10-fold CV, the
20-kernel bank, mean-diagonal normalization on the training block) and asserts that
the rerun equals the committed reports/generated/lmnnmkl/table1.csv cell by cell.
"""

from __future__ import annotations

import os

import pandas as pd
import pytest

from reports.records import GENERATED_DIR
from runners.run import compose_config, run_job

pytestmark = pytest.mark.regression

CELLS = (("colon", "knn1", "none"), ("colon", "lmnn_h", "lmnn20"))


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    os.environ["KML_RESULTS"] = str(tmp_path_factory.mktemp("results-lmnnmkl"))
    out = {}
    for dataset, method, kernel in CELLS:
        rec = run_job(
            compose_config(
                [
                    "experiment=lmnnmkl_table1",
                    f"dataset={dataset}",
                    f"method={method}",
                    f"kernel={kernel}",
                ]
            )
        )
        assert rec["status"] == "ok", rec.get("reason")
        out[(dataset, method)] = rec
    return out


def test_rerun_equals_committed_table1(rerun):
    committed = pd.read_csv(GENERATED_DIR / "lmnnmkl" / "table1.csv")
    for (dataset, method), rec in rerun.items():
        row = committed[(committed.dataset == dataset) & (committed.method == method)]
        assert len(row) == 1, (dataset, method)
        assert rec["accuracy_pct"] == pytest.approx(
            float(row.accuracy_pct.iloc[0]), abs=1e-4
        ), (dataset, method)
