"""A read-only reader finds a class's tables from the registry without working out the class's
code version (for a process class, a hash of the syntax trees of its code and of the code it
uses: it was most of the first page the viewer showed of a pipeline's product)."""

from __future__ import annotations

import pytest

from awlineage import Database, DBObject, persistent, select


class Exposure(DBObject):
    """A product of a process class, for the read-only reader."""

    __namespace__ = "readonlycode"
    seconds = persistent("Exposure time [s]", float, 0.0)


def test_a_read_only_reader_does_not_hash_the_code_of_the_classes_it_reads(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    Exposure(seconds=30.0).commit()

    def refuse(cls: type) -> str:
        raise AssertionError(f"the code version of {cls.__name__} was worked out")

    monkeypatch.setattr(Exposure, "class_code_version", classmethod(refuse))
    reader = Database(db.url.render_as_string(hide_password=False), schema=db.schema,
                      read_only=True)
    try:
        assert [e.seconds for e in select(Exposure, database=reader)] == [30.0]
    finally:
        reader.close()
