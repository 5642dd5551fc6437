"""The sky and time forms of the textual language: what they parse to, and errors that point
at the mistake (line, column, caret) and say what is wrong. No database is needed."""

from __future__ import annotations

import datetime

import astropy.units as u
import pytest

from awlineage import (
    Circle,
    Interval,
    QueryError,
    QuerySyntaxError,
    SkyRegionError,
    parse_query,
)
from awlineage.persistence import SkyPredicate, TimePredicate
from tests.persistence.sky_models import SkyDetection, SkyField


def caret_column(message: str) -> int:
    """The 1-based column the caret line points at."""
    return len(message.splitlines()[-1]) - 2


@pytest.mark.parametrize("text, degrees", [
    ("5arcsec", 5 / 3600), ("5 arcsec", 5 / 3600), ("0.5deg", 0.5), ("2arcmin", 2 / 60),
    ("300mas", 0.3 / 3600), ("1.5", 1.5), ("1e-3 deg", 1e-3),
])
def test_angles_carry_their_units(text, degrees) -> None:
    parsed = parse_query(f"position within CIRCLE(150.1, -2.2, {text})", SkyDetection)
    assert isinstance(parsed, SkyPredicate)
    assert parsed.region == Circle((150.1, -2.2), degrees)


def test_regions_points_and_times_parse_to_the_predicates() -> None:
    within = parse_query("SkyDetection.position within BOX(10, -5, 1arcmin, 2arcmin)")
    assert isinstance(within, SkyPredicate) and within.op == "within"
    contains = parse_query("SkyField.footprint contains POINT(10, -5)")
    assert isinstance(contains, SkyPredicate) and contains.op == "contains"
    # The Butler's form: a region OVERLAPS POINT means the footprint contains it.
    butler = parse_query("SkyField.footprint OVERLAPS POINT(10, -5)")
    assert isinstance(butler, SkyPredicate) and butler.op == "contains"
    timed = parse_query("SkyField.validity overlaps (T'2024-01-03T02:00', None)")
    assert isinstance(timed, TimePredicate) and timed.value == Interval("2024-01-03T02:00", None)
    butler_time = parse_query("SkyField.validity OVERLAPS T'2024-01-03T02:00'")
    assert isinstance(butler_time, TimePredicate) and butler_time.op == "contains"
    moment = parse_query("SkyField.validity contains 2024-01-03T02:00Z")
    assert moment.value == datetime.datetime(2024, 1, 3, 2, tzinfo=datetime.UTC)
    taken = parse_query("SkyField.taken overlaps (2024-01-01, 2024-01-02)")
    assert isinstance(taken, TimePredicate) and taken.op == "within"
    compared = parse_query("SkyField.taken > T'2024-01-05'")
    assert compared.value == datetime.datetime(2024, 1, 5, tzinfo=datetime.UTC)


def test_bound_parameters_fill_regions_and_times() -> None:
    parsed = parse_query("position within CIRCLE(:ra, :dec, :radius)", SkyDetection,
                         bind={"ra": 150.0, "dec": 2.0, "radius": 5 * u.arcsec})
    assert parsed.region == Circle((150.0, 2.0), 5 / 3600)
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    timed = parse_query("validity overlaps (:start, None)", SkyField, bind={"start": start})
    assert timed.value == Interval(start, None)


@pytest.mark.parametrize("text, error, words, at", [
    ("SkyDetection.position within CIRCLE(150, 95, 1)", SkyRegionError,
     "beyond the poles", "150,"),
    ("SkyDetection.position within CIRCLE(150, 2, 5 m)", QuerySyntaxError, "unexpected", "m)"),
    ("SkyField.footprint overlaps POLYGON(0, 0, 2, 0, 1, 0.2, 2, 2, 0, 2)", SkyRegionError,
     "not convex", "0, 0, 2"),
    ("SkyField.footprint overlaps POLYGON(0, 0, 2, 0, 1)", QueryError, "pairs of ra, dec",
     "1)"),
    ("SkyField.footprint contains CIRCLE(1, 2, 3)", QueryError, "use overlaps", "1, 2"),
    ("SkyDetection.position within POINT(1, 2)", QueryError, "CIRCLE(ra, dec, radius)",
     "1, 2"),
    ("SkyField.validity overlaps (T'2024-01-02', T'2024-01-01')", SkyRegionError,
     "before it starts", "T'2024-01-02'"),
    ("SkyField.validity contains T'yesterday'", QueryError, "not a valid date", "T'y"),
    ("SkyField.name within CIRCLE(1, 2, 3)", QueryError, "applies to positions", "SkyField"),
    ("SkyField.footprint < 3", QueryError, "contains() or overlaps()", "SkyField"),
    ("SkyDetection.position within CIRCLE(1, 2, 'far')", QuerySyntaxError, "an angle",
     "'far'"),
])
def test_mistakes_point_at_their_place(text, error, words, at) -> None:
    with pytest.raises(error) as info:
        parse_query(text)
    message = str(info.value)
    assert words in message
    if at is not None:
        assert f"(line 1, column {text.index(at) + 1})" in message
        assert caret_column(message) == text.index(at) + 1


def test_a_bound_radius_must_be_an_angle() -> None:
    with pytest.raises(SkyRegionError, match=r"not an angle \(its unit m does not convert") \
            as info:
        parse_query("position within CIRCLE(1, 2, :r)", SkyDetection, bind={"r": 3 * u.m})
    assert caret_column(str(info.value)) == len("position within CIRCLE(") + 1
