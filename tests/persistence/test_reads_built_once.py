"""Reads by id build their statements once per class's tables (`load_class_rows`, a link
list's `prefetch`, `load_objects`): a class redefined with more attributes, the same class
in another database and descriptor lists decoded a column at a time must read what is
stored now, in that database."""

from __future__ import annotations

import datetime

from awlineage import DBObject, commit, connect, persistent, select
from awlineage.database import load_class_rows, load_objects, prefetch
from tests.persistence.models import Site, utc


def test_a_class_redefined_with_more_attributes_is_read_with_its_new_columns(db) -> None:
    class Regrown(DBObject):
        name = persistent("name", str, "")

    old = Regrown(name="old")
    old.commit()
    # builds and keeps the first definition's statements
    assert load_class_rows(db, Regrown, [old.object_id])[old.object_id].name == "old"

    class Regrown(DBObject):  # type: ignore[no-redef]
        name = persistent("name", str, "")
        gains = persistent("added later", float, [])
        sites = persistent("a link list added later", Site, [])

    new = Regrown(name="new", gains=[1, 2.5], sites=[Site(name="La Silla")])
    new.commit()
    again = connect(db.url.render_as_string(hide_password=False), schema=db.schema)
    try:
        found = load_class_rows(again, Regrown, [old.object_id, new.object_id])
        assert found[new.object_id].gains == [1.0, 2.5]
        assert all(type(g) is float for g in found[new.object_id].gains)
        assert found[old.object_id].gains is None  # a row older than the column
        prefetch(again, list(found.values()), Regrown._properties["sites"])
        assert [s.name for s in found[new.object_id].sites] == ["La Silla"]
        assert list(found[old.object_id].sites) == []
        # and once more, with the statements built above
        more = Regrown(name="more", gains=[3.0], sites=[Site(name="Paranal")])
        more.commit()
        found = load_class_rows(again, Regrown, [more.object_id, new.object_id])
        prefetch(again, list(found.values()), Regrown._properties["sites"])
        assert [s.name for s in found[more.object_id].sites] == ["Paranal"]
        assert found[more.object_id].gains == [3.0]
    finally:
        again.close()


class Beacon(DBObject):
    frequency = persistent("Frequency in MHz", float, 0.0)
    site = persistent("Where it stands", Site, None)
    neighbours = persistent("Beacons in sight", DBObject, [])


def test_one_class_read_from_two_databases_reads_each_its_own(db, tmp_path) -> None:
    here = Beacon(frequency=406.0, site=Site(name="here"), neighbours=[Site(name="n1")])
    here.commit()
    elsewhere = connect(f"sqlite:///{tmp_path}/elsewhere.db")
    try:
        there = Beacon(frequency=121.5, site=Site(name="there"),
                       neighbours=[Site(name="n2"), Site(name="n3")])
        elsewhere.commit([there])
        for database, beacon, site, names in ((db, here, "here", ["n1"]),
                                              (elsewhere, there, "there", ["n2", "n3"]),
                                              (db, here, "here", ["n1"])):
            fresh = connect(database.url.render_as_string(hide_password=False),
                            schema=database.schema)
            try:
                read = load_class_rows(fresh, Beacon, [beacon.object_id, here.object_id,
                                                       there.object_id])
                assert list(read) == [beacon.object_id]  # not the other database's
                found = read[beacon.object_id]
                assert found.frequency == beacon.frequency
                assert found.site.name == site  # its link read from its own database
                prefetch(fresh, [found], Beacon._properties["neighbours"])
                assert [n.name for n in found.neighbours] == names
                assert load_objects(fresh, [beacon.object_id])[beacon.object_id] is found
            finally:
                fresh.close()
    finally:
        elsewhere.close()


def test_descriptor_lists_read_a_column_at_a_time_keep_each_value(db, reconnect) -> None:
    class Logged(DBObject):
        label = persistent("label", str, "")

    Logged(label="before the lists").commit()

    class Logged(DBObject):  # type: ignore[no-redef]
        label = persistent("label", str, "")
        words = persistent("words", str, [])
        weights = persistent("weights", float, [])
        times = persistent("times", datetime.datetime, [])

    night = utc(2024, 3, 1, 2, 30)
    commit([Logged(label="empty"),
            Logged(label="full", words=["a", "[b]", 'c"d', ""], weights=[1, 0.5, -2],
                   times=[night, utc(2025, 1, 1)]),
            Logged(label="one", words=["x,y"], weights=[3], times=[night])])
    other = reconnect()
    found = {o.label: o for o in select(Logged, database=other)}
    assert found["before the lists"].words is None
    assert found["before the lists"].times is None
    assert (found["empty"].words, found["empty"].weights, found["empty"].times) == ([], [], [])
    full = found["full"]
    assert full.words == ["a", "[b]", 'c"d', ""]
    assert full.weights == [1.0, 0.5, -2.0] and all(type(w) is float for w in full.weights)
    assert full.times == [night, utc(2025, 1, 1)]
    assert all(t.tzinfo is not None for t in full.times)
    assert (found["one"].words, found["one"].weights) == (["x,y"], [3.0])
    ids = [o.object_id for o in found.values()]
    again = reconnect()
    by_id = load_class_rows(again, Logged, ids)
    assert {o.label: (o.words, o.weights, o.times) for o in by_id.values()} == {
        o.label: (o.words, o.weights, o.times) for o in found.values()}


def test_rows_read_by_id_queries_follow_each_query_and_its_parameters(db) -> None:
    import sqlalchemy as sa

    from awlineage.database import load_class_rows_in

    beacons = [Beacon(frequency=float(f)) for f in (100, 200, 300, 400)]
    commit(beacons)
    table = db.tables_for(Beacon).table
    above = sa.select(table.c.object_id).where(
        table.c.frequency > sa.bindparam("least", type_=sa.Float))
    below = sa.select(table.c.object_id).where(
        table.c.frequency < sa.bindparam("least", type_=sa.Float))
    for query, least, wanted in ((above, 150.0, [200, 300, 400]), (below, 150.0, [100]),
                                 (above, 350.0, [400]), (below, 350.0, [100, 200, 300])):
        found = load_class_rows_in(db, Beacon, query, {"least": least})
        assert [b.frequency for b in found.values()] == wanted
        assert list(found) == sorted(found)
        assert all(found[b.object_id] is b for b in beacons if b.frequency in wanted)


class NeverStored(DBObject):
    level = persistent("A value", float, 0.0)


def test_a_query_of_a_class_never_stored_matches_nothing_without_a_statement(db) -> None:
    import sqlalchemy as sa

    Site(name="stored, so the registry is not empty").commit()
    seen: list[str] = []

    def record(conn, cursor, statement, *_: object) -> None:
        seen.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", record)
    try:
        assert select(NeverStored.level > 1.0).all() == []
        assert list(select(NeverStored)) == []
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", record)
    # the registry is read (it says which classes are stored); no SELECT ... WHERE false
    assert seen and all("awl_class" in statement for statement in seen), seen
    NeverStored(level=2.0).commit()
    assert [o.level for o in select(NeverStored.level > 1.0)] == [2.0]
