"""Where and when ready targets run: `Placement` sends them to a local executor, one at a
time, while the executor is not ready (Spark starting), and to the executor otherwise, in
batches whose sizes `Batches` decides. A change of when to use which executor, or of how
batches grow, is made here and nowhere else."""

from __future__ import annotations

import math

from awlineage.processing._executors import Executor
from awlineage.processing._memory import release_freed_memory


class Batches:
    """When to submit ready nodes and how many at once.

    A job costs the driver tens of milliseconds, so ready nodes are held back while the
    executor has enough to do (at least two targets per core submitted and not finished)
    and too few are ready to fill a batch. The batch size starts at one per core, so the
    cores start at once, and doubles with each batch, up to the executor's capacity; but
    until the first results are back only two targets per core go out, so that the executor
    knows how long targets take before it packs them into partitions. Once no node can
    become ready any more (every one left is ready), what is ready goes at once, in
    batches that halve (half of what is ready, then half of the rest, down to one per
    core): the executor packs each into partitions of that batch's work, so the last
    partitions are short and the cores end together, instead of one core working alone
    on the last long partition while the others idle (up to `awlineage.processing._packing.
    PARTITION_SECONDS`; on 200 targets of 0.5 s the last job had four partitions of 7.75 s).

    Parameters
    ----------
    executor
        Asked its ``cores`` once (for Spark, this waits until it is up) and its ``capacity``
        whenever results come back (the serial executor's follows what targets took).
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.capacity = max(1, executor.capacity)
        self.cores = max(1, executor.cores)
        self.next_size = self.cores
        self.heard = False

    def wanted(self, ready: int, running: int, more_coming: bool = True) -> bool:
        """Whether to submit a batch now, with `ready` nodes ready, `running` in flight, and
        (`more_coming`) nodes that may become ready later: if none may, waiting for a bigger
        batch is pointless."""
        if running >= self.capacity:
            return False
        if running < 2 * self.cores:
            return True
        return self.heard and (ready >= self.size(running) or not more_coming)

    def size(self, running: int, ready: int | None = None, more_coming: bool = True) -> int:
        """The most nodes the next batch takes, with `running` in flight; with `ready`
        given and nothing more coming, at most half of them (at least one per core)."""
        size = max(1, min(self.next_size, self.capacity - running))
        if ready is not None and not more_coming and self.cores > 1:
            size = min(size, max(self.cores, math.ceil(ready / 2)))
        return size

    def submitted(self) -> None:
        """A batch went out: the next may be twice as big."""
        self.next_size = min(2 * self.next_size, self.capacity)

    def finished(self) -> None:
        """Results came back: the executor's capacity may have changed with them."""
        self.heard = True
        self.capacity = max(1, self.executor.capacity)


class Placement:
    """Decides where the next ready targets run, and how many go in the next batch.

    Parameters
    ----------
    executor
        Where targets run once it is ``ready``; an executor without a ``ready`` attribute
        (written before it was part of `Executor`) counts as ready.
    local
        Makes targets in this process, one at a time, while `executor` is not ready; None
        to always wait for `executor`.
    """

    def __init__(self, executor: Executor, local: Executor | None = None) -> None:
        self.executor = executor
        self.local = local
        self._batches: Batches | None = None

    def runs_locally(self) -> bool:
        """Whether the next ready target is made by the local executor (the executor is not
        ready yet)."""
        return self.local is not None and not getattr(self.executor, "ready", True)

    def hand_over(self) -> None:
        """The local executor made its last target (the executor is ready): give back what
        its targets freed before the executor's workers reach their peak. The driver of the
        medium demo night's Spark make held 97 MB freed by the target it was making when
        Spark's workers took over, for the rest of the make (measured with ``mallinfo2``)."""
        release_freed_memory(collect=True)

    @property
    def batches(self) -> Batches:
        """The batch policy; made on first use, which asks the executor its cores (and so
        waits for Spark to be up)."""
        if self._batches is None:
            self._batches = Batches(self.executor)
        return self._batches

    def batch_size(self, ready: int, running: int, more_coming: bool) -> int:
        """How many of the `ready` nodes to submit to the executor now, with `running` in
        flight and (`more_coming`) nodes that may become ready later: 0 to hold them back."""
        if not ready or not self.batches.wanted(ready, running, more_coming):
            return 0
        return self.batches.size(running, ready, more_coming)
