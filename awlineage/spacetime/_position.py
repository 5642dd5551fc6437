"""Sky positions as a stored property type: ``persistent("Position", SkyCoord, None)``.

An object holds a position as a `SkyPosition` (ICRS degrees, cheap to load by the
thousand) and hands it out as an astropy ``SkyCoord``, built on first reading and kept.
astropy itself is imported only when a position is first read or checked.
"""

from __future__ import annotations

from typing import Any

from awlineage.errors import SkyRegionError
from awlineage.spacetime._inputs import as_radec


def is_skycoord_type(value_type: Any) -> bool:
    """Whether `value_type` is astropy's SkyCoord class (checked without importing astropy).

    Parameters
    ----------
    value_type : Any
        A property's value type.

    Returns
    -------
    bool
        True for `astropy.coordinates.SkyCoord`.
    """
    return isinstance(value_type, type) and value_type.__name__ == "SkyCoord" and \
        value_type.__module__.startswith("astropy.coordinates")


def value_kind_of(value_type: Any) -> str | None:
    """The kind of a sky or time property type: "position", "footprint" or "interval".

    Parameters
    ----------
    value_type : Any
        A property's value type.

    Returns
    -------
    str or None
        ``"position"`` for SkyCoord, ``"footprint"`` for `Footprint`, ``"interval"`` for
        `Interval`; None for every other type.
    """
    from awlineage.spacetime._footprint import Footprint
    from awlineage.spacetime._interval import Interval

    if is_skycoord_type(value_type):
        return "position"
    if value_type is Footprint:
        return "footprint"
    if value_type is Interval:
        return "interval"
    return None


def skycoord_type() -> type:
    """The astropy SkyCoord class.

    Returns
    -------
    type
        `astropy.coordinates.SkyCoord` (imported on the first call).
    """
    from astropy.coordinates import SkyCoord

    return SkyCoord


class SkyPosition:
    """A position as stored: ICRS right ascension and declination in degrees."""

    __slots__ = ("_coord", "dec", "ra")

    def __init__(self, ra: float, dec: float) -> None:
        self.ra = ra
        self.dec = dec
        self._coord: Any = None

    @classmethod
    def of(cls, value: Any, where: str) -> SkyPosition:
        """The position of a scalar SkyCoord (any frame convertible to ICRS) or of an
        (ra, dec) pair of plain numbers in ICRS degrees."""
        if isinstance(value, SkyPosition):
            return value
        try:
            ra, dec = as_radec(value, where)
        except SkyRegionError as exc:
            from awlineage.errors import PersistentValueError

            raise PersistentValueError(str(exc)) from None
        position = cls(ra, dec)
        if hasattr(value, "frame") and getattr(value.frame, "name", "") == "icrs":
            position._coord = value
        return position

    def coord(self) -> Any:
        """The position as an ICRS SkyCoord (built once)."""
        if self._coord is None:
            self._coord = skycoord_type()(self.ra, self.dec, unit="deg", frame="icrs")
        return self._coord

    def to_text(self) -> str:
        """The stored form: ``"ra dec"`` in degrees, exactly (repr of each float)."""
        return f"{self.ra!r} {self.dec!r}"

    @classmethod
    def from_text(cls, text: str) -> SkyPosition:
        """The inverse of `to_text`."""
        ra, dec = text.split()
        return cls(float(ra), float(dec))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SkyPosition) and (self.ra, self.dec) == (other.ra, other.dec)

    def __hash__(self) -> int:
        return hash((self.ra, self.dec))

    def __repr__(self) -> str:
        # What the attribute reads as (an ICRS SkyCoord), written as the call that makes it.
        return f"SkyCoord({self.ra!r}, {self.dec!r}, unit='deg')"

    def __str__(self) -> str:
        return f"POINT({self.ra!r}, {self.dec!r})"
