"""The dependency tracker: a red node is ready once its red dependencies are made or reused,
in the order they became ready; a failure skips everything downstream of it, and nothing
else; what never ended is skipped when the run stops."""

from __future__ import annotations

from awlineage.processing._outcomes import TargetOutcome
from awlineage.processing._plan import PlanNode, State
from awlineage.processing._ready import DependencyTracker

MADE, REUSED = TargetOutcome.MADE, TargetOutcome.REUSED
FAILED, SKIPPED = TargetOutcome.FAILED, TargetOutcome.SKIPPED


def node(name: str, *needs: PlanNode, state: State = State.RED) -> PlanNode:
    """A plan node named `name` (its object is the name: the tracker never reads it)."""
    return PlanNode(cls=str, obj=name, existing=None, state=state,  # type: ignore[arg-type]
                    dependencies={"needs": list(needs)}, result_id=0)


def taken(tracker: DependencyTracker) -> list[str]:
    names = []
    while tracker.ready:
        names.append(tracker.take().obj)
    return names


def diamond() -> tuple[list[PlanNode], DependencyTracker]:
    """a and b need nothing; c needs a; d needs a and b; e needs d."""
    a, b = node("a"), node("b")
    c, d = node("c", a), node("d", a, b)
    e = node("e", d)
    nodes = [a, b, c, d, e]
    return nodes, DependencyTracker(nodes)


def test_nodes_without_red_dependencies_are_ready_at_once() -> None:
    stored = node("stored", state=State.GREEN)
    a, b = node("a", stored), node("b", stored)
    tracker = DependencyTracker([a, b])
    assert taken(tracker) == ["a", "b"] and not tracker.more_coming


def test_a_node_is_ready_once_its_last_dependency_is_made_or_reused() -> None:
    (a, b, _, d, _), tracker = diamond()
    assert taken(tracker) == ["a", "b"] and tracker.blocked == 3
    tracker.finish(a, MADE)
    assert taken(tracker) == ["c"]  # d still waits for b
    tracker.finish(b, REUSED)
    assert taken(tracker) == ["d"] and tracker.more_coming
    tracker.finish(d, MADE)
    assert taken(tracker) == ["e"] and not tracker.more_coming


def test_a_failure_skips_what_depends_on_it_however_far_and_nothing_else() -> None:
    (a, b, _, d, e), tracker = diamond()
    taken(tracker)
    tracker.finish(b, FAILED)
    assert tracker.status == {id(b): FAILED, id(d): SKIPPED, id(e): SKIPPED}
    assert tracker.more_coming  # c still waits for a
    tracker.finish(a, MADE)
    assert taken(tracker) == ["c"] and not tracker.more_coming


def test_nodes_put_back_come_out_first_or_last() -> None:
    (a, b, *_), tracker = diamond()
    first = tracker.take()
    tracker.put_back([first], first=False)
    assert taken(tracker) == ["b", "a"]
    tracker.put_back([a, b])
    assert taken(tracker) == ["a", "b"]


def test_what_never_ended_is_skipped_when_the_run_stops() -> None:
    (a, b, c, d, e), tracker = diamond()
    tracker.finish(a, MADE)
    tracker.skip_the_rest()
    assert [tracker.status[id(n)] for n in (a, b, c, d, e)] == [MADE] + [SKIPPED] * 4
