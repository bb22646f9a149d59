"""Regression on lmnnmkl Tables 1 and 2, the full protocol.

Table 1: colon with 1-NN and LMNN_H (10-fold CV, the 20-kernel bank, mean-diagonal
normalization on the training block); Table 2: mfeat with 1-NN (10 random 50/50
splits). Each rerun uses the experiment's own config and must equal the committed
reports/generated/lmnnmkl/table<k>.csv cell by cell.
"""

from __future__ import annotations

import os

import pandas as pd
import pytest

from reports.records import GENERATED_DIR
from runners.run import compose_config, run_job

pytestmark = pytest.mark.regression

CELLS = (
    ("table1", "colon", "knn1", "none"),
    ("table1", "colon", "lmnn_h", "lmnn20"),
    ("table2", "mfeat", "knn1", "none"),
)


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    os.environ["KML_RESULTS"] = str(tmp_path_factory.mktemp("results-lmnnmkl"))
    out = {}
    for table, dataset, method, kernel in CELLS:
        rec = run_job(
            compose_config(
                [
                    f"experiment=lmnnmkl_{table}",
                    f"dataset={dataset}",
                    f"method={method}",
                    f"kernel={kernel}",
                ]
            )
        )
        assert rec["status"] == "ok", rec.get("reason")
        out[(table, dataset, method)] = rec
    return out


@pytest.mark.parametrize("table", ["table1", "table2"])
def test_rerun_equals_committed_table(rerun, table):
    committed = pd.read_csv(GENERATED_DIR / "lmnnmkl" / f"{table}.csv")
    for (tab, dataset, method), rec in rerun.items():
        if tab != table:
            continue
        row = committed[(committed.dataset == dataset) & (committed.method == method)]
        assert len(row) == 1, (dataset, method)
        assert rec["accuracy_pct"] == pytest.approx(
            float(row.accuracy_pct.iloc[0]), abs=1e-4
        ), (dataset, method)
