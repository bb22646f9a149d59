"""Old names of fitted attributes, kept readable for users' code.

The per-iteration sequences were named three ways (``objective_history_``,
``objective_path_``, ``loss_``); methods/README.md's convention is now one,
``<quantity>_path_``. A class lists each old name as a :class:`RenamedAttribute`,
which reads the new attribute with a ``FutureWarning``.
"""

from __future__ import annotations

import warnings
from typing import Any


class RenamedAttribute:
    """A fitted attribute's old name, reading ``new`` with a ``FutureWarning``.

    Unfitted (``new`` not set), the old name is absent too (``AttributeError``,
    no warning), so ``hasattr`` and scikit-learn's fitted checks see the same
    thing under both names. Not a data descriptor: nothing is stored under the
    old name.

    Parameters
    ----------
    new : str
        The attribute's name now.
    """

    def __init__(self, new: str) -> None:
        self.new = new
        self.old = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.old = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            value = vars(obj)[self.new]
        except KeyError:
            raise AttributeError(
                f"{type(obj).__name__!r} object has no attribute {self.old!r} "
                f"(renamed {self.new!r}; fit the estimator first)"
            ) from None
        warnings.warn(
            f"{type(obj).__name__}.{self.old} is renamed {self.new} (one name for "
            "the per-iteration values across the estimators, methods/README.md); "
            f"the old name will be removed: read {self.new}",
            FutureWarning,
            stacklevel=2,
        )
        return value
