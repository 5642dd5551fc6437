"""The sky map's data (``/sky`` as JSON): the stored footprints and positions, a cone that
selects what the project's spatial queries select, a class filter, caps that are named, bad
parameters named in a 400, and a statement count that does not grow with the objects."""

from __future__ import annotations

import datetime
import re

import pytest
from astropy.coordinates import SkyCoord

from awlineage import Circle, Database, DBObject, Footprint, commit, persistent, select
from webviewer import Limits

JSON = {"accept": "application/json"}


class SkyMapFrame(DBObject):
    """An image's record with the sky it covers."""

    __namespace__ = "skymaptest"
    footprint = persistent("Sky covered", Footprint, None)
    obs_date = persistent("Start of the exposure, UTC", datetime.datetime, None)


class SkyMapCoadd(SkyMapFrame):
    """A subclass: its own table, drawn with its base when ``class`` names the base."""

    __namespace__ = "skymaptest"


class SkyMapSource(DBObject):
    """A source with a position."""

    __namespace__ = "skymaptest"
    position = persistent("Sky position", SkyCoord, None)


def _square(ra: float, dec: float, half: float = 0.1) -> Footprint:
    return Footprint([(ra - half, dec - half), (ra + half, dec - half),
                      (ra + half, dec + half), (ra - half, dec + half)])


def _store(count: int, start: float = 10.0) -> list[DBObject]:
    """`count` frames in a row along RA 0.15 deg apart (each 0.2 deg wide), a coadd over
    the first two, a frame with no footprint, and a source at each frame's centre."""
    taken = datetime.datetime(2024, 3, 14, 20, 0, tzinfo=datetime.UTC)
    made: list[DBObject] = [
        SkyMapFrame(footprint=_square(start + 0.15 * i, 5.0), obs_date=taken)
        for i in range(count)]
    made.append(SkyMapCoadd(footprint=_square(start + 0.075, 5.0, 0.2)))
    made.append(SkyMapFrame(footprint=None))
    made += [SkyMapSource(position=SkyCoord(start + 0.15 * i, 5.0, unit="deg"))
             for i in range(count)]
    commit(made)
    return made


def _statements(response) -> int:
    assert response.status_code == 200, response.text
    match = re.match(r'db;desc="(\d+) queries"', response.headers["server-timing"])
    assert match, response.headers["server-timing"]
    return int(match.group(1))


def test_json_footprints_and_sources_are_the_stored_ones(db: Database, open_viewer) -> None:
    made = _store(4)
    answer = open_viewer().get("/sky", headers=JSON)
    assert answer.status_code == 200
    data = answer.json()
    stored = {o.object_id: o for o in made if getattr(o, "footprint", None) is not None}
    drawn = {f["object_id"]: f for f in data["footprints"]}
    assert set(drawn) == set(stored)
    for oid, footprint in drawn.items():
        assert footprint["vertices"] == [list(v) for v in stored[oid].footprint.vertices]
        assert footprint["class"] == type(stored[oid]).__name__
        assert footprint["url"] == f"/obj/{oid}"
    frame = next(o for o in made if type(o) is SkyMapFrame)
    assert drawn[frame.object_id]["date"].startswith("2024-03-14T20:00:00")
    sources = {s["object_id"]: (s["ra"], s["dec"]) for s in data["sources"]}
    assert sources == {o.object_id: (pytest.approx(o.position.ra.deg),
                                       pytest.approx(o.position.dec.deg))
                       for o in made if isinstance(o, SkyMapSource)}
    assert 10.0 < data["centre"]["ra"] < 10.45
    assert data["centre"]["dec"] == pytest.approx(5.0, abs=0.01)
    assert "limits_hit" not in data


CONES = [(10.0, 5.0, 0.05), (10.4, 5.1, 0.03), (10.27, 4.75, 0.2), (11.0, 5.0, 0.1)]
"""Cones over the row of frames: a few each, and one east of them all."""


def test_a_cone_keeps_exactly_what_the_spatial_queries_select(db: Database, open_viewer
                                                              ) -> None:
    _store(6)
    client = open_viewer()
    for ra, dec, radius in CONES:
        data = client.get(f"/sky?ra={ra}&dec={dec}&radius={radius}", headers=JSON).json()
        circle = Circle((ra, dec), radius)
        frames = {o.object_id for o in select(SkyMapFrame.footprint.overlaps(circle))}
        frames |= {o.object_id for o in select(SkyMapCoadd.footprint.overlaps(circle))}
        assert {f["object_id"] for f in data["footprints"]} == frames
        assert 0 < len(frames) < 8 or ra == 11.0  # some kept, some not (none far east)
        assert {s["object_id"] for s in data["sources"]} == {
            o.object_id for o in select(SkyMapSource.position.within(circle))}
        assert data["cone"] == {"ra": ra, "dec": dec, "radius": radius}
        assert data["centre"] == {"ra": ra, "dec": dec}


def test_class_keeps_that_class_and_its_subclasses(db: Database, open_viewer) -> None:
    made = _store(3)
    client = open_viewer()
    base = client.get("/sky?class=SkyMapFrame", headers=JSON).json()
    assert {f["object_id"] for f in base["footprints"]} == {
        o.object_id for o in made if getattr(o, "footprint", None) is not None}
    assert base["sources"] == []
    coadd = client.get("/sky?class=SkyMapCoadd", headers=JSON).json()
    assert [f["class"] for f in coadd["footprints"]] == ["SkyMapCoadd"]
    assert client.get("/sky?class=NoSuchSkyClass", headers=JSON).status_code == 404


BAD_CONES = [
    ("ra=abc&dec=5", "parameter ra"), ("ra=360&dec=5", "parameter ra"),
    ("ra=-1&dec=5", "parameter ra"), ("ra=10&dec=91", "parameter dec"),
    ("ra=10&dec=nan", "parameter dec"), ("ra=10&dec=5&radius=0", "parameter radius"),
    ("ra=10&dec=5&radius=181", "parameter radius"), ("ra=10&dec=5&radius=inf", "parameter radius"),
    ("ra=10", "parameter dec"), ("dec=5&radius=1", "parameter ra"),
]
"""Query strings and the parameter their 400 must name."""


def test_a_bad_cone_is_a_400_naming_the_parameter(db: Database, open_viewer) -> None:
    _store(1)
    client = open_viewer()
    for query, named in BAD_CONES:
        answer = client.get(f"/sky?{query}", headers=JSON)
        assert answer.status_code == 400, query
        assert named in answer.json()["error"], query


def test_the_caps_are_named_when_hit(db: Database, open_viewer) -> None:
    _store(5)
    data = open_viewer(limits=Limits(sky_footprints=3, sky_sources=2)).get(
        "/sky", headers=JSON).json()
    assert len(data["footprints"]) == 3 and len(data["sources"]) == 2
    hits = " ".join(data["limits_hit"])
    assert "Limits.sky_footprints" in hits and "Limits.sky_sources" in hits


def test_statements_do_not_grow_with_the_objects(db: Database, open_viewer) -> None:
    _store(2)
    client = open_viewer()
    client.get("/sky", headers=JSON)  # the first request reads the tables' descriptions
    few = [_statements(client.get(u, headers=JSON)) for u in ("/sky", "/sky?ra=10&dec=5")]
    _store(30, start=20.0)
    many = [_statements(client.get(u, headers=JSON)) for u in ("/sky", "/sky?ra=10&dec=5")]
    assert few == many


def test_the_page_embeds_the_map_and_lists_the_footprints(db: Database, open_viewer) -> None:
    made = _store(2)
    page = open_viewer().get("/sky")
    assert page.status_code == 200
    html = page.text
    assert '<script src="/static/sky.js" defer></script>' in html
    assert 'id="sky-data"' in html and 'aria-describedby="sky-description"' in html
    assert '<a href="/sky">Sky</a>' in html
    for obj in made:
        if getattr(obj, "footprint", None) is not None:
            assert f'href="/obj/{obj.object_id}"' in html


def test_the_demo_footprints_and_a_cone_on_them_match_the_library(demo_folder, demo_client
                                                                   ) -> None:
    from targets.raw_frames import RawScienceFrame
    from targets.science import CoaddedRegriddedFrame, ReducedScienceFrame, RegriddedFrame
    from targets.source_lists import Source
    from tests.webviewer.demo_objects import demo_session

    classes = (RawScienceFrame, ReducedScienceFrame, RegriddedFrame, CoaddedRegriddedFrame)
    data = demo_client.get("/sky", headers=JSON).json()
    drawn = {f["object_id"]: f["vertices"] for f in data["footprints"]}
    cone = demo_client.get("/sky?ra=150.0&dec=2.19&radius=0.004", headers=JSON).json()
    circle = Circle((150.0, 2.19), 0.004)
    with demo_session(demo_folder):
        stored = {o.object_id: [list(v) for v in o.footprint.vertices]
                  for cls in classes for o in select(cls) if o.footprint is not None}
        overlapping = {o.object_id for cls in classes
                       for o in select(cls.footprint.overlaps(circle))}
        near = {o.object_id for o in select(Source.position.within(circle))}
    assert drawn == stored
    assert {f["object_id"] for f in cone["footprints"]} == overlapping
    assert 0 < len(overlapping) < len(stored)
    assert near and {s["object_id"] for s in cone["sources"]} == near
