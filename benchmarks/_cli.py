"""Option types shared by the benchmark scripts: a bad value is a usage error.

Given to ``argparse`` as ``type=``, each raises ``ArgumentTypeError``, so
``--repeats 0`` or ``--sizes abc`` stops the script with its usage line and one
message naming the option, before anything is timed, instead of a traceback from
deep in a timing loop (``median`` of no timings, ``train_test_split`` of 0 rows).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def int_at_least(low: int) -> Callable[[str], int]:
    """An ``argparse`` type: an integer >= ``low``.

    Parameters
    ----------
    low : int
        The smallest value accepted.

    Returns
    -------
    callable
        ``str -> int``, raising ``argparse.ArgumentTypeError`` otherwise.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not an integer (give an integer >= {low})"
            ) from None
        if value < low:
            raise argparse.ArgumentTypeError(
                f"{value} is too small (give an integer >= {low})"
            )
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


#: repeats, passes, workers, iterations: at least one
positive_int = int_at_least(1)
#: a number of samples: at least 10 rows, so that every class has a few
sample_size = int_at_least(10)


def positive_float(text: str) -> float:
    """An ``argparse`` type: a float > 0 (a tolerance)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:  # also NaN
        raise argparse.ArgumentTypeError(f"{text} is not > 0 (give a number > 0)")
    return value


def run(main: Callable[[], int | None], *expected: type[BaseException]) -> int:
    """A script's exit status from ``main()``: a dataset found nowhere (the data
    mirror not set, ``datasets.DatasetError``) or one of ``expected`` ends it with
    its message and status 1 instead of a traceback around that message."""
    from datasets.exceptions import DatasetError

    try:
        return main() or 0
    except (DatasetError, *expected) as exc:
        sys.stderr.write(f"{Path(sys.argv[0]).name}: error: {exc}\n")
        return 1
