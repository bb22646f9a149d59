"""KOMD family (arbf): KOMD with a fixed kernel, and ARBF (anisotropic RBF)."""

from methods.komd._arbf import ARBF, anisotropic_rbf, feature_correlation
from methods.komd._komd import KOMD, komd_objective, solve_komd

__all__ = [
    "ARBF",
    "KOMD",
    "anisotropic_rbf",
    "feature_correlation",
    "komd_objective",
    "solve_komd",
]
