"""Side tables that index sky and time properties with plain B-trees, on every backend.

Beside its main column (the value's text form), each property of these types gets a table
``<class table>__<attribute>`` that the commit fills in the same transaction:

- a position (SkyCoord): one row per object, its unit vector (x, y, z) and its HEALPix cell
  at order 29, indexed: a cone is a few cell ranges, then an exact chord test on x, y, z;
- a footprint: one row per HEALPix cell of order 10 it touches, indexed by cell: the
  candidates for "contains" and "overlaps", which the exact polygon test then decides;
- an interval: one row with its start and end (unbounded ends as the earliest and latest
  times), indexed: overlaps and contains are two comparisons.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

from awlineage.database._types import UTCDateTime
from awlineage.persistence import Property
from awlineage.spacetime import (
    position_cells,
    unit_vectors,
    value_kind_of,
)


def indexed_kind(prop: Property) -> str | None:
    """"position", "footprint" or "interval" for a property with a side table, else None."""
    return value_kind_of(prop.type)


def index_table(metadata: sa.MetaData, name: str, prop: Property) -> sa.Table:
    """Describe the side table `name` of `prop` in `metadata` (not created)."""
    if name in metadata.tables:
        metadata.remove(metadata.tables[name])
    owner = sa.Column("object_id", sa.BigInteger, sa.ForeignKey("awl_object.object_id"),
                      primary_key=True, autoincrement=False)
    kind = indexed_kind(prop)
    comment = f"Index of {prop.qualified_name} ({kind})"
    if kind == "position":
        return sa.Table(
            name, metadata, owner,
            sa.Column("cell", sa.BigInteger, nullable=False, index=True,
                      comment="HEALPix nested cell, order 29"),
            sa.Column("x", sa.Float(precision=53), nullable=False),
            sa.Column("y", sa.Float(precision=53), nullable=False),
            sa.Column("z", sa.Float(precision=53), nullable=False),
            comment=comment,
        )
    if kind == "footprint":
        return sa.Table(
            name, metadata, owner,
            sa.Column("cell", sa.BigInteger, primary_key=True, autoincrement=False,
                      index=True, comment="HEALPix nested cell, order 10, touched"),
            comment=comment,
        )
    return sa.Table(
        name, metadata, owner,
        sa.Column("start", UTCDateTime, nullable=False, index=True),
        sa.Column("end", UTCDateTime, nullable=False, index=True),
        comment=comment,
    )


def index_rows(prop: Property, owners: Sequence[int], values: Sequence[Any]
               ) -> list[dict[str, Any]]:
    """The side-table rows of objects `owners` whose values of `prop` are `values` (None
    values get none); cells are computed for the whole batch at once."""
    present = [(o, v) for o, v in zip(owners, values, strict=True) if v is not None]
    if not present:
        return []
    kind = indexed_kind(prop)
    if kind == "position":
        ra = np.array([v.ra for _, v in present])
        dec = np.array([v.dec for _, v in present])
        cells = position_cells(ra, dec).tolist()
        vectors = unit_vectors(ra, dec).tolist()
        return [{"object_id": o, "cell": c, "x": x, "y": y, "z": z}
                for (o, _), c, (x, y, z) in zip(present, cells, vectors, strict=True)]
    if kind == "footprint":
        return [{"object_id": o, "cell": c}
                for o, v in present for c in v.cells(prop.qualified_name).tolist()]
    rows = []
    for o, v in present:
        start, end = v.bounds
        rows.append({"object_id": o, "start": start, "end": end})
    return rows
