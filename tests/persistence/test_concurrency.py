"""Several OS processes committing at once: versions stay unique and gap-free, and a class's
new table appears to others only together with its registry entry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import sqlalchemy as sa

from awlineage import DBObject, persistent, select
from tests.persistence.models import MasterBias

REPO = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys
    from awlineage import connect
    from tests.persistence.models import MasterBias, utc
    connect()
    for i in range(int(sys.argv[1])):
        MasterBias(chip="ccd50", obs_date=utc(2024, 1, 1), level=float(i)).commit()
""")


def test_concurrent_commits_of_one_identity_get_distinct_versions(db) -> None:
    MasterBias(chip="ccd50").commit()  # the table exists before the writers race
    env = dict(os.environ, PYTHONPATH=str(REPO),
               AWL_DATABASE_URL=db.url.render_as_string(hide_password=False))
    if db.schema:
        env["AWL_DATABASE_SCHEMA"] = db.schema
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, "15"], env=env, cwd=REPO,
                                stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    versions = sorted(b.version for b in select(MasterBias.obs_date != None))  # noqa: E711
    assert versions == list(range(1, 46))


def test_a_new_class_table_is_not_seen_before_its_registry_entry(db, reconnect) -> None:
    class Arrival(DBObject):
        note = persistent("Note", str, "")

    other = reconnect()
    seen: list[bool] = []

    def look(_conn, _cursor, statement: str, *_rest) -> None:
        if statement.lstrip().upper().startswith("CREATE TABLE") and "arrival" in statement:
            seen.append(sa.inspect(other.engine).has_table("tests_arrival", schema=other.schema))

    sa.event.listen(db.engine, "after_cursor_execute", look)
    try:
        db.tables_for(Arrival)
    finally:
        sa.event.remove(db.engine, "after_cursor_execute", look)
    assert seen == [False]  # created, but not committed before the registry entry
    assert "tests.Arrival" in other.registered_classes()
