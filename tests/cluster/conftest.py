"""Fixtures of the cluster tests (helpers in cluster_sweeps.py)."""

from cluster_sweeps import joblib_reference  # noqa: F401
