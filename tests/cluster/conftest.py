"""Fixtures of the cluster tests (helpers in cluster_sweeps.py)."""

from tests.cluster.cluster_sweeps import joblib_reference  # noqa: F401
