"""Queries at the edges: `!=` and LIKE on list elements in text, link paths far longer than
SQLite's parser takes in one statement, very wide and deep conditions, and values no database
can compare. Each either answers correctly or fails with one of awlineage's errors naming the
limit or the value, on both backends."""

from __future__ import annotations

import contextlib
import datetime
import math

import pytest

from awlineage import (
    AwlError,
    DBObject,
    PersistentValueError,
    QueryError,
    QuerySyntaxError,
    UnknownAttributeError,
    commit,
    parse_query,
    select,
)
from awlineage.persistence._expressions import MAX_PATH_STEPS, MAX_PATTERN_CHARS
from awlineage.query._shape import MAX_NESTING, MAX_TEXT_NESTING, MAX_VALUES
from awlineage.query._text import MAX_TEXT_CHARS
from tests.persistence.models import CameraFrame, MasterBias, Site, utc

CHAIN = 40


@pytest.fixture
def chain(db) -> list[CameraFrame]:
    """Frames c0 <- c1 <- ... <- c39, each linking to the one before as `previous`."""
    made: list[CameraFrame] = []
    for i in range(CHAIN):
        made.append(CameraFrame(chip=f"c{i}", nexp=i % 3, keywords=["OBJECT" if i % 2 else "FLAT"],
                                is_science=bool(i % 2), previous=made[-1] if made else None,
                                overlaps=made[-1:]))
    commit(made)
    return made


def chips(query) -> list[str]:
    return sorted((f.chip for f in query), key=lambda c: int(c[1:]))


def test_not_equal_in_text_selects_every_other_value(chain) -> None:
    assert chips(select("CameraFrame.nexp != 0")) == chips(select(CameraFrame.nexp != 0))
    assert len(select("CameraFrame.nexp != 0")) == len([f for f in chain if f.nexp != 0])
    assert len(select("!CameraFrame.nexp == 0")) == len(select("CameraFrame.nexp!=0"))


def test_like_on_a_list_element_in_text_and_expressions(chain) -> None:
    odd = [f"c{i}" for i in range(1, CHAIN, 2)]
    assert chips(select("CameraFrame.keywords[0] like 'OB%'")) == odd
    assert chips(select(CameraFrame.keywords[0].like("OB%"))) == odd
    assert len(select("CameraFrame.keywords[-1] not like 'OB%'")) == CHAIN - len(odd)


@pytest.mark.parametrize("steps", [11, 17, 35])
def test_link_path_longer_than_sqlite_nests_selects_its_object(chain, steps) -> None:
    path = "CameraFrame." + ".".join(["previous"] * steps) + ".chip == 'c0'"
    assert chips(select(path)) == [f"c{steps}"]
    assert len(select("not " + path)) == CHAIN - 1


def test_link_list_path_of_thirty_steps_selects_its_object(chain) -> None:
    path = "CameraFrame." + ".".join(["overlaps"] * 30) + ".chip == 'c2'"
    assert chips(select(path)) == ["c32"]


def test_path_longer_than_the_limit_is_refused_naming_it(db) -> None:
    path = CameraFrame.previous
    with pytest.raises(QueryError, match=f"at most {MAX_PATH_STEPS} attributes"):
        for _ in range(MAX_PATH_STEPS):
            path = path.previous


def test_thousand_or_terms_run(chain) -> None:
    text = " or ".join(f"CameraFrame.chip == 'c{i}'" for i in range(1000))
    assert len(select(text)) == CHAIN
    assert len(select(" and ".join(f"CameraFrame.chip != 'x{i}'" for i in range(1000)))) \
        == CHAIN


def test_runs_of_one_operator_and_double_negation_do_not_count_as_nesting(chain) -> None:
    condition = CameraFrame.nexp == 1
    for i in range(300):
        condition = ~~(condition & (CameraFrame.chip != f"x{i}"))
    assert len(select(condition)) == len([f for f in chain if f.nexp == 1])


def test_nesting_deeper_than_the_limit_is_refused_naming_it(db) -> None:
    condition = CameraFrame.nexp == 1
    for i in range(MAX_NESTING + 1):
        other = CameraFrame.chip == f"c{i}"
        condition = (condition & other) if i % 2 else (condition | other)
    with pytest.raises(QueryError, match=f"nests {MAX_NESTING + 1} levels.*limit is "
                                         f"{MAX_NESTING}"):
        select(condition)


def test_text_nesting_deeper_than_the_limit_is_refused_naming_it(db) -> None:
    with pytest.raises(QueryError, match=f"limit is {MAX_TEXT_NESTING}"):
        select("not " * 500 + "CameraFrame.nexp == 1")


def test_too_many_values_are_refused_naming_the_limit(db) -> None:
    condition = CameraFrame.nexp.in_(range(4000))
    for _ in range(2):
        condition = condition | CameraFrame.nexp.in_(range(4000))
    with pytest.raises(QueryError, match=f"limit is {MAX_VALUES:,}"):
        select(condition)


def test_attribute_of_some_subclasses_selects_only_their_objects(chain, db) -> None:
    commit([MasterBias(chip="c5", obs_date=utc(2024, 1, 1)), Site(name="c5")])
    found = select("DBObject.chip == 'c5'").all()
    assert sorted(type(o).__name__ for o in found) == ["CameraFrame", "MasterBias"]
    assert len(select(DBObject, None).filter(CameraFrame.chip == "c5")) == 1


@pytest.mark.parametrize("text, error, message", [
    ("CameraFrame.exptime > " + "9" * 320, PersistentValueError, "range of a 64-bit float"),
    ("CameraFrame.exptime > " + "9" * 5000, QueryError, "5,000 characters; the limit is 400"),
    ("CameraFrame.obs_date > 0001-01-01T00:00+05:00", PersistentValueError, "outside the storable"),
    ("CameraFrame.obs_date < 9999-12-31T23:00-05:00", PersistentValueError, "outside the storable"),
    ("CameraFrame.is_science < true", QueryError, "only == and != compare it"),
    ("CameraFrame.chip == '\udcff'", PersistentValueError, "lone surrogate"),
    ("CameraFrame.keywords[99999999999] == 'a'", QueryError, "at most 2,147,483,647"),
    ("CameraFrame.chip like '" + "%a" * 10_000 + "'", QueryError,
     f"20,000 characters; the limit is {MAX_PATTERN_CHARS:,}"),
    ("CameraFrame.chip like '" + "%a" * 500_000 + "'", QueryError,
     f"1,000,0.. characters; the limit is {MAX_TEXT_CHARS:,}"),
])
def test_values_no_database_can_compare_are_refused(db, text, error, message) -> None:
    with pytest.raises(error, match=message):
        select(text).count()


def test_expression_api_refuses_what_the_text_refuses(db) -> None:
    with pytest.raises(PersistentValueError, match="range of a 64-bit float"):
        select(CameraFrame.exptime == 10**400)
    with pytest.raises(PersistentValueError, match="outside the storable range"):
        select(CameraFrame.obs_date > datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(
            datetime.timedelta(hours=5))))
    with pytest.raises(QueryError, match="takes a list of values"):
        CameraFrame.nexp.in_(3)
    with pytest.raises(QueryError, match="cannot combine"):
        5 & (CameraFrame.nexp == 1)


def test_a_long_query_error_shows_a_window_around_the_caret(db) -> None:
    with pytest.raises(QuerySyntaxError) as info:
        select("CameraFrame.chip == '" + "a" * 10_000 + "' ==")
    assert max(len(line) for line in str(info.value).splitlines()) < 200


@pytest.mark.parametrize(("query", "column"), [
    ("CameraFrame.chip == 'ccd1", 21),
    ('CameraFrame.chip == "ccd1', 21),
    ("CameraFrame.chip == 'cc\\'d1", 21),
    ("CameraFrame.chip == 'a' or CameraFrame.chip == 'b", 48),
])
def test_a_string_not_closed_is_named_where_it_begins(query: str, column: int) -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(query)
    assert str(info.value).startswith(f"syntax error: a string begun with {query[column - 1]} "
                                      f"is not closed (line 1, column {column})")


def test_a_misspelt_attribute_is_named_with_what_it_most_likely_meant() -> None:
    for query in ("CameraFrame.exptme > 1", "CameraFrame.previous.exptme > 1"):
        with pytest.raises(UnknownAttributeError, match=r"CameraFrame has no persistent "
                           r"attribute 'exptme' \(did you mean exptime\?\)"):
            parse_query(query)
    with pytest.raises(UnknownAttributeError, match=r"\(did you mean exptime\?\)"):
        parse_query("exptme > 1", CameraFrame)
    with pytest.raises(QueryError, match=r"awl select --class CLS"):
        parse_query("exptime > 1")
    with pytest.raises(UnknownAttributeError) as far:
        parse_query("CameraFrame.colour > 1")
    assert "did you mean" not in str(far.value)


def test_limit_offset_and_index_take_only_sensible_ints(chain) -> None:
    query = select(CameraFrame)
    for bad in (-1, "3", 2**70, 1.5):
        with pytest.raises(QueryError):
            query.limit(bad)
    with pytest.raises(QueryError):
        query["a"]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_give_an_answer_or_an_awlineage_error(chain, value) -> None:
    # Whether such values are refused or compared is the storage policy's choice; a query
    # must never end in the driver's own exception (contains(nan) did on PostgreSQL).
    for condition in (lambda: CameraFrame.gains.contains(value),
                      lambda: CameraFrame.exptime != value,
                      lambda: CameraFrame.gains[0] < value):
        with contextlib.suppress(AwlError):
            select(condition()).count()


def test_errors_about_huge_integers_describe_them_instead_of_printing_them(chain) -> None:
    huge = 10**5000  # str() of it raises ValueError in Python 3.11+
    for misuse in (lambda: select(CameraFrame).order_by(huge), lambda: select(CameraFrame)[huge:],
                   lambda: select(CameraFrame).limit(huge), lambda: CameraFrame.chip.like(huge),
                   lambda: huge & (CameraFrame.nexp == 1), lambda: CameraFrame.nexp == huge):
        with pytest.raises(AwlError, match="5,001 digits"):
            misuse()
