"""Persistent classes with sky and time properties (names unique across the suite)."""

from __future__ import annotations

import datetime

from astropy.coordinates import SkyCoord

from awlineage import DBObject, Footprint, Interval, persistent


class SkyField(DBObject):
    name = persistent("Field name", str, "")
    footprint = persistent("Sky covered", Footprint, None)
    validity = persistent("Used for frames taken", Interval, None)
    taken = persistent("Start of the exposure, UTC", datetime.datetime, None)


class SkyDetection(DBObject):
    number = persistent("Row in the catalogue", int, 0)
    position = persistent("Sky position", SkyCoord, None)
    field = persistent("The field it was found in", SkyField, None)


class SkyTile(SkyField):
    """A field whose footprint is part of its identity: versions per patch of sky."""

    identity = ("footprint",)
