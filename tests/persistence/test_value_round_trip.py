"""Every value that commits reads back unchanged in another session, on both databases; every
value that could not is refused when it is assigned (or appended), naming class and attribute.
A hypothesis property test over the whole range of every descriptor type and list."""

from __future__ import annotations

import datetime
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awlineage import (
    Database,
    DBObject,
    PersistentTypeError,
    PersistentValueError,
    connect,
    persistent,
    select,
)
from awlineage.persistence import set_current_store

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UTC = datetime.UTC


class EveryValue(DBObject):
    """One attribute of every descriptor type, and a list of every list element type."""

    i = persistent("An integer", int, None)
    f = persistent("A float", float, None)
    s = persistent("A string", str, None)
    b = persistent("A boolean", bool, None)
    d = persistent("A datetime", datetime.datetime, None)
    y = persistent("Some bytes", bytes, None)
    il = persistent("Integers", int, [])
    fl = persistent("Floats", float, [])
    sl = persistent("Strings", str, [])
    bl = persistent("Booleans", bool, [])
    dl = persistent("Datetimes", datetime.datetime, [])


# -- what may be stored -----------------------------------------------------------------------
def _utc(value: datetime.datetime) -> datetime.datetime | None:
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return None


def storable(value: Any, as_float: bool) -> bool:
    """The oracle: the one documented rule per type (`as_float`: for a float attribute)."""
    if isinstance(value, bool):
        return True
    if as_float:
        return abs(value) <= 1e308 if isinstance(value, int) else math.isfinite(value)
    if isinstance(value, int):
        return INT64_MIN <= value <= INT64_MAX
    if isinstance(value, str):
        return "\x00" not in value and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, datetime.datetime):
        return _utc(value) is not None
    return True


# -- strategies -------------------------------------------------------------------------------
offsets = st.builds(
    datetime.timezone,
    st.timedeltas(min_value=datetime.timedelta(hours=-23, minutes=-59, seconds=-59),
                  max_value=datetime.timedelta(hours=23, minutes=59, seconds=59)),
)
INTS = st.one_of(st.integers(INT64_MIN, INT64_MAX),
                 st.sampled_from([INT64_MIN, INT64_MAX, INT64_MIN - 1, INT64_MAX + 1, 2**70]))
FLOATS = st.one_of(st.floats(), st.sampled_from([10**400, -(10**309), 2**70]))
TEXTS = st.one_of(
    st.text(max_size=12),  # any code point but surrogates, NUL included
    st.text(st.sampled_from(["a", "\u00e9", "\U0001f52d", "\x00", "\ud800", "\udfff"]),
            max_size=6),
)
DATETIMES = st.one_of(
    st.datetimes(datetime.datetime.min, datetime.datetime.max, timezones=offsets),
    st.sampled_from([
        datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=5))),
        datetime.datetime(1, 1, 1, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=5))),
        datetime.datetime(9999, 12, 31, 23, tzinfo=datetime.timezone(
            datetime.timedelta(hours=-2))),
        datetime.datetime(999, 5, 1, 12, 30, tzinfo=UTC),
    ]),
)
SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "i": INTS, "f": FLOATS, "s": TEXTS, "b": st.booleans(), "d": DATETIMES, "y": st.binary(),
}
LISTS: dict[str, st.SearchStrategy[Any]] = {
    "il": INTS, "fl": FLOATS, "sl": TEXTS, "bl": st.booleans(), "dl": DATETIMES,
}
RECORDS = st.fixed_dictionaries({
    **{name: st.none() | values for name, values in SCALARS.items()},
    **{name: st.lists(values, max_size=4) for name, values in LISTS.items()},
})


def _refusal_names(error: Exception, where: str) -> None:
    assert isinstance(error, PersistentValueError | PersistentTypeError)
    assert where in str(error), (where, str(error))


def build(record: dict[str, Any]) -> tuple[EveryValue, dict[str, Any]]:
    """An object with every storable value of `record` assigned (lists by append); each
    refusal is checked to name its attribute and to concern an unstorable value."""
    obj = EveryValue()
    given_values: dict[str, Any] = {}
    for name in SCALARS:
        value = record[name]
        ok = value is None or storable(value, as_float=name == "f")
        try:
            setattr(obj, name, value)
        except (PersistentValueError, PersistentTypeError) as error:
            assert not ok, f"{name}={value!r} refused: {error}"
            _refusal_names(error, f"EveryValue.{name}")
        else:
            assert ok, f"{name}={value!r} accepted"
            given_values[name] = value
    for name in LISTS:
        accepted = []
        target = getattr(obj, name)
        for value in record[name]:
            ok = storable(value, as_float=name == "fl")
            try:
                target.append(value)
            except (PersistentValueError, PersistentTypeError) as error:
                assert not ok, f"{name} append {value!r} refused: {error}"
                _refusal_names(error, f"EveryValue.{name}[{len(accepted)}]")
            else:
                assert ok, f"{name} append {value!r} accepted"
                accepted.append(value)
        given_values[name] = accepted
    return obj, given_values


def same(stored: Any, read: Any) -> bool:
    """Equal, of the same type, and for floats of the same sign (0.0 vs -0.0)."""
    if isinstance(stored, list):
        return (isinstance(read, list) and len(stored) == len(read)
                and all(same(a, b) for a, b in zip(stored, read, strict=True)))
    if type(stored) is not type(read) or stored != read:
        return False
    if isinstance(stored, float):
        return math.copysign(1.0, stored) == math.copysign(1.0, read)
    if isinstance(stored, datetime.datetime):
        return read.utcoffset() == datetime.timedelta(0)
    return True


def means(given_value: Any, stored: Any) -> bool:
    """The stored value is the given one, normalised (floats, UTC datetimes)."""
    if isinstance(given_value, list):
        return len(given_value) == len(stored) and all(
            means(a, b) for a, b in zip(given_value, stored, strict=True))
    return given_value == stored


@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(records=st.lists(RECORDS, min_size=1, max_size=4))
def test_every_committed_value_reads_back_unchanged_elsewhere(db, records) -> None:
    built = [build(record) for record in records]
    objects = [obj for obj, _ in built]
    db.commit(objects)
    # another session, as a later process would open: new engine, empty identity map
    fresh_session = connect(db.url.render_as_string(hide_password=False), schema=db.schema)
    try:
        _check_read_back(fresh_session, built)
    finally:
        fresh_session.close()
        set_current_store(db)


def _check_read_back(fresh_session: Database, built: list[tuple[EveryValue, dict[str, Any]]]
                     ) -> None:
    objects = [obj for obj, _ in built]
    read = fresh_session.get_many([o.object_id for o in objects])
    for obj, given_values in built:
        copy = read[obj.object_id]
        assert copy is not obj
        for name, given_value in given_values.items():
            stored = getattr(obj, name)
            assert means(given_value, stored), (name, given_value, stored)
            assert same(stored, getattr(copy, name)), (name, stored, getattr(copy, name))
    # one object of any content must not break reading its whole class
    everything = select(EveryValue, database=fresh_session).all()
    assert {o.object_id for o in objects} <= {o.object_id for o in everything}
