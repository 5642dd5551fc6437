"""The framework's own cost per target, counted in SQL statements (counts do not depend on
the machine's load, as times would): a make of many trivial targets with the serial executor
commits them in batches, so a target costs its claim and little else."""

from __future__ import annotations

from awlineage import (
    DBObject,
    OnePer,
    Process,
    ProcessRun,
    TargetProcessor,
    commit,
    persistent,
    select,
)
from awlineage.database import recorded_statements
from awlineage.processing._scheduler import _link_ids
from awlineage.processing._task import CANCELLED, FAILED, MADE, REUSED, spec_for

TARGETS = 150
STATEMENTS_PER_TARGET = 4
"""Issue 36: at most 4 SQL statements per trivial target (9-10 before batching)."""


class CostSeed(DBObject):
    n = persistent("Number", int, 0)


class CostTarget(Process):
    targets = OnePer(CostSeed, link="seed", copy=("n",))
    seed = persistent("Seed", CostSeed, None)
    n = persistent("Number", int, 0)
    value = persistent("n + 1", int, None)

    def make(self) -> None:
        self.value = self.n + 1


def test_a_trivial_target_costs_at_most_four_statements(db) -> None:
    commit([CostSeed(n=i) for i in range(TARGETS)])
    processor = TargetProcessor("serial", progress=False)
    with recorded_statements(db) as statements:
        report = processor.make(CostTarget)
    assert report.made == TARGETS
    assert sorted(t.value for t in select(CostTarget)) == list(range(1, TARGETS + 1))
    per_target = len(statements) / TARGETS
    assert per_target <= STATEMENTS_PER_TARGET, (
        f"{per_target:.2f} statements per target; most frequent: "
        f"{_most_frequent(statements)}")


class CostFragile(Process):
    targets = OnePer(CostSeed, link="seed", copy=("n",))
    seed = persistent("Seed", CostSeed, None)
    n = persistent("Number", int, 0)

    def make(self) -> None:
        if self.n == 2:
            raise ValueError("seed 2 is bad")


def _specs(cls: type) -> list:
    processor = TargetProcessor("serial", progress=False)
    plan = processor.plan(cls)
    processor._commit_parameters(plan)
    nodes = sorted(plan.red(), key=lambda node: node.obj.n)
    return [spec_for(node.obj, _link_ids(node, {})) for node in nodes]


def test_a_batch_commits_what_was_made_before_a_failure_and_starts_nothing_after(db) -> None:
    from awlineage.processing._task import make_targets

    commit([CostSeed(n=i) for i in range(5)])
    results = make_targets(_specs(CostFragile), db, keep_going=False)
    assert [r.status for r in results] == [MADE, MADE, FAILED, CANCELLED, CANCELLED]
    stored = sorted(t.n for t in select(CostFragile))
    assert stored == [0, 1]
    assert all(t.process_run.status == "succeeded" for t in select(CostFragile))
    assert select(ProcessRun.status == "failed").count() == 1


def test_a_batch_keeps_going_past_a_failure_and_reuses_what_is_stored(db) -> None:
    from awlineage.processing._task import make_targets

    commit([CostSeed(n=i) for i in range(5)])
    specs = _specs(CostFragile)
    first = make_targets(specs[:1], db)
    results = make_targets(specs, db, keep_going=True)
    assert first[0].status == MADE
    assert [r.status for r in results] == [REUSED, MADE, FAILED, MADE, MADE]
    assert sorted(t.n for t in select(CostFragile)) == [0, 1, 3, 4]


def _most_frequent(statements: list[str]) -> list[tuple[int, str]]:
    counts: dict[str, int] = {}
    for statement in statements:
        head = " ".join(statement.split())[:70]
        counts[head] = counts.get(head, 0) + 1
    return sorted(((n, s) for s, n in counts.items()), reverse=True)[:6]
