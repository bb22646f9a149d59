"""Public kernel functions (the implementation lives in :mod:`methods._kernels`)."""

from methods._kernels import (
    BANK20_DEGREES,
    BANK20_SIGMAS,
    BANKS,
    KERNELS,
    NORMALIZATIONS,
    KernelSpec,
    bank20,
    bank_specs,
    cosine_normalize,
    kernel_stack,
    pairwise_kernel,
    squared_distances,
)

__all__ = [
    "BANK20_DEGREES",
    "BANK20_SIGMAS",
    "KERNELS",
    "NORMALIZATIONS",
    "KernelSpec",
    "BANKS",
    "bank20",
    "bank_specs",
    "cosine_normalize",
    "kernel_stack",
    "pairwise_kernel",
    "squared_distances",
]
