"""`DependencyTracker`: which red nodes of a plan are ready to make (their own red
dependencies are made or reused), and what a failure skips. It knows nothing of executors,
batches or claims: the scheduler tells it what ended, and takes the ready nodes from it."""

from __future__ import annotations

import collections
from collections.abc import Iterable

from awlineage.processing._outcomes import TargetOutcome
from awlineage.processing._plan import PlanNode, State
from awlineage.processing._status_counts import StatusCounts

FAILED = TargetOutcome.FAILED
SKIPPED = TargetOutcome.SKIPPED


class DependencyTracker:
    """The red nodes of a plan, in dependency order.

    A node is ready once every red node it depends on has ended made or reused; a failed
    node skips everything that depends on it, directly or not. Ready nodes come out in the
    order they became ready.

    Parameters
    ----------
    red
        The red nodes of a plan (`Plan.red`); a dependency that is not red is made already.
    """

    def __init__(self, red: Iterable[PlanNode]) -> None:
        self.nodes = list(red)
        self.status = StatusCounts()
        """id(node) -> how it ended, for the nodes that have (counted per status as it is
        written, so that the progress bar reads counts in constant time)."""
        self._dependents: dict[int, list[PlanNode]] = {}
        self._waiting_on: dict[int, int] = {}
        for node in self.nodes:
            deps = [d for d in node.dependency_nodes() if d.state is State.RED]
            self._waiting_on[id(node)] = len(deps)
            for dep in deps:
                self._dependents.setdefault(id(dep), []).append(node)
        self._ready = collections.deque(n for n in self.nodes if self._waiting_on[id(n)] == 0)
        self.blocked = len(self.nodes) - len(self._ready)
        """How many nodes wait for a dependency and may become ready later."""

    @property
    def ready(self) -> int:
        """How many nodes are ready now."""
        return len(self._ready)

    @property
    def more_coming(self) -> bool:
        """Whether a node not ready now may become ready later."""
        return self.blocked > 0

    def take(self) -> PlanNode:
        """The node that has been ready longest (it is no longer counted as ready)."""
        return self._ready.popleft()

    def put_back(self, nodes: list[PlanNode], first: bool = True) -> None:
        """Count `nodes` (taken, not started) as ready again: before the others (`first`),
        or after them."""
        if first:
            self._ready.extendleft(reversed(nodes))
        else:
            self._ready.extend(nodes)

    def finish(self, node: PlanNode, status: TargetOutcome | str) -> None:
        """Record how `node` ended: made or reused readies the dependents whose last
        dependency it was; failed skips every node that depends on it."""
        self.status[id(node)] = TargetOutcome(status)
        if status == FAILED:
            self._skip_dependents(node)
            return
        for dependent in self._dependents.get(id(node), ()):
            self._waiting_on[id(dependent)] -= 1
            if self._waiting_on[id(dependent)] == 0 and id(dependent) not in self.status:
                self._ready.append(dependent)
                self.blocked -= 1

    def skip_the_rest(self) -> None:
        """Record every node that has not ended as skipped (the run stopped)."""
        for node in self.nodes:
            self.status.setdefault(id(node), SKIPPED)

    def _skip_dependents(self, node: PlanNode) -> None:
        stack = list(self._dependents.get(id(node), ()))
        while stack:
            dependent = stack.pop()
            if id(dependent) not in self.status:
                self.status[id(dependent)] = SKIPPED
                self.blocked -= 1
                stack.extend(self._dependents.get(id(dependent), ()))
