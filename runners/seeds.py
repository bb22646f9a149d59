"""Seeds derived from named parts, stable across processes and Python versions.

Outer splits take ``("outer", dataset, repetition)`` and leave the method out, so every
method of a table sees the same folds (mlsvm Sec. VII: "Folds are the same for all
algorithms"). Python's ``hash`` is salted per process, hence sha256.
"""

from __future__ import annotations

import hashlib


def seed_from(*parts: object) -> int:
    """A 31-bit seed from the ``repr``-free string form of ``parts``."""
    text = "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") >> 1
