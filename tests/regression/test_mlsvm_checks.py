"""The check behind the 'explained' Gaussian-kernel rows of known_divergences.csv.

On sonar with the sigma = 1 Gaussian kernel, the C-SVM solution of every training set
of Table I's nested CV already lies inside SVM_m's band, so SVM_m (mlsvm Eq. 14) has
the SVM's solution. If this stopped holding, those rows would need a new reason.
"""

import pandas as pd
import pytest

from reports.mlsvm_checks import band_check
from reports.records import GENERATED_DIR

pytestmark = pytest.mark.regression


def test_svmm_band_is_inactive_on_sonar_gauss1():
    row = band_check("sonar", 3.0)
    assert row["holds"], row
    committed = pd.read_csv(GENERATED_DIR / "mlsvm" / "table1_checks.csv")
    band = committed[(committed.check == "band") & (committed.dataset == "sonar")]
    committed_max = band[band.method == "svmm"].value.iloc[0]
    assert row["value"] == pytest.approx(committed_max, abs=1e-4)  # CSV rounds
    diff = float(row["detail"].rsplit(" ", 1)[-1])
    assert diff < 1e-3  # SVM_m predicts as the SVM
