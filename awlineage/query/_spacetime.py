"""Compiling sky and time conditions: a B-tree pre-selection on the attribute's side table
(see `awlineage.database._index_tables`), then the exact test.

- A position within a circle or polygon: the region's HEALPix cell ranges at order 29 on the
  side table's ``cell`` index, then the exact test on its unit vector, both in SQL (a squared
  chord for a circle, one dot product per edge for a polygon): the same formulas as
  `awlineage.spacetime`, so the database and Python agree.
- A footprint containing a position or overlapping a region: the candidates sharing a cell
  of order 10 are read with their polygons, tested exactly in Python, and the ones that pass
  are bound as one list of ids (the way long link paths are).
- An interval (or a datetime) against an interval or a time: comparisons of the side table's
  start and end (or of the column).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import sqlalchemy as sa

from awlineage.database import ClassTables
from awlineage.persistence import Property, SkyPredicate, TimePredicate
from awlineage.spacetime import (
    FOOTPRINT_ORDER,
    POSITION_ORDER,
    Circle,
    Footprint,
    Interval,
    Polygon,
    SkyPosition,
    SkyRegion,
    chord_squared,
    position_cells,
    region_ranges,
    unit_vector,
)

if TYPE_CHECKING:
    from awlineage.query._compile import Compiler

Leaf = Callable[[ClassTables, Property, "int | None"], sa.ColumnElement]


def spacetime_leaf(compiler: Compiler, expression: SkyPredicate | TimePredicate) -> Leaf:
    """The leaf compiling `expression` on rows of a class's tables."""
    if isinstance(expression, TimePredicate):
        return lambda ct, prop, index: _time_condition(ct, prop, expression)
    if expression.op == "within":
        # "within" is a position inside a region (a footprint predicate has no "within")
        return lambda ct, prop, index: _position_within(
            ct, prop, expression.region)  # type: ignore[arg-type]
    return lambda ct, prop, index: _footprint_matches(compiler, ct, prop, expression)


# -- positions -------------------------------------------------------------------------------
def _in_cells(column: sa.ColumnElement, region: SkyRegion, order: int) -> sa.ColumnElement:
    ranges = region_ranges(region, order)
    return sa.or_(*(sa.and_(column >= lo, column < hi) for lo, hi in ranges))


def _exact(side: sa.Table, region: SkyRegion) -> sa.ColumnElement:
    x, y, z = side.c.x, side.c.y, side.c.z
    if isinstance(region, Circle):
        cx, cy, cz = region.vector
        limit = chord_squared(np.radians(region.radius))
        return ((x - cx) * (x - cx) + (y - cy) * (y - cy)) + (z - cz) * (z - cz) <= limit
    assert isinstance(region, Polygon)
    return sa.and_(*((x * nx + y * ny) + z * nz >= 0.0 for nx, ny, nz in region.normals))


def _position_within(ct: ClassTables, prop: Property, region: SkyRegion) -> sa.ColumnElement:
    side = ct.index_tables[prop.name]
    matching = sa.select(side.c.object_id).where(
        _in_cells(side.c.cell, region, POSITION_ORDER), _exact(side, region))
    return ct.table.c.object_id.in_(matching)


# -- footprints ------------------------------------------------------------------------------
def _footprint_matches(compiler: Compiler, ct: ClassTables, prop: Property,
                       expression: SkyPredicate) -> sa.ColumnElement:
    side = ct.index_tables[prop.name]
    target = expression.region
    if isinstance(target, SkyPosition):
        cell = int(position_cells(np.array([target.ra]), np.array([target.dec]),
                                  FOOTPRINT_ORDER)[0])
        touching = side.c.cell == cell
        point = np.array([unit_vector(target.ra, target.dec)])

        def passes(footprint: Footprint) -> bool:
            return bool(footprint.contains_vectors(point)[0])
    else:
        touching = _in_cells(side.c.cell, target, FOOTPRINT_ORDER)

        def passes(footprint: Footprint) -> bool:
            return footprint.overlaps(target)

    column = ct.table.c[prop.name]
    candidates = sa.select(ct.table.c.object_id, column).where(
        ct.table.c.object_id.in_(sa.select(side.c.object_id).where(touching).distinct()))
    ids = [oid for oid, footprint in compiler.run_rows(candidates) if passes(footprint)]
    return compiler.bind_ids(ct.table.c.object_id, ids)


# -- time ------------------------------------------------------------------------------------
def _time_condition(ct: ClassTables, prop: Property, expression: TimePredicate
                    ) -> sa.ColumnElement:
    value = expression.value
    if expression.op == "within":  # a datetime column inside an interval
        assert isinstance(value, Interval)
        column = ct.table.c[prop.name]
        parts = []
        if value.start is not None:
            parts.append(column >= value.start)
        if value.end is not None:
            parts.append(column < value.end)
        return sa.and_(column.is_not(None), *parts)
    side = ct.index_tables[prop.name]
    if expression.op == "overlaps":
        assert isinstance(value, Interval)
        start, end = value.bounds
        condition = sa.and_(side.c.start < end, side.c.end > start)
    elif isinstance(value, Interval):  # contains an interval
        start, end = value.bounds
        condition = sa.and_(side.c.start <= start, side.c.end >= end)
    else:  # contains a moment
        condition = sa.and_(side.c.start <= value, side.c.end > value)
    return ct.table.c.object_id.in_(sa.select(side.c.object_id).where(condition))
