"""A database opened read-only (the web viewer's): everything can be read, nothing can be
written, and nothing is created, neither tables nor files."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from awlineage import (
    Database,
    DBObject,
    DBObjectMeta,
    ReadOnlyDatabaseError,
    SchemaConflictError,
    Session,
    UnknownClassError,
    ancestors,
    persistent,
    select,
)
from awlineage.errors import AmbiguousClassError


class Plate(DBObject):
    """A photographic plate, for the read-only reader."""

    __namespace__ = "readonly"
    number = persistent("Plate number", int, 0)


class Scan(DBObject):
    """A scan of a plate."""

    __namespace__ = "readonly"
    plate = persistent("The plate scanned", Plate, None)
    dpi = persistent("Resolution", int, 0)


class Lens(DBObject):
    """A lens, whose newer code (in one test) has a property more."""

    __namespace__ = "readonly"
    focal_length = persistent("Focal length [mm]", float, 0.0)


class NeverStored(DBObject):
    """A class no object of which is stored."""

    __namespace__ = "readonly"
    x = persistent("x", int, 0)


def _reader(db: Database) -> Database:
    return Database(db.url.render_as_string(hide_password=False), schema=db.schema,
                    read_only=True)


def _count(db: Database) -> int:
    with db.engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM awl_object")).scalar_one()


def test_a_reader_reads_what_a_writer_stored(db: Database) -> None:
    scan = Scan(plate=Plate(number=7), dpi=1200)
    scan.commit()
    reader = _reader(db)
    try:
        with Session(reader):
            [found] = select(Scan.dpi == 1200).all()
            assert found.object_id == scan.object_id and found.plate.number == 7
            assert [type(o).__name__ for o in ancestors(found)] == ["Plate"]
            assert select("readonly.Plate.number == 7").count() == 1
    finally:
        reader.close()


def test_a_reader_refuses_to_commit_or_delete_and_writes_nothing(db: Database) -> None:
    stored = Plate(number=1)
    stored.commit()
    reader = _reader(db)
    before = _count(db)
    try:
        with Session(reader):
            with pytest.raises(ReadOnlyDatabaseError, match=r"cannot commit Plate "
                               r"\d+: database .* is open read-only"):
                Plate(number=2).commit()
            with pytest.raises(ReadOnlyDatabaseError, match="cannot delete"):
                reader.delete(reader.get(stored.object_id))
    finally:
        reader.close()
    assert _count(db) == before


def test_the_database_itself_refuses_a_readers_writes(db: Database) -> None:
    Plate(number=3).commit()
    reader = _reader(db)
    try:
        with pytest.raises(sa.exc.DBAPIError, match=r"(?i)read.?only"), \
                reader.engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM awl_object"))
    finally:
        reader.close()
    assert _count(db) == 1


def test_a_class_the_database_never_stored_has_no_objects_and_no_table(db: Database) -> None:
    Plate(number=4).commit()
    reader = _reader(db)
    try:
        with Session(reader):
            assert select(NeverStored).all() == []
        with pytest.raises(UnknownClassError, match=r"readonly\.NeverStored has no objects"):
            reader.tables_for(NeverStored)
        assert not any("neverstored" in name
                       for name in sa.inspect(db.engine).get_table_names(schema=db.schema))
    finally:
        reader.close()


def test_code_with_properties_the_database_lacks_is_refused_by_name(db: Database) -> None:
    Lens(focal_length=50.0).commit()
    reader = _reader(db)
    try:
        newer_lens = DBObjectMeta("Lens", (DBObject,), {  # the same class, as newer code has it
            "__module__": __name__, "__namespace__": "readonly",
            "focal_length": persistent("Focal length [mm]", float, 0.0),
            "coating": persistent("Coating", str, "")})
        with pytest.raises(SchemaConflictError,
                           match="properties the database has no columns for: coating"):
            reader.tables_for(newer_lens)
    finally:
        DBObjectMeta.registry["readonly.Lens"] = Lens  # the rest of the session's Lens
        reader.close()


def test_a_reader_takes_a_short_name_as_the_one_stored_class_of_that_name(
        db: Database) -> None:
    Plate(number=6).commit()
    DBObjectMeta("Plate", (DBObject,), {  # known to this process, never stored
        "__module__": __name__, "__namespace__": "elsewhere",
        "number": persistent("Plate number", int, 0)})
    with pytest.raises(AmbiguousClassError, match=r"elsewhere\.Plate.*readonly\.Plate"):
        db.class_named("Plate")
    reader = _reader(db)
    try:
        assert reader.class_named("Plate") is Plate
        with Session(reader):
            assert [p.number for p in select("Plate.number == 6").all()] == [6]
    finally:
        DBObjectMeta.registry.pop("elsewhere.Plate", None)
        reader.close()
