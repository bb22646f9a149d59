"""reports/known_divergences.csv: well-formed, and in step with the committed tables.

A listed cell must still be outside 2 SE in the committed table (no stale dagger), and
every committed cell outside 2 SE must be listed with a reason.
"""

import pandas as pd
import pytest

from reports.error_tables import DIVERGENCE_STATUSES, KNOWN_DIVERGENCES
from reports.records import GENERATED_DIR, load_published

KEY = ["paper", "artifact", "dataset", "kernel", "method"]


@pytest.fixture(scope="module")
def known():
    return pd.read_csv(KNOWN_DIVERGENCES, dtype=str).fillna("")


def test_rows_are_unique_with_status_and_reason(known):
    assert not known.duplicated(KEY).any(), known[known.duplicated(KEY)]
    assert set(known.status) <= set(DIVERGENCE_STATUSES)
    assert (known.reason.str.len() > 40).all()


def test_every_row_names_a_published_cell(known):
    for paper, rows in known.groupby("paper"):
        pub = load_published(paper)
        kernels = pub.kernel if "kernel" in pub else [""] * len(pub)  # arbf: none
        cells = set(zip(pub.artifact, pub.dataset, kernels, pub.method))
        for r in rows.itertuples():
            assert (r.artifact, r.dataset, r.kernel, r.method) in cells, r


@pytest.mark.parametrize("artifact", ["table1", "table2"])
def test_listed_cells_match_the_committed_table(known, artifact):
    table = pd.read_csv(GENERATED_DIR / "mlsvm" / f"{artifact}.csv")
    table = table[table.status == "ok"]
    outside = set(
        zip(
            table.published_dataset[~table.within_2se],
            table.kernel[~table.within_2se],
            table.method[~table.within_2se],
        )
    )
    rows = known[(known.paper == "mlsvm") & (known.artifact == artifact)]
    listed = set(zip(rows.dataset, rows.kernel, rows.method))
    assert outside - listed == set(), "outside 2 SE without a listed reason"
    assert listed - outside == set(), "listed but now within 2 SE: remove the row"


def test_numbers_cited_from_checks_are_the_computed_ones(known):
    """A reason citing check 'alt' quotes only numbers that table1_checks.csv holds."""
    import re

    from reports.error_tables import published_dataset_names

    checks = pd.read_csv(GENERATED_DIR / "mlsvm" / "table1_checks.csv")
    to_pub = published_dataset_names("mlsvm")
    checks["published_dataset"] = checks.dataset.map(lambda d: to_pub.get(d, d))
    rows = known[known.reason.str.contains("check 'alt'")]
    assert len(rows) > 0
    for r in rows.itertuples():
        alt = checks[
            (checks.check == "alt")
            & (checks.published_dataset == r.dataset)
            & (checks.kernel == r.kernel)
        ]
        for quoted in re.findall(r"gives ([\d.]+)%", r.reason):
            assert any(abs(float(quoted) - v) < 5e-3 for v in alt.value), (r, quoted)
