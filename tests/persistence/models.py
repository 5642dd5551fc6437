"""Persistent classes used by the persistence tests (names unique across the suite)."""

from __future__ import annotations

import datetime

from awlineage import DBObject, persistent


class Site(DBObject):
    name = persistent("Observatory name", str, "")
    altitude = persistent("Altitude [m]", float, 0.0)


class Instrument(DBObject):
    name = persistent("Instrument name", str, "")
    site = persistent("Where it is mounted", Site, None)


class CameraFrame(DBObject):
    chip = persistent("CCD name", str, "", index=True)
    exptime = persistent("Exposure time [s]", float, 0.0)
    nexp = persistent("Number of exposures", int, 1)
    is_science = persistent("Science exposure?", bool, True)
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    keywords = persistent("Header keywords kept", str, [])
    gains = persistent("Gain per amplifier [e-/ADU]", float, [])
    instrument = persistent("Instrument used", Instrument, None)
    overlaps = persistent("Overlapping frames", DBObject, [])
    previous = persistent("The frame taken before this one")


class FlatfieldImage(DBObject):
    filter = persistent("Filter name", str, "")
    level = persistent("Mean level [ADU]", float, 0.0)


class DomeFlatImage(FlatfieldImage):
    lamp = persistent("Lamp used", str, "")


class TwilightFlatImage(FlatfieldImage):
    sun_altitude = persistent("Sun altitude [deg]", float, 0.0)


class MasterBias(DBObject):
    identity = ("chip", "obs_date")
    chip = persistent("CCD name", str, "")
    obs_date = persistent("Night of the raw biases, UTC", datetime.datetime, None)
    level = persistent("Bias level [ADU]", float, 0.0)


class EncodedPayload(DBObject):
    label = persistent("What the payload is", str, "")
    payload = persistent("Encoded bytes", bytes, None)


def utc(*args: int) -> datetime.datetime:
    """A timezone-aware UTC datetime."""
    return datetime.datetime(*args, tzinfo=datetime.UTC)
