"""The clock that times each hop of a region query for its statistics: wall seconds, unless
a calibration asks for CPU seconds (`hop_clock`), which a shared machine disturbs less."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_clock: Callable[[], float] = time.perf_counter


def hop_time() -> float:
    """The hop clock's reading, in seconds."""
    return _clock()


@contextmanager
def hop_clock(clock: Callable[[], float]) -> Iterator[None]:
    """Time the hops of region queries with `clock` inside the block (in this process).

    The recorded hop seconds (`RegionQueryStat.seconds`) calibrate the query-time cost model;
    ``benchmarks/cost_calibration.py`` records them in CPU seconds this way.

    Parameters
    ----------
    clock : callable
        Returns seconds as a float, such as `time.process_time`.

    Returns
    -------
    contextlib.AbstractContextManager
        A context manager restoring the previous clock at its end.

    Examples
    --------
    >>> import time
    >>> with hop_clock(time.process_time):
    ...     pass
    """
    global _clock
    previous, _clock = _clock, clock
    try:
        yield
    finally:
        _clock = previous
