"""Running a plan: every red node is submitted as soon as its own dependencies are made (no
waiting for a whole level), in batches (one Spark job each) that grow while the executor is
kept busy; a failure skips what depends on it, and, with keep-going, independent branches go
on (without, what runs is cancelled, as when the run is interrupted, and the run ends once it
has ended). While the executor is not ready yet (Spark starting), a local executor makes ready
targets one at a time in this process, so that nobody waits for Spark to start.

The scheduler only sequences the pieces that decide: `DependencyTracker` (which nodes are
ready, what a failure skips), `Placement` (where the next targets run, how many per batch),
the `Executor` (runs them) and a `ClaimService` (whether another processor makes them)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from awlineage.persistence import DBObject, Kind
from awlineage.processing._executors import Executor
from awlineage.processing._outcomes import TargetOutcome
from awlineage.processing._placement import Batches, Placement
from awlineage.processing._plan import Plan, PlanNode
from awlineage.processing._ready import DependencyTracker
from awlineage.processing._status_counts import StatusCounts
from awlineage.processing._task import (
    CANCELLED,
    FAILED,
    MADE,
    REUSED,
    Settings,
    TaskResult,
    spec_for,
)

SKIPPED = TargetOutcome.SKIPPED
_Batches = Batches  # the name it had when it lived here
CLAIMED_ELSEWHERE_PAUSE = 0.2
"""Seconds to wait before looking again when every ready node is claimed by another
processor and nothing runs here."""
CLAIMED_ELSEWHERE_POLL = 0.5
"""Seconds to wait for results at most while some ready nodes are claimed elsewhere."""


@dataclass
class Outcome:
    """What happened to each red node of a plan."""

    status: StatusCounts = field(default_factory=StatusCounts)
    """id(node) -> made, reused, failed or skipped (with counts kept as it is written)."""
    results: dict[int, TaskResult] = field(default_factory=dict)
    """id(node) -> the task's result (made, reused or failed nodes)."""
    local: int = 0
    """How many of the made targets the local executor made while the executor was not
    ready."""

    def count(self, status: TargetOutcome | str) -> int:
        """How many nodes ended with `status` (in constant time: the progress bar asks on
        every change)."""
        return self.status.count(status)


class ClaimService(Protocol):
    """Keeps two processors from making one target (`awlineage.processing._claims.
    TargetClaims` in a database)."""

    def claim(self, node: PlanNode) -> bool | int:
        """True when this processor may make `node`; False while another one makes it;
        or the object_id another processor made it with."""

    def release(self, node: PlanNode) -> None:
        """`node` ended: give up its claim."""


class NoClaims:
    """Every node is this processor's to make (nothing else makes targets)."""

    def claim(self, node: PlanNode) -> bool | int:
        """Always True."""
        return True

    def release(self, node: PlanNode) -> None:
        """Nothing to release."""


class Scheduler:
    """Submits the red nodes of a plan to an executor in dependency order.

    Parameters
    ----------
    executor
        Makes the targets, in batches.
    settings
        Where the tasks find the database and data server.
    keep_going
        After a failure, go on with what does not depend on it (else cancel and stop).
    claims
        Asked before a node is submitted, told when it ended; `NoClaims` when None.
    on_event
        Called after every change, with the outcome so far and the running count.
    local
        Makes ready targets in this process, one at a time, while `executor` says it is
        not ``ready`` (Spark starting and warming its workers).
    """

    def __init__(self, executor: Executor, settings: Settings, keep_going: bool = False,
                 claims: ClaimService | None = None,
                 on_event: Callable[[Outcome, int], None] | None = None,
                 local: Executor | None = None) -> None:
        self.executor = executor
        self.local = local
        self.settings = settings
        self.keep_going = keep_going
        self.claims: ClaimService = claims or NoClaims()
        self.on_event = on_event or (lambda outcome, running: None)

    def run(self, plan: Plan) -> Outcome:
        """Make every red node of `plan` that can be made; return what happened."""
        return _Run(self, plan).go()


class _Run:
    """One run of a plan: the state the scheduler's steps share."""

    def __init__(self, scheduler: Scheduler, plan: Plan) -> None:
        self.scheduler = scheduler
        self.tracker = DependencyTracker(plan.red())
        self.outcome = Outcome(status=self.tracker.status)
        self.placement = Placement(scheduler.executor, scheduler.local)
        self.owner = {id(n.obj): n for n in plan.nodes}
        self.done: queue.SimpleQueue[tuple[PlanNode, concurrent.futures.Future]] = \
            queue.SimpleQueue()
        self.running = 0
        self.submitted: dict[concurrent.futures.Future, PlanNode] = {}
        """The futures of the nodes submitted whose result has not been taken yet."""
        self.stopping = False

    def go(self) -> Outcome:
        """Run until nothing is ready or running (or the run stopped after a failure).

        Interrupted (Ctrl-C, an error raised here), it cancels what runs and waits for it to
        end before it raises: no task of the run goes on writing to the database after."""
        try:
            return self._go()
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """Submit nothing more, cancel what runs and wait for it to end (a second Ctrl-C
        stops the wait)."""
        self.stopping = True
        cancel = getattr(self.scheduler.executor, "cancel", None)
        if cancel is not None and self.submitted:
            with contextlib.suppress(Exception):  # the error being raised says more
                cancel()
        concurrent.futures.wait(list(self.submitted))
        for node in self.submitted.values():
            self.scheduler.claims.release(node)
        self.submitted.clear()

    def _go(self) -> Outcome:
        self.scheduler.on_event(self.outcome, 0)
        while not self._over():
            if self._local_turn():
                self._make_locally()
                if not self.placement.runs_locally():
                    self.placement.hand_over()
                self.scheduler.on_event(self.outcome, self._making())
                continue
            held = self._submit_ready()
            self.scheduler.on_event(self.outcome, self._making())
            if not self.running:
                if not self._over():  # every ready node is claimed elsewhere: look again soon
                    time.sleep(CLAIMED_ELSEWHERE_PAUSE)
                continue
            self._collect(CLAIMED_ELSEWHERE_POLL if held else None)
        self.tracker.skip_the_rest()
        self.scheduler.on_event(self.outcome, 0)
        return self.outcome

    def _making(self, submitting: int = 0) -> int:
        """How many targets are being made now, the progress bar's "running": those
        submitted (and `submitting`) whose result has not come back, at most the executor's
        cores (the rest wait in its queue). The serial executor hands back a batch made and
        committed, which the bar counted as running ("10 running" with "one at a time")."""
        in_flight = self.running + submitting - self.done.qsize()
        return min(in_flight, self.placement.batches.cores) if in_flight > 0 else 0

    def _local_turn(self) -> bool:
        return bool(self.tracker.ready) and not self.stopping and self.placement.runs_locally()

    def _over(self) -> bool:
        if self.stopping:
            return not self.running
        return not (self.tracker.ready or self.running)

    # -- the executor, in batches ---------------------------------------------------------
    def _submit_ready(self) -> bool:
        """Submit batches while the placement wants them; True when ready nodes were held
        back because another processor makes them (they are ready again)."""
        held: list[PlanNode] = []
        while not self.stopping:
            size = self.placement.batch_size(self.tracker.ready, self.running,
                                             self.tracker.more_coming)
            if not size:
                break
            batch = self._claim_batch(size, held)
            if batch:
                self._submit(batch)
        self.tracker.put_back(held)
        return bool(held)

    def _claim_batch(self, size: int, held: list[PlanNode]) -> list[PlanNode]:
        """Up to `size` ready nodes this processor claimed; those another one holds go to
        `held`, those it made are reused."""
        batch: list[PlanNode] = []
        while self.tracker.ready and len(batch) < size:
            node = self.tracker.take()
            claimed = self.scheduler.claims.claim(node)
            if claimed is False:
                held.append(node)
            elif claimed is True:
                batch.append(node)
            else:
                self._reuse(node, claimed)
        return batch

    def _submit(self, batch: list[PlanNode]) -> None:
        specs = [spec_for(n.obj, _link_ids(n, self.owner)) for n in batch]
        # the serial executor makes the batch before it returns: say so while it does
        self.scheduler.on_event(self.outcome, self._making(len(batch)))
        futures = self.scheduler.executor.submit_batch(specs, self.scheduler.settings)
        for node, future in zip(batch, futures, strict=True):
            self.submitted[future] = node
            future.add_done_callback(functools.partial(_report, self.done, node))
        self.running += len(batch)
        self.placement.batches.submitted()

    def _collect(self, timeout: float | None) -> None:
        """Wait (up to `timeout` seconds) for a result, then take every one that ended."""
        try:
            finished = [self.done.get(timeout=timeout)]
        except queue.Empty:
            return
        while not self.done.empty():  # everything that ended meanwhile, in one go
            finished.append(self.done.get())
        self.placement.batches.finished()
        for node, future in finished:
            self.submitted.pop(future, None)
            self.running -= 1
            result: TaskResult = future.result()
            self.scheduler.claims.release(node)
            if result.status != CANCELLED:  # else skipped, as all not started after a failure
                self._ended(node, result)
        self.scheduler.on_event(self.outcome, self._making())

    def _ended(self, node: PlanNode, result: TaskResult) -> None:
        if result.status in (MADE, REUSED):
            node.result_id = result.object_id
        elif not self.scheduler.keep_going and not self.stopping:
            self._stop()
        self.outcome.results[id(node)] = result
        self.tracker.finish(node, result.status)

    def _stop(self) -> None:
        """A target failed without keep-going: submit nothing more, cancel what runs."""
        self.stopping = True
        cancel = getattr(self.scheduler.executor, "cancel", None)
        if cancel is not None and self.running:
            cancel()

    # -- the local executor, while the executor starts ------------------------------------
    def _make_locally(self) -> None:
        """Make the first ready node with the local executor."""
        local = self.placement.local
        assert local is not None
        node = self.tracker.take()
        claimed = self.scheduler.claims.claim(node)
        if claimed is False:  # another processor makes it: look again soon
            self.tracker.put_back([node], first=False)
            time.sleep(CLAIMED_ELSEWHERE_PAUSE)
            return
        if claimed is not True:
            self._reuse(node, claimed)
            return
        spec = spec_for(node.obj, _link_ids(node, self.owner))
        try:
            result: TaskResult = local.submit_batch([spec], self.scheduler.settings)[0].result()
        finally:
            self.scheduler.claims.release(node)
        self.outcome.local += result.status == MADE
        if result.status in (MADE, REUSED):
            node.result_id = result.object_id
        elif result.status == FAILED and not self.scheduler.keep_going:
            self.stopping = True
        self.outcome.results[id(node)] = result
        self.tracker.finish(node, result.status)

    def _reuse(self, node: PlanNode, object_id: int) -> None:
        """Another processor made `node` since the plan was made: reuse its object."""
        node.result_id = int(object_id)
        self.tracker.finish(node, REUSED)


def _link_ids(node: PlanNode, owner: dict[int, PlanNode]) -> dict[str, int | list[int] | None]:
    """The ids the target of `node` links: a red dependency's id is the one it was made
    with (or that another processor made)."""
    def resolve(obj: DBObject) -> int:
        made_by = owner.get(id(obj))
        if made_by is not None and made_by.result_id is not None:
            return made_by.result_id
        return obj.object_id

    ids: dict[str, int | list[int] | None] = {}
    for name, prop in type(node.obj)._properties.items():
        if prop.builtin or name == "process_run":
            continue
        if prop.kind.is_link:
            value = node.obj.__dict__.get(name)
            ids[name] = None if value is None else resolve(value)
        elif prop.kind is Kind.LINK_LIST:
            ids[name] = [resolve(v) for v in node.obj.__dict__.get(name, [])]
    return ids


def _report(done: queue.SimpleQueue, node: PlanNode, future: concurrent.futures.Future) -> None:
    done.put((node, future))
