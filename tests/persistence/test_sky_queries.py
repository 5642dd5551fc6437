"""Sky and time predicates on both databases: the B-tree pre-selection (HEALPix cells, start
and end columns) followed by the exact test must select exactly what the exact tests say of
every object, read back from the database, in the expression API and in text."""

from __future__ import annotations

import datetime

import astropy.units as u
import numpy as np
import pytest
from astropy.coordinates import SkyCoord

from awlineage import (
    Box,
    Circle,
    Interval,
    PersistentTypeError,
    PersistentValueError,
    Polygon,
    QueryError,
    commit,
    select,
)
from awlineage.spacetime import unit_vectors
from tests.persistence.sky_models import SkyDetection, SkyField, SkyTile
from tests.spacetime.independent import separation_deg

RA0, DEC0 = 150.1, 2.2
UTC = datetime.UTC


DETECTIONS = 800


@pytest.fixture
def sky(db):
    """60 fields (boxes of random size and place, some without a footprint) and 800
    detections (some without a position; most given as (ra, dec) degrees, some as SkyCoord)
    near (RA0, DEC0), read back from the database: (fields, detections, the detections'
    numbers and (ra, dec) degrees as read back)."""
    rng = np.random.default_rng(17)
    fields = []
    for i in range(60):
        centre = (RA0 + rng.normal(0, 0.6), DEC0 + rng.normal(0, 0.6))
        start = datetime.datetime(2024, 1, 1, tzinfo=UTC) + datetime.timedelta(
            hours=float(rng.uniform(0, 24 * 20)))
        length = datetime.timedelta(hours=float(rng.uniform(1, 72)))
        fields.append(SkyField(
            name=f"f{i}",
            footprint=None if i % 13 == 0 else Box(centre, rng.uniform(0.05, 0.6),
                                                    rng.uniform(0.05, 0.6)),
            validity=None if i % 11 == 0 else Interval(start if i % 7 else None,
                                                       start + length),
            taken=start))
    ra = RA0 + rng.normal(0, 0.5, DETECTIONS)
    dec = DEC0 + rng.normal(0, 0.5, DETECTIONS)

    def position(i: int, r: float, d: float) -> object:
        if i % 97 == 0:
            return None
        return SkyCoord(r, d, unit="deg") if i % 25 == 0 else (float(r), float(d))

    detections = [SkyDetection(number=i, field=fields[i % 60], position=position(i, r, d))
                  for i, (r, d) in enumerate(zip(ra, dec, strict=True))]
    commit([*fields, *detections])
    db.identity_map.clear()
    read_fields, read_detections = select(SkyField).all(), select(SkyDetection).all()
    placed = [d for d in read_detections if d.position is not None]
    numbers_placed = np.array([d.number for d in placed])
    radec = np.array([(d.position.ra.deg, d.position.dec.deg) for d in placed])
    return read_fields, read_detections, numbers_placed, radec


def inside(region, numbers_placed, radec) -> list[int]:
    """The numbers of the detections whose read-back position the region holds."""
    held = region.contains_vectors(unit_vectors(radec[:, 0], radec[:, 1]))
    return sorted(numbers_placed[held].tolist())


def numbers(query) -> list[int]:
    return sorted(d.number for d in query)


def names(query) -> list[str]:
    return sorted(f.name for f in query)


REGIONS = [
    Circle(SkyCoord(RA0, DEC0, unit="deg"), 5 * u.arcmin),
    Circle((RA0 + 0.4, DEC0 - 0.3), 0.25 * u.deg),
    Circle((RA0, DEC0), 2),
    Box((RA0 - 0.2, DEC0 + 0.1), 20 * u.arcmin, 0.3),
    Polygon([(RA0, DEC0), (RA0 + 0.5, DEC0 + 0.1), (RA0 + 0.3, DEC0 + 0.6)]),
    Polygon(SkyCoord([RA0 - 1, RA0 - 0.9, RA0 - 0.95], [DEC0, DEC0, DEC0 + 0.1], unit="deg")),
]


def test_positions_within_a_region_are_exactly_those_inside(sky) -> None:
    _, _, numbers_placed, radec = sky
    for region in REGIONS:
        expected = inside(region, numbers_placed, radec)
        assert expected or isinstance(region, Polygon)
        assert numbers(select(SkyDetection.position.within(region))) == expected
        # The same region from the text form.
        assert numbers(select(f"SkyDetection.position within {region.query_text()}")) == \
            expected
        # Negation: everything else, including the objects without a position.
        assert numbers(select(~SkyDetection.position.within(region))) == sorted(
            set(range(DETECTIONS)) - set(expected))


def test_a_cone_agrees_with_astropy_separations(sky) -> None:
    _, _, numbers_placed, radec = sky
    separation = separation_deg(RA0, DEC0, radec[:, 0], radec[:, 1])
    radius = 0.2
    assert np.all(np.abs(separation - radius) > 1e-9)
    expected = sorted(numbers_placed[separation <= radius].tolist())
    assert numbers(select(SkyDetection.position.within(
        Circle(SkyCoord(RA0 * u.deg, DEC0 * u.deg), 12 * u.arcmin)))) == expected
    assert numbers(select(f"position within CIRCLE({RA0}, {DEC0}, 720arcsec)",
                          SkyDetection)) == expected


def test_footprints_overlapping_a_region_are_exactly_those_the_exact_test_finds(sky) -> None:
    fields = sky[0]
    for region in REGIONS:
        expected = sorted(f.name for f in fields
                          if f.footprint is not None and f.footprint.overlaps(region))
        assert names(select(SkyField.footprint.overlaps(region))) == expected
        assert names(select(f"SkyField.footprint overlaps {region.query_text()}")) == expected


def test_footprints_containing_a_position(sky) -> None:
    fields, detections, _, _ = sky
    for detection in detections[:30]:
        if detection.position is None:
            continue
        expected = sorted(f.name for f in fields
                          if f.footprint is not None and f.footprint.contains(detection.position))
        assert names(select(SkyField.footprint.contains(detection.position))) == expected
        ra, dec = float(detection.position.ra.deg), float(detection.position.dec.deg)
        assert names(select(f"footprint contains POINT({ra!r}, {dec!r})", SkyField)) == \
            expected


def test_a_link_path_ends_in_a_footprint(sky) -> None:
    fields, detections, numbers_placed, radec = sky
    point = SkyCoord(RA0, DEC0, unit="deg")
    covering = {f.object_id for f in fields
                if f.footprint is not None and f.footprint.contains(point)}
    assert covering
    expected = sorted(d.number for d in detections if d.field.object_id in covering)
    assert numbers(select(SkyDetection.field.footprint.contains(point))) == expected
    combined = select(SkyDetection.field.footprint.contains(point)
                      & SkyDetection.position.within(Circle(point, 0.3)))
    near = set(inside(Circle(point, 0.3), numbers_placed, radec))
    assert numbers(combined) == sorted(
        d.number for d in detections if d.field.object_id in covering and d.number in near)


def test_intervals_overlap_and_contain_as_their_python_tests_say(sky) -> None:
    fields = sky[0]
    probes = [Interval("2024-01-05", "2024-01-06"), Interval(None, "2024-01-02"),
              Interval("2024-01-15T06:30", None)]
    for probe in probes:
        expected = sorted(f.name for f in fields
                          if f.validity is not None and f.validity.overlaps(probe))
        assert names(select(SkyField.validity.overlaps(probe))) == expected
        assert names(select(f"validity overlaps {probe.query_text()}", SkyField)) == expected
        inside = sorted(f.name for f in fields
                        if f.validity is not None and f.validity.contains(probe))
        assert names(select(SkyField.validity.contains(probe))) == inside
    for moment in ("2024-01-03T00:00", "2024-01-10T12:00:00+01:00"):
        when = datetime.datetime.fromisoformat(moment)
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        expected = sorted(f.name for f in fields
                          if f.validity is not None and f.validity.contains(when))
        assert expected
        assert names(select(SkyField.validity.contains(when))) == expected
        assert names(select(f"SkyField.validity contains T'{moment}'")) == expected
        taken = sorted(f.name for f in fields if f.taken is not None
                       and Interval(when, when + datetime.timedelta(days=3)).contains(f.taken))
        assert names(select(SkyField.taken.within(
            Interval(when, when + datetime.timedelta(days=3))))) == taken


def test_values_read_back_as_they_were_given(db) -> None:
    footprint = Box((10.0, -45.0), 0.1, 0.2)
    field = SkyField(name="x", footprint=footprint,
                     validity=("2024-03-01T00:00:00+00:00", None))
    detection = SkyDetection(number=1, field=field,
                             position=SkyCoord(45.0, 30.0, unit="deg", frame="galactic"))
    commit([field, detection])
    db.identity_map.clear()
    again = select(SkyDetection).first()
    assert isinstance(again.position, SkyCoord)
    assert again.position.separation(SkyCoord(45.0, 30.0, unit="deg", frame="galactic")
                                     ).arcsec < 1e-6
    assert list(again.field.footprint.vertices) == list(footprint.vertices)
    assert again.field.validity == Interval("2024-03-01", None)
    # == None and != None still work; other comparisons point at the predicates.
    assert select(SkyDetection.position != None).count() == 1  # noqa: E711
    with pytest.raises(QueryError, match="within"):
        select(SkyDetection.position == SkyCoord(1, 2, unit="deg"))


def test_bad_values_and_predicates_name_what_is_wrong(db) -> None:
    with pytest.raises(PersistentTypeError, match=r"SkyDetection\.position expects a SkyCoord"):
        SkyDetection(position="150 2")
    with pytest.raises(PersistentValueError, match="beyond the poles"):
        SkyDetection(position=(150.0, 100.0))
    with pytest.raises(PersistentValueError, match="too large a footprint"):
        SkyField(footprint=Box((0, 0), 60, 60))
    with pytest.raises(PersistentValueError, match="before it starts"):
        SkyField(validity=("2024-01-02", "2024-01-01"))
    with pytest.raises(QueryError, match=r"SkyField\.name\.within.*applies to positions"):
        SkyField.name.within(Circle((0, 0), 1))
    with pytest.raises(QueryError, match="takes a sky region"):
        SkyDetection.position.within((1, 2))
    with pytest.raises(QueryError, match=r"use SkyField\.footprint\.overlaps"):
        SkyField.footprint.contains(Circle((0, 0), 1))


def test_deleting_an_object_removes_its_index_rows(db) -> None:
    import sqlalchemy as sa

    field = SkyField(name="gone", footprint=Box((1.0, 1.0), 0.1, 0.1),
                     validity=Interval("2024-01-01", "2024-01-02"))
    field.commit()
    assert select(SkyField.footprint.contains((1.0, 1.0))).count() == 1
    db.delete(field)
    tables = db.tables_for(SkyField)
    with db.engine.connect() as conn:
        for table in tables.index_tables.values():
            assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 0


def test_a_footprint_may_be_part_of_an_identity(db) -> None:
    patch = Box((5.0, 5.0), 0.2, 0.2)
    first, second = SkyTile(name="a", footprint=patch), SkyTile(name="b", footprint=patch)
    first.commit()
    second.commit()
    assert (first.version, second.version) == (1, 2)
    assert [t.name for t in select(SkyTile.footprint.contains((5.0, 5.0))).newest()] == ["b"]


@pytest.mark.parametrize("ra0, dec0", [(0.0, 0.0), (10.0, 89.95), (200.0, -89.99)])
def test_regions_across_ra_zero_and_the_poles(db, ra0, dec0) -> None:
    rng = np.random.default_rng(int(ra0))
    ra = (ra0 + rng.normal(0, 0.2, 400)) % 360
    dec = np.clip(dec0 + rng.normal(0, 0.2, 400), -90, 90)
    commit([SkyDetection(number=i, position=(float(r), float(d)))
            for i, (r, d) in enumerate(zip(ra, dec, strict=True))])
    numbers_placed = np.arange(400)
    for region in (Circle((ra0, dec0), 0.15), Box((ra0, dec0), 0.3, 0.2)):
        expected = inside(region, numbers_placed, np.stack([ra, dec], axis=1))
        assert expected
        assert numbers(select(SkyDetection.position.within(region))) == expected


@pytest.mark.parametrize("radius_mas", [0.0, 0.1, 1.0, 3.0])
def test_a_cone_of_a_few_milliarcseconds_or_none_finds_what_it_holds(db, radius_mas) -> None:
    # cells of the finest order: the cone search must not refine past HEALPix order 29
    ra, dec = 180.0, 0.0
    offsets_mas = [0.0, 0.5, 2.0, 10.0]
    commit([SkyDetection(number=i, position=(ra, dec + offset / 3.6e6))
            for i, offset in enumerate(offsets_mas)])
    expected = [i for i, offset in enumerate(offsets_mas) if offset <= radius_mas]
    cone = Circle(SkyCoord(ra, dec, unit="deg"), radius_mas * u.mas)
    assert numbers(select(SkyDetection.position.within(cone))) == expected
    text = f"SkyDetection.position within CIRCLE({ra}, {dec}, {radius_mas}mas)"
    assert numbers(select(text)) == expected
