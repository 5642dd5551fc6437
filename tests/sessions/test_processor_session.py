"""A processor hands its session to every make() it runs: the make()'s queries, default
parameters and files use the processor's database and data server, not the ones a script
connected to."""

from __future__ import annotations

from pathlib import Path

from awlineage import Session, TargetProcessor, backward, commit, select
from awlineage.processing import run_task
from awlineage.processing._scheduler import _link_ids
from awlineage.processing._task import MADE, spec_for
from tests.sessions.models import SessCount, SessMask, SessTally, SessTallyParameters


def _counts(label: str, how_many: int) -> list[SessCount]:
    return [SessCount(label=label, n=i) for i in range(how_many)]


def test_make_on_another_database_queries_that_database(db, other_db, data_dirs) -> None:
    commit(_counts("a", 5))  # on db, the connected one
    with Session(other_db):
        commit(_counts("b", 2))
    report = TargetProcessor("serial", database=other_db, progress=False).make(SessTally)
    assert report.made == 2 and report.count("failed") == 0
    assert sorted(t.seen for t in report.objects) == [2, 2]
    assert select(SessTally).all() == []  # nothing was made on the connected database


def test_make_on_another_database_stores_default_parameters_there(db, other_db,
                                                                  data_dirs) -> None:
    SessTallyParameters(scale=1).commit()  # defaults stored on the connected database
    with Session(other_db):
        commit(_counts("b", 1))
    TargetProcessor("serial", database=other_db, progress=False).make(SessTally)
    with Session(other_db):
        (tally,) = select(SessTally).all()
        assert tally.process_params.object_id in {p.object_id
                                                  for p in select(SessTallyParameters).all()}
    assert tally.process_params.object_id not in {p.object_id
                                                  for p in select(SessTallyParameters).all()}


def test_make_in_a_session_stores_files_on_its_data_server(db, other_db, data_dirs) -> None:
    session = Session(other_db, data_dirs["other"])
    with session:
        commit(_counts("b", 1))
    try:
        TargetProcessor("serial", session=session, progress=False).make(SessTally)
    finally:
        session.close()
    assert (Path(data_dirs["other"]) / "tally-b.txt").read_text() == "b: 1\n"
    assert not (Path(data_dirs["default"]) / "tally-b.txt").exists()


def test_region_lineage_captured_in_a_make_is_stored_in_its_session(db, other_db) -> None:
    SessCount(label="a").commit()
    TargetProcessor("serial", progress=False).make(SessMask)  # signatures stored on db
    with Session(other_db):
        count = SessCount(label="b")
        count.commit()
    TargetProcessor("serial", database=other_db, progress=False).make(SessMask)
    with Session(other_db):
        (mask,) = select(SessMask).all()
        lineage = backward(mask, [[1, 2]])
        assert lineage[count].cells().tolist() == [[1, 2]]
    assert [m.label for m in select(SessMask).all()] == ["a"]


def test_a_task_works_in_the_session_its_settings_name(db, other_db, data_dirs) -> None:
    """What a Spark worker runs: the settings name the processor's database and data server,
    and the task uses them whatever the worker process has connected to."""
    commit(_counts("a", 3))
    with Session(other_db):
        commit(_counts("b", 1))
    processor = TargetProcessor("serial", session=Session(other_db, data_dirs["other"]),
                                progress=False)
    plan = processor.plan(SessTally)
    processor._commit_parameters(plan)
    settings = processor.settings(plan)
    assert settings.data_url == data_dirs["other"]
    (node,) = plan.red()
    result = run_task(spec_for(node.obj, _link_ids(node, {})), settings)
    assert result.status == MADE, result.traceback
    with Session(other_db):
        assert [t.seen for t in select(SessTally).all()] == [1]
    assert (Path(data_dirs["other"]) / "tally-b.txt").exists()
