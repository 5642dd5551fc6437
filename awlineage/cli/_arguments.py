"""Argparse types for the numbers ``awl`` takes (counts, depths, pixels, seconds, weights):
each refuses a value out of its range in one usage line naming the option and the value,
before anything runs, instead of failing later in SQL, numpy or a socket."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

MAX_WHOLE = 2**31 - 1
"""The largest count, depth or pixel taken: more than any of them can usefully be, and what a
32-bit SQL integer holds."""
MAX_ROWS = 2**63 - 1
"""The most rows ``awl select --limit`` takes: what `Query.limit` takes, since LIMIT is a 64-bit
integer on both databases (`MAX_WHOLE` would cap it at 2**31 - 1 for no reason)."""


MAX_LINKS = 100_000
"""The deepest ``--depth`` taken: far more links than any lineage has (a walk that stops early
still steps through every level it was allowed, so 2**31 would take minutes)."""


def link_count(text: str) -> int:
    """An argparse type: a number of links to follow, 0 to `MAX_LINKS`."""
    return whole_number("a number of links", high=MAX_LINKS)(text)


def whole_number(what: str, low: int = 0, high: int = MAX_WHOLE) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, called `what` in its error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (a whole number from "
                                             f"{low} to {high})")
        return value

    parse.__name__ = what
    return parse


def real_number(what: str, low: float = 0.0, *, above: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number at least `low` (more than `low` with `above`).

    Parameters
    ----------
    what : str
        What the number is, as the error names it (``"a threshold in sigma"``).
    low : float
        The smallest value allowed.
    above : bool
        Whether `low` itself is refused too.

    Returns
    -------
    callable
        A function from the argument's text to its value, to give as ``type=`` to
        ``add_argument``; it raises ``argparse.ArgumentTypeError`` naming `what`.

    Examples
    --------
    >>> from awlineage.cli import real_number
    >>> real_number("a gain", above=True)("2.5")
    2.5
    """

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low or (above and value == low):
            bound = f"more than {low:g}" if above else f"{low:g} or more"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (a finite number, "
                                             f"{bound})")
        return value

    parse.__name__ = what
    return parse
