"""select(): operators, link paths, lists, ordering and paging, and text queries giving the
same answers as expressions, on both backends."""

from __future__ import annotations

import datetime

import pytest
import sqlalchemy as sa

from awlineage import (
    DBObject,
    ObjectNotFoundError,
    QueryError,
    UnknownAttributeError,
    UnknownClassError,
    commit,
    persistent,
    select,
)
from tests.persistence.models import (
    CameraFrame,
    DomeFlatImage,
    FlatfieldImage,
    Instrument,
    Site,
    TwilightFlatImage,
    utc,
)

INJECTION = "x'; DROP TABLE cameraframe; --"


class IndexedReading(DBObject):
    """A reading whose temperature has an index, for the order's query plan."""

    kelvin = persistent("Temperature in kelvin", float, 0.0, index=True)


class ListsOfEveryType(DBObject):
    """One list attribute per element type a list may hold."""

    number = persistent("Which object", int, 0)
    ints = persistent("Integers", int, [])
    floats = persistent("Floats", float, [])
    strs = persistent("Strings", str, [])
    bools = persistent("Booleans", bool, [])
    dates = persistent("Times, UTC", datetime.datetime, [])


@pytest.fixture
def frames(db):
    """Six frames on two instruments at two sites, linked into a chain."""
    paranal = Site(name="Paranal", altitude=2635.0)
    lasilla = Site(name="La Silla", altitude=2400.0)
    wfi = Instrument(name="WFI", site=lasilla)
    omegacam = Instrument(name="OmegaCAM", site=paranal)
    made: list[CameraFrame] = []
    specs = [
        ("ccd50", 30.0, 1, wfi, ["OBJECT", "FILTER", "abc"], [2.0, 2.1]),
        ("ccd50", 5.0, 2, wfi, ["OBJECT"], [1.9]),
        ("ccd51", 120.0, 3, omegacam, ["A", "B", "abc"], []),
        ("ccd51", 0.0, 1, omegacam, [], [2.5]),
        ("ccd52", 60.0, 5, None, ["X", "Y", "Z"], [3.0]),
        (INJECTION, 10.0, 1, wfi, [INJECTION], []),
    ]
    for i, (chip, exptime, nexp, inst, keywords, gains) in enumerate(specs):
        made.append(CameraFrame(chip=chip, exptime=exptime, nexp=nexp, instrument=inst,
                             keywords=keywords, gains=gains, obs_date=utc(2024, 1, 1 + i),
                             is_science=exptime > 0,
                             previous=made[-1] if made else None,
                             overlaps=made[-2:]))
    commit(made)
    return made


def chips(query) -> list[str]:
    return [f.chip for f in query]


def exptimes(query) -> list[float]:
    return sorted(f.exptime for f in query)


def test_comparison_operators(frames) -> None:
    assert exptimes(select(CameraFrame.exptime > 10)) == [30.0, 60.0, 120.0]
    assert exptimes(select(CameraFrame.exptime >= 30)) == [30.0, 60.0, 120.0]
    assert exptimes(select(CameraFrame.exptime < 10)) == [0.0, 5.0]
    assert exptimes(select(CameraFrame.exptime <= 10)) == [0.0, 5.0, 10.0]
    assert exptimes(select(CameraFrame.exptime == 60)) == [60.0]
    assert len(select(CameraFrame.exptime != 60)) == 5
    assert exptimes(select(CameraFrame.obs_date >= utc(2024, 1, 5))) == [10.0, 60.0]
    assert exptimes(select(CameraFrame.is_science == False)) == [0.0]  # noqa: E712


def test_like_in_and_null(frames) -> None:
    assert sorted(chips(select(CameraFrame.chip.like("ccd5_")))) == ["ccd50"] * 2 + [
        "ccd51"] * 2 + ["ccd52"]
    assert exptimes(select(CameraFrame.nexp.in_([2, 3]))) == [5.0, 120.0]
    assert exptimes(select(CameraFrame.instrument == None)) == [60.0]  # noqa: E711
    assert len(select(CameraFrame.instrument != None)) == 5  # noqa: E711
    assert exptimes(select(CameraFrame.previous == None)) == [30.0]  # noqa: E711


def test_and_or_not_combine(frames) -> None:
    both = select((CameraFrame.exptime > 10) & (CameraFrame.chip == "ccd51"))
    assert exptimes(both) == [120.0]
    either = select((CameraFrame.exptime > 100) | (CameraFrame.nexp == 5))
    assert exptimes(either) == [60.0, 120.0]
    negated = select(~(CameraFrame.instrument.name == "WFI"))
    assert exptimes(negated) == [0.0, 60.0, 120.0]


def test_link_paths_of_any_depth(frames) -> None:
    assert exptimes(select(CameraFrame.instrument.name == "WFI")) == [5.0, 10.0, 30.0]
    assert exptimes(select(CameraFrame.instrument.site.altitude > 2500)) == [0.0, 120.0]
    deep = select(CameraFrame.previous.previous.instrument.site.name == "La Silla")
    assert exptimes(deep) == [0.0, 120.0]


def test_descriptor_list_index_and_membership(frames) -> None:
    assert exptimes(select(CameraFrame.keywords[2] == "abc")) == [30.0, 120.0]
    assert exptimes(select(CameraFrame.keywords[0] == "OBJECT")) == [5.0, 30.0]
    assert exptimes(select(CameraFrame.keywords[-1] == "Z")) == [60.0]
    assert exptimes(select(CameraFrame.keywords.contains("abc"))) == [30.0, 120.0]
    assert exptimes(select(CameraFrame.gains.contains(2.5))) == [0.0]
    assert exptimes(select(CameraFrame.gains[0] > 2.4)) == [0.0, 60.0]


def test_link_list_matches_when_any_element_matches(frames) -> None:
    assert exptimes(select(CameraFrame.overlaps.chip == "ccd50")) == [0.0, 5.0, 120.0]
    assert exptimes(select(CameraFrame.overlaps.contains(frames[0]))) == [5.0, 120.0]


def test_seed_example_with_the_parentheses_python_needs(frames) -> None:
    query = select((CameraFrame.exptime > 2.0) & (CameraFrame.keywords[2] == "abc")
                   & (CameraFrame.instrument.site.altitude == 2400.0))
    assert exptimes(query) == [30.0]


def test_forgetting_parentheses_is_explained(frames) -> None:
    with pytest.raises(QueryError, match=r"parenthes|bind tighter"):
        select(CameraFrame.exptime > 2.0 & CameraFrame.chip == "ccd50")
    with pytest.raises(QueryError, match="no truth value"):
        select(1 < CameraFrame.exptime < 5)


def test_an_attribute_alone_is_told_to_be_a_condition(frames) -> None:
    with pytest.raises(UnknownClassError, match=r"CameraFrame\.is_science is an attribute of "
                                                r"CameraFrame, not a class: .* == true"):
        select("CameraFrame.is_science")
    with pytest.raises(UnknownClassError, match=r"'CameraFrame\.chp': neither"):
        select("CameraFrame.chp")  # no attribute of that name: no hint
    deep = ".".join(["a"] * 5000)  # one lookup of its owner, not one per dot (the fuzz test)
    with pytest.raises(UnknownClassError, match="neither this process"):
        select(deep)


def test_order_limit_offset_count_first_exists(frames) -> None:
    by_time = select(CameraFrame.exptime > 0).order_by(CameraFrame.exptime.desc())
    assert [f.exptime for f in by_time] == [120.0, 60.0, 30.0, 10.0, 5.0]
    assert [f.exptime for f in by_time.limit(2)] == [120.0, 60.0]
    assert [f.exptime for f in by_time.offset(1).limit(2)] == [60.0, 30.0]
    assert [f.exptime for f in select(CameraFrame).order_by("-nexp", "exptime")][:2] == [60.0,
                                                                                       120.0]
    assert by_time.count() == 5 and len(by_time.limit(3)) == 3
    assert by_time.first().exptime == 120.0
    assert select(CameraFrame.chip == "nope").first() is None
    assert select(CameraFrame.chip == "ccd52").exists()
    assert not select(CameraFrame.chip == "nope").exists()


def test_ascending_order_walks_the_attribute_index(db) -> None:
    """Missing values go last without sorting the table: the plan reads the index in order."""
    commit([IndexedReading(kelvin=float(k)) for k in range(300, 100, -1)]
           + [IndexedReading(kelvin=None)])
    seen: list[tuple[str, object]] = []

    def remember(conn, cursor, statement, parameters, context, executemany) -> None:
        if "ORDER BY" in statement:
            seen.append((statement, parameters))

    sa.event.listen(db.engine, "before_cursor_execute", remember)
    try:
        coldest = select(IndexedReading).order_by("kelvin").limit(3).all()
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", remember)
    assert [r.kelvin for r in coldest] == [101.0, 102.0, 103.0]
    statement, parameters = seen[-1]
    with db.engine.connect() as conn:
        if db.engine.dialect.name == "sqlite":
            plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
        else:  # a table this small is cheaper to sort: ask for the plan without that choice
            conn.exec_driver_sql("SET enable_seqscan = off")
            conn.exec_driver_sql("SET enable_sort = off")
            plan = conn.exec_driver_sql(f"EXPLAIN {statement}", parameters).all()
    text = " ".join(str(row[-1]) for row in plan)
    assert "kelvin" in text and "INDEX" in text.upper(), text
    # Only ties (by object id) may be sorted after the index's order, not the whole table.
    assert "TEMP B-TREE FOR ORDER BY" not in text, text
    assert "Sort" not in text or "Presorted Key: kelvin" in text, text


def test_one_is_the_only_match_and_names_none_or_many(frames) -> None:
    assert select(CameraFrame.exptime == 120.0).one().exptime == 120.0
    with pytest.raises(ObjectNotFoundError, match=r"no stored object matches select\(Camera"):
        select(CameraFrame.chip == "nope").one()
    with pytest.raises(QueryError, match=r"matches more than one object: take first\(\)"):
        select(CameraFrame.exptime > 0).one()


def test_results_support_len_index_and_slices(frames) -> None:
    query = select(CameraFrame)
    assert len(query) == 6
    assert query[0] is frames[0] and query[5] is frames[5] and query[-1] is frames[5]
    assert [f.chip for f in query[1:3]] == [frames[1].chip, frames[2].chip]
    with pytest.raises(IndexError):
        query[6]


def test_slices_count_from_the_end_as_a_list_s_do(frames) -> None:
    query, chips = select(CameraFrame), [f.chip for f in frames]
    for part in (slice(-2, None), slice(1, -1), slice(-10, 2), slice(-3, -1), slice(None, -4),
                 slice(-1, -3)):
        assert [f.chip for f in query[part]] == chips[part], part
    assert [f.chip for f in query.offset(1).limit(3)[-2:]] == chips[1:4][-2:]
    with pytest.raises(QueryError, match="no step"):
        query[::2]


def test_where_refines_a_query_as_filter_does(frames) -> None:
    by_where = select(CameraFrame).where(CameraFrame.nexp > 1).where(CameraFrame.nexp < 4)
    by_filter = select(CameraFrame).filter(CameraFrame.nexp > 1).filter(CameraFrame.nexp < 4)
    assert exptimes(by_where) == exptimes(by_filter) != []
    with pytest.raises(QueryError, match=r"must be an expression, got str"):
        select(CameraFrame).where("CameraFrame.nexp > 1")


def test_a_sliced_query_is_not_narrowed_or_reordered(frames) -> None:
    ordered = select(CameraFrame).order_by("exptime")
    for sliced in (ordered[:2], ordered[-3:], ordered.limit(2), ordered.offset(1)):
        for later in (lambda q: q.filter(CameraFrame.nexp > 1),
                      lambda q: q.where(CameraFrame.nexp > 1),
                      lambda q: q.order_by("-exptime"), lambda q: q.newest()):
            with pytest.raises(QueryError, match=r"after a slice, limit\(\) or offset\(\) "
                                                 r"would apply before them"):
                later(sliced)
    narrowed = ordered.filter(CameraFrame.nexp > 1)
    assert exptimes(narrowed[:2]) == exptimes(narrowed)[:2] != []


def test_a_date_beyond_year_9999_is_named_with_its_position(frames) -> None:
    with pytest.raises(QueryError, match=r"year 10000 is out of range \(1 to 9999\) "
                                         r"\(line 1, column 24\)"):
        select("CameraFrame.obs_date < 10000-01-01")
    assert select("CameraFrame.obs_date < 9999-12-31").count() == 6


def test_results_iterate_lazily_in_batches(db, monkeypatch) -> None:
    from awlineage.query import _select

    monkeypatch.setattr(_select, "BATCH_SIZE", 7)
    commit([CameraFrame(nexp=i) for i in range(30)])
    iterator = iter(select(CameraFrame))
    first = next(iterator)
    assert first.nexp == 0
    assert [f.nexp for f in iterator] == list(range(1, 30))


def test_string_values_are_bound_not_spliced(frames) -> None:
    assert exptimes(select(CameraFrame.chip == INJECTION)) == [10.0]
    assert exptimes(select(f"CameraFrame.chip == \"{INJECTION}\"")) == [10.0]
    assert exptimes(select(CameraFrame.keywords.contains(INJECTION))) == [10.0]
    assert len(select(CameraFrame)) == 6


def test_link_through_base_type_resolves_subclass_attribute(frames) -> None:
    with pytest.raises(UnknownAttributeError, match="DBObject has no persistent attribute"):
        select(CameraFrame.overlaps.no_such_attribute == 1)


def test_polymorphic_query_filters_inherited_attributes(db) -> None:
    commit([FlatfieldImage(filter="r", level=1.0), DomeFlatImage(filter="r", level=2.0),
            TwilightFlatImage(filter="g", level=3.0)])
    levels = [f.level for f in select(FlatfieldImage.level > 0).order_by("level")]
    assert levels == [1.0, 2.0, 3.0]
    assert [type(f).__name__ for f in select(FlatfieldImage.filter == "r").order_by("level")] \
        == ["FlatfieldImage", "DomeFlatImage"]
    assert select(DomeFlatImage.lamp == "").count() == 1


PAIRS = [
    (lambda: CameraFrame.exptime > 10, "CameraFrame.exptime > 10"),
    (lambda: (CameraFrame.exptime > 10) & (CameraFrame.instrument.name == "WFI"),
     "CameraFrame.exptime > 10 and CameraFrame.instrument.name == 'WFI'"),
    (lambda: (CameraFrame.nexp == 1) | ~(CameraFrame.chip.like("ccd%")),
     "CameraFrame.nexp = 1 || not CameraFrame.chip like 'ccd%'"),
    (lambda: CameraFrame.keywords[2] == "abc", "CameraFrame.keywords[2] == \"abc\""),
    (lambda: CameraFrame.keywords.contains("OBJECT"), "CameraFrame.keywords contains 'OBJECT'"),
    (lambda: CameraFrame.overlaps.chip == "ccd50", "CameraFrame.overlaps.chip == 'ccd50'"),
    (lambda: CameraFrame.obs_date < utc(2024, 1, 3), "CameraFrame.obs_date < 2024-01-03"),
    (lambda: CameraFrame.obs_date == utc(2024, 1, 2),
     "CameraFrame.obs_date == 2024-01-02T00:00:00Z"),
    (lambda: CameraFrame.nexp.in_([2, 5]), "CameraFrame.nexp in (2, 5)"),
    (lambda: CameraFrame.instrument == None, "CameraFrame.instrument == None"),  # noqa: E711
    (lambda: CameraFrame.is_science == True, "CameraFrame.is_science == true"),  # noqa: E712
    (lambda: CameraFrame.instrument.site.altitude >= 2635.0,
     "(CameraFrame.instrument.site.altitude >= 2.635e3)"),
    (lambda: (CameraFrame.exptime > 2.0) & (CameraFrame.keywords[2] == "abc")
     & (CameraFrame.instrument.site.altitude == 2400.0),
     "CameraFrame.exptime > 2.0 && CameraFrame.keywords[2] = 'abc' and "
     "CameraFrame.instrument.site.altitude = 2400.0"),
]


def test_text_and_expression_forms_give_the_same_objects(frames) -> None:
    for build, text in PAIRS:
        expected = {f.object_id for f in select(build())}
        got = {f.object_id for f in select(text)}
        assert got == expected, text
    assert any(len(select(build())) for build, _ in PAIRS)


def test_text_with_bare_attributes_reads_them_on_the_given_class(frames) -> None:
    query = select("chip == 'ccd50' and instrument.name == 'WFI'", CameraFrame)
    assert exptimes(query) == [5.0, 30.0]


def test_a_class_name_alone_selects_every_object_of_the_class(frames) -> None:
    every = {f.object_id for f in select(CameraFrame)}
    assert {f.object_id for f in select("CameraFrame")} == every and len(every) == 6
    assert {f.object_id for f in select(" tests.CameraFrame ")} == every
    assert {i.name for i in select("Instrument")} == {"WFI", "OmegaCAM"}
    with pytest.raises(UnknownClassError, match="unknown persistent class 'CameraFrames'"):
        select("CameraFrames")


def test_a_path_through_a_link_to_any_persistent_class_reaches_every_class(db) -> None:
    site = Site(name="La Silla")
    target = CameraFrame(chip="t")
    commit([CameraFrame(chip="holder", overlaps=[target, Instrument(name="WFI", site=site)])])
    assert select(CameraFrame.overlaps.object_id == target.object_id).count() == 1
    assert select(CameraFrame.overlaps.name == "WFI").count() == 1
    assert select(CameraFrame.overlaps.site.name == "La Silla").count() == 1


def test_missing_values_sort_last_both_ways_on_every_database(db) -> None:
    import datetime

    day = datetime.datetime(2026, 11, 30, tzinfo=datetime.UTC)
    commit([CameraFrame(chip="bright", exptime=100.0, obs_date=day),
            CameraFrame(chip="unmeasured", exptime=None, obs_date=None),
            CameraFrame(chip="tiny", exptime=5e-324, obs_date=day - datetime.timedelta(1))])
    assert [f.chip for f in select(CameraFrame).order_by("-exptime")] == \
        ["bright", "tiny", "unmeasured"]
    assert [f.chip for f in select(CameraFrame).order_by("exptime")] == \
        ["tiny", "bright", "unmeasured"]
    assert select(CameraFrame).order_by("obs_date").first().chip == "tiny"
    assert select(CameraFrame).order_by("-obs_date").first().chip == "bright"
    assert select("CameraFrame").order_by("-chip")[-1].chip == "bright"  # text: no None


def test_get_reads_an_id_given_as_text_and_refuses_what_no_id_can_be(db) -> None:
    import numpy as np

    from awlineage import get

    frame = CameraFrame(chip="by id")
    frame.commit()
    assert get(str(frame.object_id)) is frame  # read back from a file or a command
    assert get(f" {frame.object_id}\n") is frame
    assert get(np.int64(frame.object_id)) is frame
    assert db.get_many([str(frame.object_id)]) == {frame.object_id: frame}
    with pytest.raises(ValueError, match="'abc' is not an object id"):
        get("abc")
    with pytest.raises(TypeError, match="an object id is an integer, got bool True"):
        get(True)
    with pytest.raises(TypeError, match=r"got float 1\.5"):
        get(1.5)
    for beyond in (2**63, -(2**63) - 1):  # the same answer on both databases
        with pytest.raises(ObjectNotFoundError, match="fit in 64 bits"):
            get(beyond)


MINUS5 = datetime.timezone(datetime.timedelta(hours=-5))
LIST_VALUES = {
    "ints": ([0, -1, 42, 2**63 - 1], ["0", "-1", "42", str(2**63 - 1)]),
    "floats": ([0.0, -2.25, 2.0, 1e300], ["0.0", "-2.25", "2.0", "1e300"]),
    "strs": (["", "a", "é", "x y"], ["''", "'a'", "'é'", "'x y'"]),
    "bools": ([True, False], ["true", "false"]),
    "dates": ([datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
               datetime.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=datetime.UTC),
               datetime.datetime(1, 1, 1, tzinfo=datetime.UTC)],
              ["2024-01-01", "2024-01-01T00:00:00.000001Z", "0001-01-01T00:00:00Z"]),
}


@pytest.mark.parametrize("name", list(LIST_VALUES))
def test_a_list_contains_each_element_type_as_python_says(db, name) -> None:
    values, texts = LIST_VALUES[name]
    # every object holds one value; the last one also holds the first (written in another
    # time zone for datetimes: the same instant)
    first = values[0].astimezone(MINUS5) if isinstance(values[0], datetime.datetime) else values[0]
    commit([ListsOfEveryType(number=i, **{name: [v] + ([first] if i == len(values) - 1 else [])})
            for i, v in enumerate(values)])
    attribute = getattr(ListsOfEveryType, name)
    for value, text in zip(values, texts, strict=True):
        expected = [i for i, v in enumerate(values) if v == value
                    or (value == values[0] and i == len(values) - 1)]
        numbers = sorted(o.number for o in select(attribute.contains(value)))
        assert numbers == expected, value
        numbers = sorted(o.number for o in select(f"ListsOfEveryType.{name} contains {text}"))
        assert numbers == expected, text
