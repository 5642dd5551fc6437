"""The class browser: every stored class with its count, bases and subclasses (one grouped
count), one class's properties, names resolved like the query language's, and classes of a
script that cannot be imported here (stand-ins) listed and searchable."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from awlineage import Database, DBObject, commit, persistent
from tests.persistence.test_namespaces import run_script

JSON = {"accept": "application/json"}


class Plate(DBObject):
    """A base class with two stored subclasses."""

    __namespace__ = "classtest"
    identity = ("label",)
    label = persistent("Plate label", str, "", index=True)


class BluePlate(Plate):
    """A subclass."""

    __namespace__ = "classtest"
    depth = persistent("Limiting magnitude", float, 20.0)


class RedPlate(Plate):
    """Another subclass, linking to a blue one."""

    __namespace__ = "classtest"
    partner = persistent("The blue plate of the same field", BluePlate, None)


class Shape(DBObject):
    """A base whose own objects are never stored."""

    __namespace__ = "classtest"
    area = persistent("Area", float, 0.0)


class Square(Shape):
    """Stored: its base is in the registry's record of it, but has no page."""

    __namespace__ = "classtest"


def _twin(namespace: str) -> type:
    """A class called Twin in `namespace`: two of them make the short name ambiguous."""
    return type("Twin", (DBObject,), {"__namespace__": namespace, "__module__": __name__,
                                      "size": persistent("Size", int, 0)})


TWINS = (_twin("classtest_one"), _twin("classtest_two"))


def _store() -> None:
    blue = BluePlate(label="b1")
    commit([Plate(label="p1"), blue, BluePlate(label="b2"), BluePlate(label="b1"),
            RedPlate(label="r1", partner=blue), Square(area=4.0)])


def test_the_class_list_counts_each_class_and_names_its_relatives(db: Database,
                                                                 open_viewer) -> None:
    _store()
    client = open_viewer()
    classes = {c["name"]: c for c in client.get("/classes", headers=JSON).json()["classes"]}
    plate, blue = classes["classtest.Plate"], classes["classtest.BluePlate"]
    assert (plate["objects"], plate["objects_with_subclasses"]) == (1, 5)
    assert (blue["objects"], blue["objects_with_subclasses"]) == (3, 3)
    assert [c["name"] for c in plate["subclasses"]] == ["classtest.BluePlate",
                                                       "classtest.RedPlate"]
    assert blue["bases"] == [{"name": "classtest.Plate", "url": "/class/classtest.Plate"}]
    assert blue["subclasses"] == []
    assert classes["classtest.Square"]["bases"] == [{"name": "classtest.Shape", "url": None}]
    assert "classtest.Shape" not in classes
    assert not blue["stand_in"] and blue["defined_in"] == f"module {__name__}"
    html = client.get("/classes").text
    assert 'href="/class/classtest.RedPlate"' in html


def test_the_class_list_counts_with_one_statement_for_all_classes(db: Database,
                                                                  open_viewer) -> None:
    _store()
    client = open_viewer()
    client.get("/classes")  # the first answer reads each class's definition once
    counts: list[str] = []

    def seen(conn, cursor, statement, *args) -> None:
        if "count(" in statement.lower():
            counts.append(statement)

    engine = client.app.state.viewer.database.engine
    sa.event.listen(engine, "before_cursor_execute", seen)
    try:
        assert client.get("/classes").status_code == 200
    finally:
        sa.event.remove(engine, "before_cursor_execute", seen)
    assert len(counts) == 1 and "group by" in counts[0].lower()


def test_a_class_page_shows_its_properties(db: Database, open_viewer) -> None:
    _store()
    client = open_viewer()
    body = client.get("/class/RedPlate", headers=JSON).json()
    assert body["name"] == "classtest.RedPlate" and body["identity"] == ["label"]
    props = {p["name"]: p for p in body["properties"]}
    assert props["label"] == {"name": "label", "kind": "descriptor", "type": "str",
                              "doc": "Plate label", "default": "", "index": True,
                              "identity": True, "type_url": None}
    assert props["partner"]["kind"] == "link"
    assert props["partner"]["type_url"] == "/class/classtest.BluePlate"
    assert body["search_url"] == "/search?q=classtest.RedPlate"
    assert body["versions_url"] == "/versions/class/classtest.RedPlate"
    assert client.get("/class/classtest.RedPlate", headers=JSON).json() == body
    html = client.get("/class/RedPlate").text
    assert 'href="/class/classtest.BluePlate"' in html and "Partner" not in html
    assert 'href="/versions/class/classtest.RedPlate"' in html


def test_an_ambiguous_or_unknown_class_name_is_refused(db: Database, open_viewer) -> None:
    TWINS[0](size=1).commit()
    TWINS[1](size=2).commit()
    client = open_viewer()
    ambiguous = client.get("/class/Twin", headers=JSON)
    assert ambiguous.status_code == 400
    assert "classtest_one.Twin" in ambiguous.json()["error"]
    assert ambiguous.json()["candidates"] == ["classtest_one.Twin", "classtest_two.Twin"]
    assert client.get("/class/classtest_two.Twin", headers=JSON).json()["objects"] == 1
    unknown = client.get("/class/Nebula", headers=JSON)
    assert unknown.status_code == 404 and "'Nebula'" in unknown.json()["error"]
    assert client.get("/versions/class/Nebula").status_code == 404


SCRIPT = """
    from awlineage import DBObject, connect, persistent

    connect()

    class Comet(DBObject):
        identity = ("designation",)
        designation = persistent("Designation", str, "")
        magnitude = persistent("Apparent magnitude", float, 0.0)

    for designation, magnitude in (("C/1", 9.5), ("C/2", 4.0), ("C/1", 8.0)):
        Comet(designation=designation, magnitude=magnitude).commit()
"""


def test_a_script_class_is_listed_as_a_stand_in_and_searchable(db: Database, tmp_path: Path,
                                                               open_viewer) -> None:
    run_script(db, tmp_path, "comets.py", SCRIPT)
    client = open_viewer()
    classes = {c["name"]: c for c in client.get("/classes", headers=JSON).json()["classes"]}
    comet = classes["comets.Comet"]
    assert comet["stand_in"] and comet["objects"] == 3
    assert comet["defined_in"] == "script comets.py"
    assert "(stand-in)" in client.get("/classes").text
    found = client.get("/search", params={"q": "Comet.magnitude > 5"}, headers=JSON).json()
    assert [(r["attributes"]["designation"], r["version"], r["older_versions"])
            for r in found["results"]] == [("C/1", 2, 1)]
    assert found["results"][0]["stand_in"]
    listed = client.get("/search", params={"q": "comets.Comet"}, headers=JSON).json()
    assert listed["total"] == 2 and listed["matching_objects"] == 3
