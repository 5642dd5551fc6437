"""The retraction records that travel with a bundle: those of the objects it holds, and the
reinstatements of them, so that another site sees the same objects as retracted (or
reinstated) as this one does (``awl info``, the target processor, ``affected``)."""

from __future__ import annotations

from collections.abc import Iterable

from awlineage.database import Database
from awlineage.persistence import link_ids
from awlineage.retraction import Retraction


def retraction_records(db: Database, included: Iterable[int]) -> set[int]:
    """Object ids of the retraction records (retractions and reinstatements) of the objects
    `included`; one statement for the records of the database."""
    from awlineage.query import select

    wanted = set(included)
    records = select(Retraction, database=db).all()
    if not records:
        return set()
    found = {r.object_id for r in records if r.target_id in wanted}
    found |= {r.object_id for r in records if link_ids(r)["reinstates"] in found}
    return found
