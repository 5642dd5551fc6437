"""persistent(): the five kinds, type checking, names a database could not hold, and what
get_persistent_properties says. These tests define classes and build objects without a
database, but for one storing the longest names on both."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from astropy.coordinates import SkyCoord

from awlineage import (
    DataObject,
    DBObject,
    PersistentTypeError,
    PersistentValueError,
    PropertyDefinitionError,
    UnknownAttributeError,
    get_persistent_properties,
    persistent,
    select,
)
from awlineage.persistence import Kind
from tests.persistence.models import CameraFrame, DomeFlatImage, Instrument, utc

REPO = Path(__file__).resolve().parents[2]


def kinds(cls: type) -> dict[str, str]:
    return {p.name: p.kind for p in get_persistent_properties(cls)}


def test_kind_follows_from_the_arguments_as_in_seed_003() -> None:
    assert kinds(CameraFrame) == {
        "chip": "descriptor", "exptime": "descriptor", "nexp": "descriptor",
        "is_science": "descriptor", "obs_date": "descriptor",
        "keywords": "descriptor list", "gains": "descriptor list",
        "instrument": "link", "overlaps": "link list", "previous": "self-link",
    }


def test_get_persistent_properties_lists_name_kind_type_default_doc() -> None:
    info = {p.name: p for p in get_persistent_properties(CameraFrame)}
    assert info["exptime"].type is float
    assert info["exptime"].default == 0.0
    assert info["exptime"].doc == "Exposure time [s]"
    assert info["instrument"].type is Instrument
    assert info["previous"].type is CameraFrame
    assert "object_id" not in info
    assert "object_id" in {p.name for p in get_persistent_properties(CameraFrame, builtins=True)}


def test_properties_are_inherited() -> None:
    assert set(kinds(DomeFlatImage)) == {"filter", "level", "lamp"}


def test_new_object_has_defaults_and_fresh_lists() -> None:
    a, b = CameraFrame(), CameraFrame()
    a.keywords.append("X")
    assert b.keywords == []
    assert a.exptime == 0.0 and a.previous is None and a.overlaps == []


def test_object_ids_are_unique_and_time_ordered() -> None:
    ids = [CameraFrame().object_id for _ in range(5000)]
    assert len(set(ids)) == 5000
    assert ids == sorted(ids)


def test_assignment_of_wrong_type_names_class_attribute_and_types() -> None:
    frame = CameraFrame()
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.exptime expects float, got str"):
        frame.exptime = "thirty"
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.nexp expects int, got bool"):
        frame.nexp = True
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.keywords\[1\] expects str"):
        frame.keywords = ["a", 2]


def test_numpy_scalars_are_accepted_and_normalised() -> None:
    frame = CameraFrame(exptime=np.float32(2.5), nexp=np.int64(3), is_science=np.bool_(False))
    assert type(frame.exptime) is float and frame.exptime == 2.5
    assert type(frame.nexp) is int and frame.is_science is False


def test_link_to_object_of_wrong_class_is_refused() -> None:
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.instrument links to Instrument"):
        CameraFrame(instrument=DomeFlatImage())
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.previous links to CameraFrame"):
        CameraFrame(previous=Instrument())


def test_value_that_does_not_fit_is_refused() -> None:
    with pytest.raises(PersistentValueError, match="64-bit"):
        CameraFrame(nexp=2**70)
    with pytest.raises(PersistentValueError, match="NUL"):
        CameraFrame(chip="a\x00b")


def test_naive_datetime_is_refused_and_aware_one_stored_as_utc() -> None:
    with pytest.raises(PersistentValueError, match="naive datetime"):
        CameraFrame(obs_date=datetime.datetime(2024, 1, 1))
    cet = datetime.timezone(datetime.timedelta(hours=1))
    frame = CameraFrame(obs_date=datetime.datetime(2024, 1, 1, 1, 0, tzinfo=cet))
    assert frame.obs_date == utc(2024, 1, 1) and frame.obs_date.tzinfo is datetime.UTC


def test_unknown_constructor_attribute_names_class_and_attribute() -> None:
    with pytest.raises(UnknownAttributeError, match=r"CameraFrame has no persistent attribute "
                                                    r"'exptme'"):
        CameraFrame(exptme=3.0)


def test_bad_declarations_are_refused_at_class_definition() -> None:
    with pytest.raises(PropertyDefinitionError, match="neither a basic type"):
        class BadType(DBObject):
            x = persistent("complex value", complex, 0j)
    with pytest.raises(PropertyDefinitionError, match="expects int"):
        class BadDefault(DBObject):
            n = persistent("count", int, "zero")
    with pytest.raises(PropertyDefinitionError, match="identity names 'nope'"):
        class BadIdentity(DBObject):
            identity = ("nope",)
            x = persistent("x", int, 0)


LONGEST = 63  # PostgreSQL's longest name, in bytes


class LongestNames(DBObject):
    """Table, column and link-list side table names of the longest length PostgreSQL holds."""

    __tablename__ = "l" * (LONGEST - len("__links"))
    a_column_name_of_sixty_three_bytes_which_postgresql_still_holds = persistent(
        "x", int, None, index=True)
    links = persistent("Linked objects", DBObject, [])


def test_names_of_the_longest_length_are_stored_on_both_databases(db) -> None:
    other = LongestNames(a_column_name_of_sixty_three_bytes_which_postgresql_still_holds=1)
    LongestNames(a_column_name_of_sixty_three_bytes_which_postgresql_still_holds=2,
                 links=[other]).commit()
    db.identity_map.clear()
    found = select(
        LongestNames.a_column_name_of_sixty_three_bytes_which_postgresql_still_holds == 2).one()
    assert [o.a_column_name_of_sixty_three_bytes_which_postgresql_still_holds
            for o in found.links] == [1]


def test_names_postgresql_cannot_hold_are_refused_at_class_definition() -> None:
    with pytest.raises(PropertyDefinitionError, match=r"class TooLongTable: its table name .* "
                                                      r"64 bytes long.* at most 63 bytes"):
        class TooLongTable(DBObject):
            __tablename__ = "t" * 64
    with pytest.raises(PropertyDefinitionError, match=r"TooLongSideTable\.links: its side table"
                                                      r".* 64 bytes"):
        class TooLongSideTable(DBObject):
            __tablename__ = "t" * 57
            links = persistent("Linked objects", DBObject, [])
    with pytest.raises(PropertyDefinitionError, match=r"TooLongPosition\.position: its side"):
        class TooLongPosition(DBObject):
            __tablename__ = "t" * 54
            position = persistent("Sky position", SkyCoord, None)
    # PostgreSQL would cut both to one name
    with pytest.raises(PropertyDefinitionError, match=r"TooLongColumns\.a{63}_1: the column "
                                                      r"name is 65 bytes"):
        class TooLongColumns(DBObject):
            locals()["a" * 63 + "_1"] = persistent("one", int, 0)
            locals()["a" * 63 + "_2"] = persistent("two", int, 0)
    with pytest.raises(PropertyDefinitionError, match=r"TooLongUnicode\.é{32}: .* 64 bytes"):
        class TooLongUnicode(DBObject):
            locals()["é" * 32] = persistent("32 characters, 64 bytes", int, 0)


@pytest.mark.parametrize("name, why", [
    ("version", "a column awlineage adds"), ("object_id", "a column awlineage adds"),
    ("_identity", "a column awlineage adds"), ("creation_date", "a column awlineage adds"),
    ("commit", "a method of DBObject"), ("delete", "a method of DBObject"),
    ("identity", "an attribute of DBObject"), ("__init__", "a method of DBObject")])
def test_names_the_framework_uses_are_refused_at_class_definition(name, why) -> None:
    with pytest.raises(PropertyDefinitionError,
                       match=rf"Reserved\.{name}: '{name}' is {why}"):
        type("Reserved", (DBObject,), {name: persistent("Taken", int, 0)})


def test_a_data_object_method_is_refused_as_an_attribute_name() -> None:
    with pytest.raises(PropertyDefinitionError, match=r"Stored\.retrieve: .* of DataObject"):
        class Stored(DataObject):
            retrieve = persistent("Taken", int, 0)


def test_subclass_cannot_change_kind_of_inherited_property() -> None:
    with pytest.raises(PropertyDefinitionError, match=r"DomeFlatImage\.level|RedefinedFlat"):
        class RedefinedFlat(DomeFlatImage):
            level = persistent("Level as text", str, "")


def test_self_link_points_to_declaring_class() -> None:
    assert CameraFrame._properties["previous"].kind is Kind.SELF_LINK
    assert CameraFrame._properties["previous"].type is CameraFrame


def test_one_class_name_in_two_namespaces_is_two_classes(tmp_path) -> None:
    (tmp_path / "another_pipeline.py").write_text(
        "from awlineage import DBObject, persistent\n"
        "class CameraFrame(DBObject):\n"
        "    filter = persistent('Filter', str, '')\n"
    )
    script = (
        "import another_pipeline\n"
        "from tests.persistence.models import CameraFrame\n"
        "from awlineage.persistence import class_by_name, qualified_name\n"
        "from awlineage.errors import AmbiguousClassError\n"
        "assert qualified_name(another_pipeline.CameraFrame) == 'another_pipeline.CameraFrame'\n"
        "assert class_by_name('tests.CameraFrame') is CameraFrame\n"
        "try:\n"
        "    class_by_name('CameraFrame')\n"
        "except AmbiguousClassError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}"))
    assert result.returncode == 0, result.stderr
    assert ("'CameraFrame' is ambiguous: it may mean another_pipeline.CameraFrame or "
            "tests.CameraFrame") in result.stdout


def test_a_class_name_another_module_of_the_namespace_defined_is_refused(tmp_path) -> None:
    (tmp_path / "tests_twin.py").write_text(
        "from awlineage import DBObject, persistent\n"
        "class CameraFrame(DBObject):\n"
        "    __namespace__ = 'tests'\n"
        "    filter = persistent('Filter', str, '')\n"
    )
    script = "import tests.persistence.models\nimport tests_twin\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}"))
    assert result.returncode != 0
    assert ("CameraFrame in module tests_twin: a persistent class tests.CameraFrame is already "
            "defined in tests.persistence.models") in result.stderr
