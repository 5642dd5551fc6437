"""How a batch of ready targets is cut into Spark partitions.

Spark spends tens of milliseconds of core time on every task it runs (the driver's scheduling,
the JVM's hand-over to a Python worker, the worker's set-up), whatever the task does: measured
on a 2-core machine, 50-55 ms of core time for a task that does nothing. A target that takes
half a second alone in its task pays 10% for it. So targets whose duration is known (from
targets of the same class made earlier by the same executor) are packed several to a partition,
up to about `PARTITION_SECONDS` of work; targets of a class not seen yet go one per partition,
since one of them may be long, and so that the first results come back (and teach the
durations) as soon as possible."""

from __future__ import annotations

import collections
import math
import statistics
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

PARTITION_SECONDS = 8.0
"""The work packed into one partition of known targets. Spark's cost per task is then well
under 1% of it: on 200 targets of 0.5 s on 2 cores, the overhead per target was 26 ms with
partitions of 4 s and 19 ms with 8 s (of which about 10 ms is the make and commit themselves,
a worker preempted now and then by the JVM). The price: the last partition to end keeps a
core alone for at most this long, and a target's dependants wait for the end of its
partition."""
MAX_PARTITIONS_PER_CORE = 64
"""The most partitions a core gets from one batch (a huge batch of unknown targets)."""

Item = TypeVar("Item")


def pack(items: Sequence[Item], expected: Callable[[Item], float | None], cores: int
         ) -> list[list[Item]]:
    """Cut `items` into partitions, keeping their order: an item whose `expected` duration
    is None alone; the others in runs of about `PARTITION_SECONDS` of expected work, but in
    at least as many partitions as there are `cores` (when there are that many items), so a
    batch is spread over every core, and in a multiple of `cores` beyond that."""
    limit = max(1, cores) * MAX_PARTITIONS_PER_CORE
    known = [(i, expected(item)) for i, item in enumerate(items)]
    timed = [(i, max(seconds, 0.0)) for i, seconds in known if seconds is not None]
    total = sum(seconds for _, seconds in timed)
    cores = max(1, cores)
    wanted = max(math.ceil(total / PARTITION_SECONDS), min(len(timed), cores))
    if wanted > cores:  # a whole number of rounds over the cores
        wanted = math.ceil(wanted / cores) * cores
    wanted = min(max(wanted, 1), limit, max(1, len(timed)))
    share = total / wanted if total > 0 else 0.0
    chunk_of: dict[int, int] = {}
    done, previous = 0.0, -1
    for position, (i, seconds) in enumerate(timed):
        # the chunk in whose share of the work this item starts (by count if nothing takes
        # any time), never skipping a chunk, and leaving an item for every chunk after it
        chunk = int(done / share) if share > 0 else position * wanted // len(timed)
        chunk = min(chunk, previous + 1, wanted - 1)
        chunk = max(chunk, previous, wanted - (len(timed) - position))
        chunk_of[i] = previous = chunk
        done += seconds
    partitions: list[list[Item]] = []
    current: dict[int, list[Item]] = {}
    for i, item in enumerate(items):
        at = chunk_of.get(i)
        if at is None:
            partitions.append([item])
        elif at in current:
            current[at].append(item)
        else:
            current[at] = [item]
            partitions.append(current[at])
    return _at_most(partitions, limit)


def _at_most(partitions: list[list[Item]], limit: int) -> list[list[Item]]:
    """`partitions` merged neighbour with neighbour until there are at most `limit`."""
    while len(partitions) > limit:
        merged = [a + b for a, b in zip(partitions[::2], partitions[1::2], strict=False)]
        if len(partitions) % 2:
            merged.append(partitions[-1])
        partitions = merged
    return partitions


class Durations:
    """How long a made target of each class takes: the median of the last `SAMPLES` made
    (a worker's first target, which may import modules, does not skew it), thread-safe."""

    SAMPLES = 64

    def __init__(self) -> None:
        self._samples: dict[str, collections.deque[float]] = {}
        self._counts: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def record(self, class_name: str, seconds: float) -> None:
        """One target of `class_name` was made in `seconds`."""
        with self._lock:
            samples = self._samples.setdefault(class_name,
                                               collections.deque(maxlen=self.SAMPLES))
            samples.append(seconds)
            self._counts[class_name] += 1

    def count(self, class_name: str) -> int:
        """How many made targets of `class_name` have been recorded."""
        with self._lock:
            return self._counts[class_name]

    def typical(self, class_name: str) -> float | None:
        """The median duration of `class_name`'s recent targets, None while none has been
        made."""
        with self._lock:
            samples = list(self._samples.get(class_name, ()))
        return statistics.median(samples) if samples else None
