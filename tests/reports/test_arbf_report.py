"""arbf report: the committed Table 1 and reports/known_divergences.csv agree."""

import numpy as np
import pandas as pd
import pytest

from reports.arbf import claim_best_on_all
from reports.error_tables import KNOWN_DIVERGENCES
from reports.records import GENERATED_DIR, load_published


@pytest.fixture(scope="module")
def table():
    return pd.read_csv(GENERATED_DIR / "arbf" / "table1.csv")


def test_table_has_every_published_cell(table):
    pub = load_published("arbf")
    assert set(zip(table.dataset, table.method)) == set(zip(pub.dataset, pub.method))
    np.testing.assert_array_equal(
        table.set_index(["dataset", "method"]).published_mean.sort_index(),
        pub.set_index(["dataset", "method"])["mean"].sort_index(),
    )


def test_cells_outside_one_std_are_listed_and_only_those(table):
    known = pd.read_csv(KNOWN_DIVERGENCES, dtype=str).fillna("")
    known = known[(known.paper == "arbf") & (known.artifact == "table1")]
    ok = table[table.status == "ok"]
    outside = set(zip(ok.dataset[~ok.within_1std], ok.method[~ok.within_1std]))
    listed = set(zip(known.dataset, known.method))
    assert outside - listed == set(), "outside one published std without a reason"
    assert listed - outside == set(), "listed but now within one std: remove the row"


def test_within_flag_is_one_published_std(table):
    ok = table[table.status == "ok"]
    within = (ok.auc_mean - ok.published_mean).abs() <= ok.published_std
    assert (within == ok.within_1std).all()


def test_claim_rows_follow_the_table(table):
    claim = claim_best_on_all(table)
    for c in claim.itertuples():
        g = table[table.dataset == c.dataset].set_index("method").auc_mean
        assert c.best_arbf == pytest.approx(g[["arbf_t20", "arbf_t50"]].max())
