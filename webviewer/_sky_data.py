"""What the sky map draws: the stored footprints (polygons) and positions (points) of every
class that has them, read through their sky index tables.

One statement per class with a sky property, whatever the number of objects: the whole
class when no cone is asked for, else the rows whose HEALPix cells the cone's cell ranges
cover (the same pre-selection as ``Cls.footprint.overlaps(...)`` and
``Cls.position.within(...)``), then the same exact tests: the polygon overlap in Python for
footprints, the squared chord in SQL for positions.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy as sa

from awlineage import Database
from awlineage.persistence import get_persistent_properties
from awlineage.spacetime import (
    FOOTPRINT_ORDER,
    POSITION_ORDER,
    Circle,
    chord_squared,
    region_ranges,
    value_kind_of,
)

DATE_ATTRIBUTES = ("obs_date",)
"""Attributes that date an object better than its creation (when it was observed)."""


@dataclass(frozen=True)
class SkyProperty:
    """A footprint or position property of one stored class."""

    class_name: str
    short_name: str
    attribute: str
    kind: str
    """"footprint" or "position"."""
    table: sa.Table
    side: sa.Table
    date: sa.ColumnElement


@dataclass
class SkyItems:
    """The footprints and sources read for one view, and what the caps left out."""

    footprints: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    capped: list[str] = field(default_factory=list)


def sky_properties(db: Database, class_names: list[str]) -> list[SkyProperty]:
    """The footprint and position properties of the stored classes `class_names`, each read
    from the class's own table (a subclass has its own)."""
    found = []
    for name in sorted(class_names):
        cls = db.class_named(name)
        for prop in get_persistent_properties(cls):
            kind = value_kind_of(prop.type)
            if kind not in ("footprint", "position"):
                continue
            tables = db.tables_for(cls)
            if prop.name not in tables.index_tables:
                continue
            table = tables.table
            date = next((table.c[a] for a in DATE_ATTRIBUTES if a in table.c),
                        table.c.creation_date)
            found.append(SkyProperty(name, cls.__name__, prop.name, kind, table,
                                     tables.index_tables[prop.name], date))
    return found


def _in_ranges(column: sa.ColumnElement, ranges: list[tuple[int, int]]) -> sa.ColumnElement:
    return sa.or_(*(sa.and_(column >= lo, column < hi) for lo, hi in ranges))


def _footprint_rows(conn: sa.Connection, prop: SkyProperty, cone: Circle | None,
                    room: int) -> tuple[list[Any], bool]:
    """Up to `room` footprints of `prop` (overlapping `cone`), and whether more were left."""
    column = prop.table.c[prop.attribute]
    query = sa.select(prop.table.c.object_id, column, prop.date).where(column.is_not(None))
    if cone is not None:
        cells = sa.select(prop.side.c.object_id).where(
            _in_ranges(prop.side.c.cell, region_ranges(cone, FOOTPRINT_ORDER))).distinct()
        query = query.where(prop.table.c.object_id.in_(cells))
        rows = [r for r in conn.execute(query.order_by(prop.table.c.object_id))
                if r[1].overlaps(cone)]  # the cells are a superset; the polygon decides
        return rows[:room], len(rows) > room
    rows = list(conn.execute(query.order_by(prop.table.c.object_id).limit(room + 1)))
    return rows[:room], len(rows) > room


def _position_rows(conn: sa.Connection, prop: SkyProperty, cone: Circle | None,
                   room: int) -> tuple[list[Any], bool]:
    """Up to `room` positions of `prop` (within `cone`), and whether more were left."""
    column = prop.table.c[prop.attribute]
    query = sa.select(prop.table.c.object_id, column, prop.date).where(column.is_not(None))
    if cone is not None:
        side = prop.side
        cx, cy, cz = cone.vector
        chord = ((side.c.x - cx) * (side.c.x - cx) + (side.c.y - cy) * (side.c.y - cy)
                 + (side.c.z - cz) * (side.c.z - cz))
        inside = sa.select(side.c.object_id).where(
            _in_ranges(side.c.cell, region_ranges(cone, POSITION_ORDER)),
            chord <= chord_squared(np.radians(cone.radius)))
        query = query.where(prop.table.c.object_id.in_(inside))
    rows = list(conn.execute(query.order_by(prop.table.c.object_id).limit(room + 1)))
    return rows[:room], len(rows) > room


def _date(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime.datetime) else None


def read_sky(db: Database, properties: list[SkyProperty], cone: Circle | None, *,
             max_footprints: int, max_sources: int) -> SkyItems:
    """The footprints and positions of `properties` (those overlapping `cone` when given),
    at most `max_footprints` and `max_sources` in all, each cap named when it is hit."""
    items = SkyItems()
    with db.engine.connect() as conn:
        for layer, prop in enumerate(properties):
            about = {"class": prop.short_name, "attribute": prop.attribute, "layer": layer}
            if prop.kind == "footprint":
                room = max_footprints - len(items.footprints)
                rows, more = _footprint_rows(conn, prop, cone, room)
                items.footprints.extend(
                    {"object_id": oid, **about, "url": f"/obj/{oid}", "date": _date(date),
                     "vertices": [list(v) for v in value.vertices]}
                    for oid, value, date in rows)
                if more:
                    items.capped.append(
                        f"footprints of {prop.class_name}: the drawing stops at "
                        f"{max_footprints:,} footprints (Limits.sky_footprints)")
            else:
                room = max_sources - len(items.sources)
                rows, more = _position_rows(conn, prop, cone, room)
                items.sources.extend(
                    {"object_id": oid, **about, "url": f"/obj/{oid}", "date": _date(date),
                     "ra": value.ra, "dec": value.dec}
                    for oid, value, date in rows)
                if more:
                    items.capped.append(
                        f"positions of {prop.class_name}: the drawing stops at "
                        f"{max_sources:,} sources (Limits.sky_sources)")
    return items


def view_centre(items: SkyItems) -> tuple[float, float] | None:
    """The direction of the mean of every drawn vertex and point, in degrees; None when
    nothing is drawn."""
    pairs = [v for f in items.footprints for v in f["vertices"]]
    pairs += [(s["ra"], s["dec"]) for s in items.sources]
    if not pairs:
        return None
    ra, dec = np.radians(np.array(pairs, dtype=float).T)
    x, y, z = (np.cos(dec) * np.cos(ra)).sum(), (np.cos(dec) * np.sin(ra)).sum(), \
        np.sin(dec).sum()
    norm = float(np.sqrt(x * x + y * y + z * z))
    if norm < 1e-12:
        return 0.0, 0.0
    return float(np.degrees(np.arctan2(y, x)) % 360.0), float(np.degrees(np.arcsin(z / norm)))
