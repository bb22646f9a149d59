"""Kept only for ``runners/run.py``, which imports ``check_psd_kernel`` from here.

Import it from :mod:`methods` instead; delete this module once the runner does.
"""

from methods._validation import check_psd_kernel

__all__ = ["check_psd_kernel"]
