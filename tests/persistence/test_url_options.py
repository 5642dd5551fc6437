"""A PostgreSQL URL's own ``options`` (a search_path, a setting) reach the server beside the
ones awlineage sets, instead of being dropped."""

from __future__ import annotations

import uuid

import sqlalchemy as sa

from awlineage import DBObject, connect, persistent, select


class UrlOptionsProbe(DBObject):
    """A class whose table shows which schema the database works in."""

    label = persistent("A label", str, "")


def test_a_search_path_in_the_url_is_where_tables_go(postgres_url: str,
                                                     postgres_admin: sa.Engine) -> None:
    schema = f"urlopt_{uuid.uuid4().hex[:8]}"
    with postgres_admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    try:
        url = sa.make_url(postgres_url).update_query_dict(
            {"options": f"-csearch_path={schema} -cstatement_timeout=54321"})
        db = connect(url.render_as_string(hide_password=False))
        try:
            db.commit([UrlOptionsProbe(label="here")])
            with db.engine.connect() as conn:
                assert conn.execute(sa.text("SHOW search_path")).scalar() == schema
                assert conn.execute(sa.text("SHOW statement_timeout")).scalar() == "54321ms"
                assert conn.execute(sa.text("SHOW timezone")).scalar() == "UTC"  # ours kept
        finally:
            db.close()
        assert _probe_tables(postgres_admin, schema) == 1
    finally:
        with postgres_admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))


def test_a_schema_named_with_spaces_quotes_and_capitals_is_where_tables_go(
        postgres_url: str, postgres_admin: sa.Engine) -> None:
    schema = f"Url Opt 'q\"\\ {uuid.uuid4().hex[:8]}"
    quoted = postgres_admin.dialect.identifier_preparer.quote(schema)
    with postgres_admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {quoted}"))
    try:
        db = connect(postgres_url, schema=schema)
        try:
            db.commit([UrlOptionsProbe(label="here")])
            assert select(UrlOptionsProbe).one().label == "here"
        finally:
            db.close()
        assert _probe_tables(postgres_admin, schema) == 1
    finally:
        with postgres_admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {quoted} CASCADE"))


def _probe_tables(postgres_admin: sa.Engine, schema: str) -> int:
    """How many tables of `UrlOptionsProbe` the schema holds."""
    with postgres_admin.connect() as conn:
        return conn.execute(sa.text(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = :s "
            "AND table_name LIKE '%urloptionsprobe%'"), {"s": schema}).scalar()


def test_a_schema_given_with_an_sqlite_url_is_ignored_as_documented(tmp_path,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("AWL_DATABASE_SCHEMA", "pipeline")  # set for PostgreSQL elsewhere
    db = connect(f"sqlite:///{tmp_path / 'here.db'}")
    try:
        db.commit([UrlOptionsProbe(label="here")])
        assert db.schema is None
        assert [probe.label for probe in select(UrlOptionsProbe, database=db)] == ["here"]
    finally:
        db.close()
