"""What may be stored, and what stays as it was stored: non-finite floats, unstorable text and
out-of-range datetimes are refused; list attributes are checked on every change and read-only
once committed; committed objects refuse deletion and stray attributes."""

from __future__ import annotations

import datetime
import math

import pytest
import sqlalchemy as sa

from awlineage import (
    DBObject,
    ImmutableObjectError,
    PersistentTypeError,
    PersistentValueError,
    persistent,
    select,
)
from tests.persistence.models import CameraFrame, Instrument, utc

PLUS5 = datetime.timezone(datetime.timedelta(hours=5))


class DatedNights(DBObject):
    nights = persistent("Nights observed, UTC", datetime.datetime, [])


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 10**400])
def test_non_finite_float_is_refused_naming_class_and_attribute(value: float) -> None:
    with pytest.raises(PersistentValueError, match=r"CameraFrame\.exptime: .*finite|"
                                                   r"CameraFrame\.exptime: .*range"):
        CameraFrame(exptime=value)
    with pytest.raises(PersistentValueError, match=r"CameraFrame\.gains\[1\]"):
        CameraFrame(gains=[1.0, value])


def test_query_with_a_non_finite_float_is_a_clear_error() -> None:
    with pytest.raises(PersistentValueError, match=r"CameraFrame\.exptime: nan refused"):
        CameraFrame.exptime != math.nan  # noqa: B015
    with pytest.raises(PersistentValueError, match=r"CameraFrame\.gains\[0\]: inf refused"):
        CameraFrame.gains.contains(math.inf)


def test_negative_zero_in_a_float_list_is_stored_as_zero() -> None:
    gains = CameraFrame(gains=[-0.0]).gains
    assert math.copysign(1.0, gains[0]) == 1.0


def test_negative_zero_is_stored_as_zero_and_read_back_so_everywhere(db, reconnect) -> None:
    frame = CameraFrame(exptime=-0.0)
    assert math.copysign(1.0, frame.exptime) == 1.0  # SQLite would drop the sign anyway
    frame.commit()
    (read,) = reconnect().get_many([frame.object_id]).values()
    assert read.exptime == 0.0 and math.copysign(1.0, read.exptime) == 1.0


@pytest.mark.parametrize("text, what", [("a\x00b", "NUL"), ("a\ud800", "lone surrogates")])
def test_text_no_database_can_hold_is_refused(text: str, what: str) -> None:
    with pytest.raises(PersistentValueError, match=rf"CameraFrame\.chip: .*{what}"):
        CameraFrame(chip=text)
    with pytest.raises(PersistentValueError, match=rf"CameraFrame\.keywords\[0\]: .*{what}"):
        CameraFrame(keywords=[text])
    with pytest.raises(PersistentValueError, match=rf"CameraFrame\.chip: .*{what}"):
        CameraFrame.chip == text  # noqa: B015


def test_datetime_whose_utc_time_is_out_of_range_is_refused() -> None:
    early = datetime.datetime(1, 1, 1, tzinfo=PLUS5)
    with pytest.raises(PersistentValueError, match=r"CameraFrame\.obs_date: 0001-01-01T00:00"
                                                   r":00\+05:00 is outside the storable range"):
        CameraFrame(obs_date=early)
    with pytest.raises(PersistentValueError, match=r"CameraFrame\.obs_date"):
        CameraFrame.obs_date < early  # noqa: B015
    assert CameraFrame(obs_date=datetime.datetime(1, 1, 1, 5, tzinfo=PLUS5)).obs_date == \
        utc(1, 1, 1)


def test_early_dates_in_a_list_read_back_in_another_session(db, reconnect) -> None:
    frame = CameraFrame(keywords=["early"])
    frame.commit()
    other = reconnect()
    assert other.get(frame.object_id).keywords == ["early"]
    dated = DatedNights(nights=[utc(999, 5, 1), utc(1, 1, 1)])
    dated.commit()
    assert reconnect().get(dated.object_id).nights == [utc(999, 5, 1), utc(1, 1, 1)]


def test_unpadded_years_written_by_earlier_versions_still_read(db, reconnect) -> None:
    dated = DatedNights(nights=[utc(2020, 1, 1)])
    dated.commit()
    table = db.tables_for(DatedNights).table
    text = '["999-05-01T00:00:00.000000+00:00"]'
    with db.engine.begin() as conn:
        stored = sa.cast(text, table.c.nights.type.load_dialect_impl(db.engine.dialect))
        conn.execute(sa.update(table).values(nights=stored))
    assert [o.nights for o in select(DatedNights, database=reconnect()).all()] == \
        [[utc(999, 5, 1)]]


def test_append_to_a_new_object_list_is_checked_like_assignment() -> None:
    frame = CameraFrame(keywords=["a"])
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.keywords\[1\] expects str"):
        frame.keywords.append(7)
    with pytest.raises(PersistentValueError, match=r"CameraFrame\.keywords\[2\]: .*NUL"):
        frame.keywords.extend(["b", "\x00"])
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.keywords\[0\] expects str"):
        frame.keywords[0] = b"x"
    assert frame.keywords == ["a"]
    frame.keywords += ["b"]
    frame.keywords.insert(0, "z")
    assert frame.keywords == ["z", "a", "b"]


def test_append_to_a_link_list_refuses_what_is_not_an_object() -> None:
    frame = CameraFrame()
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.overlaps\[0\] links to "
                                                  r"DBObject, got str"):
        frame.overlaps.append("frame-7")
    frame.overlaps.append(Instrument())
    assert len(frame.overlaps) == 1


def test_lists_of_a_committed_object_cannot_change(db) -> None:
    frame = CameraFrame(keywords=["a"], overlaps=[Instrument()])
    frame.commit()
    with pytest.raises(ImmutableObjectError, match=r"CameraFrame\.keywords belongs to a "
                                                   r"committed object"):
        frame.keywords.append("b")
    with pytest.raises(ImmutableObjectError, match=r"CameraFrame\.overlaps"):
        frame.overlaps.clear()
    assert frame.keywords == ["a"] and len(frame.overlaps) == 1


def test_lists_read_from_the_database_cannot_change(db, reconnect) -> None:
    frame = CameraFrame(keywords=["a"], overlaps=[Instrument()])
    frame.commit()
    loaded = reconnect().get(frame.object_id)
    for change in (lambda: loaded.keywords.append("b"), lambda: loaded.keywords.sort(),
                   lambda: loaded.keywords.__setitem__(0, "b"),
                   lambda: loaded.overlaps.pop()):
        with pytest.raises(ImmutableObjectError, match=r"CameraFrame\.(keywords|overlaps)"):
            change()
    assert loaded.keywords == ["a"] and len(loaded.overlaps) == 1
    copy = list(loaded.keywords)
    copy.append("b")
    assert copy == ["a", "b"]


def test_deleting_an_attribute_of_a_committed_object_is_refused(db) -> None:
    frame = CameraFrame(chip="ccd50")
    frame.commit()
    with pytest.raises(ImmutableObjectError, match="committed and immutable; its attribute "
                                                   "chip cannot be deleted"):
        del frame.chip
    assert frame.chip == "ccd50"


def test_deleting_a_persistent_attribute_of_a_new_object_is_refused() -> None:
    with pytest.raises(ImmutableObjectError, match=r"CameraFrame\.chip is persistent"):
        del CameraFrame().chip


def test_committed_object_refuses_attributes_that_are_not_persistent(db) -> None:
    frame = CameraFrame()
    frame.note = "scratch"  # allowed before commit: the object is the script's to shape
    frame.commit()
    with pytest.raises(ImmutableObjectError, match="cannot set attribute 'label'"):
        frame.label = "x"
    with pytest.raises(ImmutableObjectError, match="cannot delete attribute 'note'"):
        del frame.note


class IndexedLabel(DBObject):
    label = persistent("Indexed text", str, None, index=True)
    payload = persistent("Indexed bytes", bytes, None, index=True)
    note = persistent("Text without an index", str, None)


class NamedByLabel(DBObject):
    identity = ("label",)
    label = persistent("Identity text", str, None)


def random_text(size: int) -> str:
    # incompressible, as PostgreSQL would otherwise fit more in an index entry
    import random
    import string

    rng = random.Random(size)
    return "".join(rng.choice(string.ascii_letters) for _ in range(size))


def test_an_indexed_value_too_long_for_an_index_is_refused_on_both(db) -> None:
    longest = random_text(2000)
    IndexedLabel(label=longest, payload=longest.encode(), note=random_text(10000)).commit()
    assert select(IndexedLabel.label == longest).count() == 1
    with pytest.raises(PersistentValueError, match=r"IndexedLabel\.label: a value of 2,001 "
                                                   r"bytes .*at most 2,000 bytes"):
        IndexedLabel(label=longest + "a")
    with pytest.raises(PersistentValueError, match=r"IndexedLabel\.label: a value of 2,002"):
        IndexedLabel(label=longest[:-1] + "éa")  # counted in UTF-8 bytes
    with pytest.raises(PersistentValueError, match=r"IndexedLabel\.payload: a value of 2,001"):
        IndexedLabel().payload = longest.encode() + b"a"
    with pytest.raises(PersistentValueError, match=r"NamedByLabel\.identity \(label\): a value "
                                                   r"of 5,004 bytes"):
        NamedByLabel(label=random_text(5000)).commit()
    assert select(NamedByLabel).count() == 0


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata"])
def test_the_pgtz_variable_leaves_sessions_in_utc(db, reconnect, monkeypatch, zone) -> None:
    # libpq sends PGTZ at connecting; the ends of the datetime range would leave it
    monkeypatch.setenv("PGTZ", zone)
    ends = [utc(1, 1, 1), utc(9999, 12, 31, 23, 59, 59, 999999)]
    other = reconnect()
    other.commit([CameraFrame(chip=f"c{i}", obs_date=when) for i, when in enumerate(ends)])
    assert [f.obs_date for f in select(CameraFrame).order_by("obs_date")] == ends
    assert select(CameraFrame.obs_date < utc(1, 1, 2)).count() == 1
    reconnect()  # the connected database: new connections, reading what they did not write
    assert [f.obs_date for f in select(CameraFrame).order_by("-obs_date")] == ends[::-1]


def test_a_query_may_compare_an_indexed_attribute_with_a_long_value(db) -> None:
    IndexedLabel(label="short").commit()
    assert select(IndexedLabel.label == random_text(5000)).count() == 0
    assert select(IndexedLabel.label < "z" + random_text(5000)).count() == 1
