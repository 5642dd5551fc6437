"""A process run's status is a `RunStatus`: stored as the plain words older versions wrote,
read back as a member (also from rows those versions wrote), and selected by member, by
string and by textual query; on both databases."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from awlineage import ProcessRun, RunStatus, commit, select
from tests.trace.models import BrokenTarget, Exposure, MasterLevel


def _one_of_each() -> tuple[MasterLevel, BrokenTarget]:
    exposure = Exposure(chip="ccd50", counts=[100.0, 102.0])
    commit([exposure])
    master = MasterLevel(exposures=[exposure])
    master.make()
    master.commit()
    broken = BrokenTarget(exposure=exposure)
    with pytest.raises(ValueError, match="deliberately broken"):
        broken.make()
    return master, broken


def _stored_status(db, run_id: int) -> object:
    table = db.tables_for(ProcessRun).table
    with db.engine.connect() as conn:
        return conn.execute(sa.select(table.c.status).where(
            table.c.object_id == run_id)).scalar_one()


def test_runs_read_back_in_another_session_have_run_status_members(db, reconnect) -> None:
    master, broken = _one_of_each()
    other = reconnect()
    succeeded = select(ProcessRun.target_id == master.object_id, database=other).first()
    failed = select(ProcessRun.target_id == broken.object_id, database=other).first()
    assert type(succeeded.status) is RunStatus and succeeded.status is RunStatus.SUCCEEDED
    assert type(failed.status) is RunStatus and failed.status is RunStatus.FAILED
    assert succeeded.succeeded and not failed.succeeded
    assert failed.status == "failed" and f"{failed.status}" == "failed"


def test_the_status_column_holds_the_plain_words_older_versions_wrote(db) -> None:
    master, broken = _one_of_each()
    stored = {_stored_status(db, master.process_run.object_id),
              _stored_status(db, select(ProcessRun.target_id == broken.object_id).first()
                             .object_id)}
    assert stored == {"succeeded", "failed"}
    assert all(type(value) is str for value in stored)


def test_a_status_written_as_a_plain_string_reads_back_as_the_enum(db, reconnect) -> None:
    # what code before RunStatus did: a str assigned, and the text written by SQL
    old = ProcessRun(target_class="BiasFrame", status="succeeded")
    old.commit()
    table = db.tables_for(ProcessRun).table
    with db.engine.begin() as conn:
        conn.execute(table.update().where(table.c.object_id == old.object_id)
                     .values(status="failed"))
    run = select(ProcessRun.object_id == old.object_id, database=reconnect()).first()
    assert run.status is RunStatus.FAILED


def test_a_status_no_member_has_is_read_as_its_text(db, reconnect) -> None:
    old = ProcessRun(target_class="BiasFrame", status="interrupted")
    old.commit()
    run = select(ProcessRun.object_id == old.object_id, database=reconnect()).first()
    assert run.status == "interrupted" and not isinstance(run.status, RunStatus)
    assert not run.succeeded


@pytest.mark.parametrize("condition", [
    ProcessRun.status == RunStatus.FAILED,
    ProcessRun.status == "failed",
    "ProcessRun.status == 'failed'",
], ids=["member", "string", "text"])
def test_runs_are_selected_by_member_by_string_and_by_text(db, condition) -> None:
    master, broken = _one_of_each()
    found = select(condition).all()
    assert [run.target_id for run in found] == [broken.object_id]
    assert [run.target_id for run in select(ProcessRun.status != RunStatus.FAILED)] == [
        master.object_id]
