"""Arithmetic in conditions, in the expression API and in text, on both backends: typing as
the Butler's (int op int is int, a float makes it float), SQL's integer division, division by
zero and int overflow as missing values, attributes on both sides, list elements and links."""

from __future__ import annotations

import pytest

from awlineage import QueryError, commit, parse_query, select
from tests.persistence.models import CameraFrame, Instrument, Site, utc

INT64_MAX = 2**63 - 1


@pytest.fixture
def frames(db):
    """Frames with nexp from -7 to 6, exptime 10 * nexp, gains [1.0, nexp / 2]."""
    site = Site(name="Paranal", altitude=2635.0)
    made = [CameraFrame(chip=f"ccd{n}", nexp=n, exptime=10.0 * n, gains=[1.0, n / 2],
                        instrument=Instrument(name=f"i{n}", site=site) if n % 2 else None,
                        obs_date=utc(2024, 1, 1))
            for n in range(-7, 7)]
    commit(made)
    return made


def nexps(query) -> list[int]:
    return sorted(f.nexp for f in query)


def where(frames, condition) -> list[int]:
    return sorted(f.nexp for f in frames if condition(f))


def test_float_times_number(frames) -> None:
    assert nexps(select(CameraFrame.exptime * 2.0 > 60)) == \
        where(frames, lambda f: f.exptime * 2.0 > 60)
    assert nexps(select("exptime * 2.0 > 60", CameraFrame)) == [4, 5, 6]


def test_two_attributes_in_a_sum(frames) -> None:
    assert nexps(select(CameraFrame.nexp + CameraFrame.nexp <= 4)) == \
        where(frames, lambda f: 2 * f.nexp <= 4)


def test_number_on_the_left(frames) -> None:
    assert nexps(select(2 * CameraFrame.nexp == 8)) == [4]
    assert nexps(select(60 < CameraFrame.exptime * 2)) == [4, 5, 6]  # noqa: SIM300


def test_attribute_compared_with_attribute(frames) -> None:
    assert nexps(select(CameraFrame.exptime > CameraFrame.nexp)) == \
        where(frames, lambda f: f.exptime > f.nexp)
    assert nexps(select("CameraFrame.exptime <= CameraFrame.nexp")) == \
        where(frames, lambda f: f.exptime <= f.nexp)


def test_int_division_truncates_toward_zero(frames) -> None:
    # -7 / 2 is -3 as in SQL (Python's -7 // 2 would be -4); so -7 and -6 give -3.
    assert nexps(select(CameraFrame.nexp / 2 == -3)) == [-7, -6]
    assert nexps(select("nexp / 2 == -4", CameraFrame)) == []
    assert nexps(select(CameraFrame.nexp / 2.0 == -3.5)) == [-7]


def test_int_times_float_is_float(frames) -> None:
    assert (CameraFrame.nexp * 0.5 == 1).type is float
    assert (CameraFrame.nexp * 2 == 1).type is int
    assert nexps(select(CameraFrame.nexp * 0.5 == 1.5)) == [3]


def test_division_by_zero_is_a_missing_value(frames) -> None:
    # int(12 / n) truncates toward zero, as int division does.
    by_nexp = where(frames, lambda f: f.nexp != 0 and int(12 / f.nexp) > 2)
    assert nexps(select(12 / CameraFrame.nexp > 2)) == by_nexp
    assert nexps(select(~(12 / CameraFrame.nexp > 2))) == \
        sorted(set(range(-7, 7)) - set(by_nexp))
    assert 0 in nexps(select("12 / nexp != 3", CameraFrame))  # as nexp != 3 on a missing nexp


def test_int_overflow_is_a_missing_value(frames) -> None:
    big = CameraFrame.nexp * INT64_MAX
    assert nexps(select(big > 0)) == [1]
    assert nexps(select(big < 0)) == [-1]
    assert nexps(select(big / INT64_MAX == 2)) == []  # overflowed on the way


def test_unary_minus_and_parentheses(frames) -> None:
    assert nexps(select(-CameraFrame.nexp > 5)) == [-7, -6]
    assert nexps(select("-(nexp + 1) * 2 == 4", CameraFrame)) == [-3]
    assert nexps(select("nexp - 1 * 2 == 0", CameraFrame)) == [2]  # * before -


def test_list_elements_in_arithmetic(frames) -> None:
    assert nexps(select(CameraFrame.gains[1] * 4 == CameraFrame.nexp * 2)) == \
        where(frames, lambda f: f.gains[1] * 4 == f.nexp * 2)
    assert nexps(select("gains[1] - gains[0] > 1.5", CameraFrame)) == \
        where(frames, lambda f: f.gains[1] - f.gains[0] > 1.5)


def test_attributes_along_a_link(frames) -> None:
    linked = where(frames, lambda f: f.instrument is not None)
    assert nexps(select(CameraFrame.instrument.site.altitude / 2 > 1000)) == linked
    assert nexps(select("instrument.site.altitude - 2635 == 0", CameraFrame)) == linked


def test_arithmetic_combines_with_and_or_not(frames) -> None:
    assert nexps(select((CameraFrame.nexp * 2 > 4) & (CameraFrame.chip != "ccd5"))) == [3, 4, 6]
    assert nexps(select("nexp * 2 > 4 and not chip == 'ccd5' or nexp + 7 == 0",
                        CameraFrame)) == [-7, 3, 4, 6]


def test_text_prints_back(frames) -> None:
    assert repr(parse_query("CameraFrame.exptime * 2.0 > 60")) == \
        "(CameraFrame.exptime * 2.0) > 60"
    assert repr(parse_query("-CameraFrame.nexp + 1 < 0")) == "(-CameraFrame.nexp + 1) < 0"


@pytest.mark.parametrize(("text", "message"), [
    ("CameraFrame.chip * 2 > 1", r"CameraFrame\.chip is a str, not a number: arithmetic \(\*\)"),
    ("CameraFrame.is_science + 1 > 1", r"CameraFrame\.is_science is a bool.*\(\+\)"),
    ("CameraFrame.obs_date - 1 > 1", r"CameraFrame\.obs_date is a datetime.*\(-\)"),
    ("CameraFrame.instrument / 2 > 1", r"CameraFrame\.instrument is a link.*\(/\)"),
    ("CameraFrame.gains * 2 > 1", r"CameraFrame\.gains is a list"),
    ("CameraFrame.chip == CameraFrame.nexp", r"CameraFrame\.chip is a str"),
])
def test_arithmetic_on_a_non_number_names_class_attribute_and_operator(text, message) -> None:
    with pytest.raises(QueryError, match=message):
        parse_query(text)
    with pytest.raises(QueryError, match=message + r".*\(line 1, column 1\)"):
        parse_query(text)


def test_arithmetic_on_a_non_number_in_the_api() -> None:
    with pytest.raises(QueryError, match=r"CameraFrame\.chip is a str.*\(\+\)"):
        CameraFrame.chip + 1
    with pytest.raises(QueryError, match=r"arithmetic \(\*\) takes numbers, got 'a'"):
        CameraFrame.nexp * "a"
    with pytest.raises(QueryError, match="not None"):
        CameraFrame.nexp * 2 == None  # noqa: B015, E711


def test_error_caret_points_at_the_operand(frames) -> None:
    with pytest.raises(QueryError) as info:
        parse_query("CameraFrame.nexp * 2 > 1 and CameraFrame.exptime + CameraFrame.chip > 0")
    assert "(line 1, column 52)" in str(info.value)
    assert str(info.value).splitlines()[-1] == "  " + " " * 51 + "^"


def test_one_comparison_reads_one_object() -> None:
    with pytest.raises(QueryError, match="on different objects"):
        CameraFrame.exptime + CameraFrame.instrument.site.altitude > 1  # noqa: B015


def test_comparing_numbers_only_is_refused() -> None:
    with pytest.raises(QueryError, match=r"names no attribute.*column 1"):
        parse_query("1 + 1 == 2")


def test_deep_or_long_arithmetic_is_refused_clearly() -> None:
    term = CameraFrame.nexp + 0
    with pytest.raises(QueryError, match="nests 33 operations deep; the limit is 32"):
        for _ in range(40):
            term = term + 1
    with pytest.raises(QueryError, match="limit is"):
        parse_query("CameraFrame.nexp" + " + 1" * 300 + " > 0")


@pytest.mark.parametrize("operator", ["+", "-", "*", "/"])
def test_the_deepest_arithmetic_allowed_gives_python_s_answer(frames, operator) -> None:
    # 32 operations: the documented limit, on both databases (PostgreSQL's overflow guard
    # of each operation once passed Python's recursion limit when compiled)
    text = "CameraFrame.nexp" + f" {operator} 1" * 32
    shift = {"+": 32, "-": -32, "*": 0, "/": 0}[operator]
    assert nexps(select(text + " > 0")) == where(frames, lambda f: f.nexp + shift > 0)
    term = CameraFrame.nexp + 0
    for _ in range(31):
        term = term * 1
    assert nexps(select(term >= 2)) == where(frames, lambda f: f.nexp >= 2)


def test_arithmetic_is_not_a_condition() -> None:
    with pytest.raises(QueryError, match="not a condition"):
        (CameraFrame.nexp * 2) & (CameraFrame.nexp > 1)
    with pytest.raises(QueryError, match="no truth value"):
        bool(CameraFrame.nexp * 2)
