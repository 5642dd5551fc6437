"""Ranges in ``in`` lists (``0..9``, ``0..9:2``, ``range(...)``) and ``:name`` bound
parameters (``bind=`` and ``awl select --bind``), on both backends."""

from __future__ import annotations

import pytest

from awlineage import PersistentTypeError, QueryError, QuerySyntaxError, commit, parse_query, select
from awlineage.persistence import InRange
from awlineage.persistence._expressions import MAX_IN_VALUES
from awlineage.query import parse_value
from tests.commands import run_awl as awl
from tests.persistence.models import CameraFrame, utc


@pytest.fixture
def frames(db):
    """Frames with nexp from -5 to 12, one of them with keywords ['1', '2']."""
    made = [CameraFrame(chip=f"ccd{n}", nexp=n, exptime=float(n), obs_date=utc(2024, 1, 3))
            for n in range(-5, 13)]
    commit(made)
    return made


def nexps(query) -> list[int]:
    return sorted(f.nexp for f in query)


# -- ranges ----------------------------------------------------------------------------------
def test_range_includes_both_ends(frames) -> None:
    assert nexps(select("nexp in (0..9)", CameraFrame)) == list(range(0, 10))


def test_range_with_a_stride(frames) -> None:
    assert nexps(select("nexp in (0..9:2)", CameraFrame)) == [0, 2, 4, 6, 8]
    assert nexps(select("nexp in (-5..5:3)", CameraFrame)) == [-5, -2, 1, 4]


def test_ranges_mix_with_values(frames) -> None:
    assert nexps(select("nexp in (1, 5..7, -3)", CameraFrame)) == [-3, 1, 5, 6, 7]


def test_empty_range_matches_nothing(frames) -> None:
    assert nexps(select("nexp in (5..1)", CameraFrame)) == []
    assert nexps(select("not nexp in (5..1)", CameraFrame)) == list(range(-5, 13))


def test_negated_range(frames) -> None:
    assert nexps(select("not nexp in (0..9:3)", CameraFrame)) == \
        [n for n in range(-5, 13) if n not in (0, 3, 6, 9)]


def test_python_range_in_the_api(frames) -> None:
    assert nexps(select(CameraFrame.nexp.in_(range(0, 10, 2)))) == [0, 2, 4, 6, 8]
    assert nexps(select(CameraFrame.nexp.in_(range(9, -1, -3)))) == [0, 3, 6, 9]


def test_huge_range_is_not_expanded(frames) -> None:
    condition = CameraFrame.nexp.in_(range(-10_000_000, 10_000_000, 4))
    assert isinstance(condition, InRange) and len(range(-10_000_000, 10_000_000, 4)) > \
        MAX_IN_VALUES
    assert nexps(select(condition)) == [n for n in range(-5, 13) if n % 4 == 0]
    assert nexps(select("nexp in (-9223372036854775808..9223372036854775807:7)",
                        CameraFrame)) == [n for n in range(-5, 13) if (n + 2**63) % 7 == 0]


def test_stride_beyond_the_range_is_its_start(frames) -> None:
    assert nexps(select("nexp in (3..9:100)", CameraFrame)) == [3]
    step = 2**62 + 1  # too large for the modulo test: the four members are listed
    assert nexps(select(f"nexp in (-9223372036854775808..9223372036854775807:{step})",
                        CameraFrame)) == [n for n in range(-5, 13) if (n + 2**63) % step == 0]


def test_range_on_a_non_int_attribute_is_refused() -> None:
    with pytest.raises(QueryError, match=r"CameraFrame\.exptime is a float: a range.*takes an "
                                         r"int attribute.*column 25"):
        parse_query("CameraFrame.exptime in (0..9)")


def test_range_needs_a_positive_stride() -> None:
    with pytest.raises(QueryError, match=r"stride must be positive.*column 25"):
        parse_query("CameraFrame.nexp in (1, 0..9:0)")


def test_range_syntax_errors_point_at_the_spot() -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query("CameraFrame.nexp in (0...9)")
    assert "unexpected '.9'" in str(info.value) and "column 25" in str(info.value)


# -- bound parameters -------------------------------------------------------------------------
def test_bound_value_in_a_comparison(frames) -> None:
    assert nexps(select("CameraFrame.nexp = :d", bind={"d": 5})) == [5]
    assert nexps(select("chip == :c", CameraFrame, bind={"c": "ccd7"})) == [7]


def test_bound_values_in_lists_ranges_and_arithmetic(frames) -> None:
    assert nexps(select("nexp in (:a, :b)", CameraFrame, bind={"a": 1, "b": 3})) == [1, 3]
    assert nexps(select("nexp in (:lo..:hi::s)", CameraFrame,
                        bind={"lo": 0, "hi": 6, "s": 3})) == [0, 3, 6]
    assert nexps(select("nexp * :k > :t", CameraFrame, bind={"k": 2.5, "t": 25})) == [11, 12]
    assert nexps(select("nexp in (:many)", CameraFrame, bind={"many": [2, 4]})) == [2, 4]
    assert nexps(select("nexp in (:r)", CameraFrame, bind={"r": range(0, 3)})) == [0, 1, 2]


def test_bound_value_is_never_text_of_the_query(frames) -> None:
    assert nexps(select("chip == :c", CameraFrame, bind={"c": "x' or 1=1 --"})) == []


def test_missing_binding_names_the_placeholder_and_its_position() -> None:
    with pytest.raises(QueryError) as info:
        parse_query("CameraFrame.nexp > 1 and CameraFrame.nexp < :hi", bind={"lo": 1})
    message = str(info.value)
    assert "no value bound to :hi (bound: lo)" in message and "column 45" in message
    assert message.splitlines()[-1] == "  " + " " * 44 + "^"
    with pytest.raises(QueryError, match=r"no value bound to :d \(no values are bound: pass "
                       r"bind=\{'d': \.\.\.\} in Python, --bind d=\.\.\. to awl select\)"):
        parse_query("CameraFrame.nexp == :d")


def test_unused_binding_is_named() -> None:
    with pytest.raises(QueryError, match="not used in the query: :extra"):
        parse_query("CameraFrame.nexp == :d", bind={"d": 1, "extra": 2})


def test_bound_value_of_the_wrong_type_names_the_attribute() -> None:
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.nexp expects int.*column 1"):
        parse_query("CameraFrame.nexp == :d", bind={"d": "five"})
    with pytest.raises(QueryError, match=r"arithmetic \(\*\) takes numbers, got 'x'"):
        parse_query("CameraFrame.nexp * :k > 1", bind={"k": "x"})
    with pytest.raises(QueryError, match=r"the end must be an int, got 2.5"):
        parse_query("CameraFrame.nexp in (0..:e)", bind={"e": 2.5})


def test_bind_is_for_text_only() -> None:
    with pytest.raises(QueryError, match="bound values are for textual queries"):
        select(CameraFrame.nexp == 1, bind={"d": 1})


@pytest.mark.parametrize(("text", "value"), [
    ("5", 5), ("-2.5", -2.5), ("'WFI'", "WFI"), ('"a b"', "a b"), ("true", True),
    ("false", False), ("none", None), ("2024-01-03", utc(2024, 1, 3)),
])
def test_command_line_values_are_query_literals(text, value) -> None:
    assert parse_value(text) == value


def test_command_line_value_that_is_not_one_value_points_at_it() -> None:
    with pytest.raises(QuerySyntaxError, match=r"expected one value.*column 3"):
        parse_value("5 6")


def test_awl_select_bind(frames, db) -> None:
    result = awl(db, "select", "--count", "CameraFrame.nexp in (:lo..:hi) and "
                 "CameraFrame.chip != :c", "--bind", "lo=1", "--bind", "hi=4", "--bind",
                 "c='ccd2'")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3"
    missing = awl(db, "select", "CameraFrame.nexp == :d")
    assert missing.returncode != 0 and "no value bound to :d" in missing.stderr
    assert "^" in missing.stderr
    bad = awl(db, "select", "CameraFrame.nexp == :d", "--bind", "d")
    assert bad.returncode != 0 and "write name=value" in bad.stderr
