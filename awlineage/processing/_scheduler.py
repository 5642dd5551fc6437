"""Running a plan: every red node is submitted as soon as its own dependencies are made (no
waiting for a whole level), in batches (one Spark job each) that grow while the executor is
kept busy; a failure skips what depends on it, and, with keep-going, independent branches go
on. While the executor is not ready yet (Spark starting), a local executor makes ready
targets one at a time in this process, so that nobody waits for Spark to start."""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from awlineage.persistence import DBObject, Kind
from awlineage.processing._executors import Executor
from awlineage.processing._outcomes import TargetOutcome
from awlineage.processing._plan import Plan, PlanNode, State
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


@dataclass
class Outcome:
    """What happened to each red node of a plan."""

    status: dict[int, TargetOutcome] = field(default_factory=dict)
    """id(node) -> made, reused, failed or skipped."""
    results: dict[int, TaskResult] = field(default_factory=dict)
    """id(node) -> the task's result (made, reused or failed nodes)."""
    local: int = 0
    """How many of the made targets the local executor made while the executor was not
    ready."""

    def count(self, status: TargetOutcome | str) -> int:
        """How many nodes ended with `status`."""
        return sum(1 for s in self.status.values() if s == status)


class Scheduler:
    """Submits the red nodes of a plan to an executor in dependency order.

    Parameters
    ----------
    claim
        Called before a node is submitted; returns False while another processor makes the
        same target (the node waits), or the object_id that processor made (reused).
    release
        Called once a node is finished.
    on_event
        Called after every change, with the outcome so far and the running count.
    local
        Makes ready targets in this process, one at a time, while `executor` says it is
        not ``ready`` (Spark starting and warming its workers).
    """

    def __init__(self, executor: Executor, settings: Settings, keep_going: bool = False,
                 claim: Callable[[PlanNode], bool | int] | None = None,
                 release: Callable[[PlanNode], None] | None = None,
                 on_event: Callable[[Outcome, int], None] | None = None,
                 local: Executor | None = None) -> None:
        self.executor = executor
        self.local = local
        self.settings = settings
        self.keep_going = keep_going
        self.claim = claim or (lambda node: True)
        self.release = release or (lambda node: None)
        self.on_event = on_event or (lambda outcome, running: None)

    def run(self, plan: Plan) -> Outcome:
        """Make every red node of `plan` that can be made; return what happened."""
        outcome = Outcome()
        red = plan.red()
        owner = {id(n.obj): n for n in plan.nodes}
        dependents: dict[int, list[PlanNode]] = {}
        waiting_on: dict[int, int] = {}
        for node in red:
            deps = [d for d in node.dependency_nodes() if d.state is State.RED]
            waiting_on[id(node)] = len(deps)
            for dep in deps:
                dependents.setdefault(id(dep), []).append(node)
        ready = collections.deque(n for n in red if waiting_on[id(n)] == 0)
        self._blocked = len(red) - len(ready)  # nodes that may become ready later
        done: queue.SimpleQueue[tuple[PlanNode, concurrent.futures.Future]] = \
            queue.SimpleQueue()
        batches: _Batches | None = None  # asks the executor its cores: once it is ready
        running = 0
        stopping = False
        self.on_event(outcome, 0)
        while ready or running:
            if stopping and not running:
                break
            if ready and not stopping and self._not_ready():
                stopping = self._make_locally(ready, outcome, dependents, waiting_on, owner)
                self.on_event(outcome, running)
                continue
            if batches is None:
                batches = _Batches(self.executor)
            held: list[PlanNode] = []
            while ready and not stopping and batches.wanted(len(ready), running,
                                                            more_coming=self._blocked > 0):
                batch: list[PlanNode] = []
                while ready and len(batch) < batches.size(running):
                    node = ready.popleft()
                    claimed = self.claim(node)
                    if claimed is False:
                        held.append(node)
                    elif claimed is not True:  # another processor made it meanwhile
                        node.result_id = int(claimed)
                        self._finish(node, REUSED, None, outcome, dependents, waiting_on,
                                     ready)
                    else:
                        batch.append(node)
                if not batch:
                    continue
                specs = [spec_for(n.obj, _link_ids(n, owner)) for n in batch]
                futures = self.executor.submit_batch(specs, self.settings)
                for node, future in zip(batch, futures, strict=True):
                    future.add_done_callback(functools.partial(_report, done, node))
                running += len(batch)
                batches.submitted()
            ready.extendleft(reversed(held))
            self.on_event(outcome, running)
            if not running:
                if stopping or not ready:
                    break
                time.sleep(0.2)  # everything ready is claimed elsewhere: look again soon
                continue
            try:
                finished = [done.get(timeout=0.5 if held else None)]
            except queue.Empty:
                continue
            while not done.empty():  # everything that ended meanwhile, in one go
                finished.append(done.get())
            batches.finished()
            for node, future in finished:
                running -= 1
                result: TaskResult = future.result()
                self.release(node)
                if result.status == CANCELLED:
                    continue  # skipped, as everything else not started after a failure
                if result.status in (MADE, REUSED):
                    node.result_id = result.object_id
                elif not self.keep_going and not stopping:
                    stopping = True
                    cancel = getattr(self.executor, "cancel", None)
                    if cancel is not None and running:
                        cancel()
                self._finish(node, result.status, result, outcome, dependents, waiting_on,
                             ready)
            self.on_event(outcome, running)
        for node in red:
            outcome.status.setdefault(id(node), SKIPPED)
        self.on_event(outcome, 0)
        return outcome

    def _not_ready(self) -> bool:
        return self.local is not None and not getattr(self.executor, "ready", True)

    def _make_locally(self, ready: collections.deque[PlanNode], outcome: Outcome,
                      dependents: dict[int, list[PlanNode]], waiting_on: dict[int, int],
                      owner: dict[int, PlanNode]) -> bool:
        """Make the first ready node with the local executor; True when that failed and
        the run should stop (without keep-going)."""
        assert self.local is not None
        node = ready.popleft()
        claimed = self.claim(node)
        if claimed is False:  # another processor makes it: look again soon
            ready.append(node)
            time.sleep(0.2)
            return False
        if claimed is not True:  # another processor made it meanwhile
            node.result_id = int(claimed)
            self._finish(node, REUSED, None, outcome, dependents, waiting_on, ready)
            return False
        spec = spec_for(node.obj, _link_ids(node, owner))
        try:
            result: TaskResult = self.local.submit_batch([spec], self.settings)[0].result()
        finally:
            self.release(node)
        outcome.local += result.status == MADE
        if result.status in (MADE, REUSED):
            node.result_id = result.object_id
        self._finish(node, result.status, result, outcome, dependents, waiting_on, ready)
        return result.status == FAILED and not self.keep_going

    def _finish(self, node: PlanNode, status: TargetOutcome, result: TaskResult | None,
                outcome: Outcome,
                dependents: dict[int, list[PlanNode]], waiting_on: dict[int, int],
                ready: collections.deque[PlanNode]) -> None:
        outcome.status[id(node)] = status
        if result is not None:
            outcome.results[id(node)] = result
        if status == FAILED:
            self._skip(node, outcome, dependents)
            return
        for dependent in dependents.get(id(node), ()):
            waiting_on[id(dependent)] -= 1
            if waiting_on[id(dependent)] == 0 and id(dependent) not in outcome.status:
                ready.append(dependent)
                self._blocked -= 1

    def _skip(self, node: PlanNode, outcome: Outcome,
              dependents: dict[int, list[PlanNode]]) -> None:
        stack = list(dependents.get(id(node), ()))
        while stack:
            dependent = stack.pop()
            if id(dependent) not in outcome.status:
                outcome.status[id(dependent)] = SKIPPED
                self._blocked -= 1
                stack.extend(dependents.get(id(dependent), ()))


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


class _Batches:
    """When to submit ready nodes and how many at once.

    A job costs the driver tens of milliseconds, so ready nodes are held back while the
    executor has enough to do (at least two targets per core submitted and not finished)
    and too few are ready to fill a batch. The batch size starts at one per core, so the
    cores start at once, and doubles with each batch, up to the executor's capacity; but
    until the first results are back only two targets per core go out, so that the executor
    knows how long targets take before it packs them into partitions. Once no node can
    become ready any more (every one left is ready), what is ready goes at once."""

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

    def size(self, running: int) -> int:
        """The most nodes the next batch takes."""
        return max(1, min(self.next_size, self.capacity - running))

    def submitted(self) -> None:
        """A batch went out: the next may be twice as big."""
        self.next_size = min(2 * self.next_size, self.capacity)

    def finished(self) -> None:
        """Results came back (the serial executor's capacity follows what they took)."""
        self.heard = True
        self.capacity = max(1, self.executor.capacity)
