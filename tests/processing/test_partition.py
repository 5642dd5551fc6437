"""A Spark partition's targets, made in a worker's own session (`run_tasks`): their links
are read in one go, not one read per target, and a target whose link cannot be read fails
alone."""

from __future__ import annotations

from awlineage import DBObject, OnePer, Process, TargetProcessor, commit, persistent, select
from awlineage.database import recorded_statements
from awlineage.processing._scheduler import _link_ids
from awlineage.processing._task import FAILED, MADE, run_tasks, spec_for
from awlineage.storage import Session


class PartSeed(DBObject):
    n = persistent("Number", int, 0)


class PartTarget(Process):
    targets = OnePer(PartSeed, link="seed", copy=("n",))
    seed = persistent("Seed", PartSeed, None)
    n = persistent("Number", int, 0)
    value = persistent("The seed's number, read through the link", int, None)

    def make(self) -> None:
        self.value = self.seed.n


def _specs_and_settings(count: int) -> tuple[list, object]:
    commit([PartSeed(n=i) for i in range(count)])
    processor = TargetProcessor("serial", progress=False)
    plan = processor.plan(PartTarget)
    processor._commit_parameters(plan)  # as make() does before the tasks run
    owner = {id(n.obj): n for n in plan.nodes}
    return [spec_for(n.obj, _link_ids(n, owner)) for n in plan.red()], processor.settings(plan)


def _selects(specs: list, settings) -> int:
    """SELECT statements of one partition of `specs`, in a session of its own (a worker's:
    nothing read before)."""
    session = Session(settings.database_url, settings.data_url,
                      schema=settings.database_schema)
    try:
        with recorded_statements(session.database) as statements:
            results = run_tasks_in(session, specs)
        assert [r.status for r in results] == [MADE] * len(specs), results[0].traceback
        return sum(s.lstrip().upper().startswith("SELECT") for s in statements)
    finally:
        session.database.close()


def run_tasks_in(session: Session, specs: list) -> list:
    from awlineage.processing._task import PARTITION_COMMIT_AFTER, make_targets

    return make_targets(specs, session, commit_after=PARTITION_COMMIT_AFTER)


def test_a_partition_reads_the_links_of_its_targets_together(db) -> None:
    specs, settings = _specs_and_settings(40)
    few, many = _selects(specs[:5], settings), _selects(specs[5:], settings)
    assert many <= few  # 35 targets read no more than 5 (two reads a target before)
    assert sorted(t.value for t in select(PartTarget)) == list(range(40))


def test_a_target_whose_link_cannot_be_read_fails_alone(db) -> None:
    specs, settings = _specs_and_settings(3)
    gone = specs[1].__class__(**{**specs[1].__dict__, "links": {"seed": 987654321}})
    results = run_tasks([specs[0], gone, specs[2]], settings)
    assert [r.status for r in results] == [MADE, FAILED, MADE]
    assert "987654321" in results[1].error
