"""Process targets whose make() raises library warnings: a UserWarning (twice), a numpy
overflow in a cast, an astropy FITS VerifyWarning and an ERFA "dubious year" warning; one of
them then fails. Importable by Spark's workers."""

from __future__ import annotations

import warnings

import numpy as np
from astropy.io import fits
from astropy.time import Time

from awlineage import DBObject, OnePer, Process, persistent

USER_MESSAGE = "the level looks odd"
"""The message of the UserWarning every make raises."""


class WarnRaw(DBObject):
    label = persistent("Name of the raw value", str, "")
    level = persistent("Level [ADU]", float, 0.0)


def raise_library_warnings() -> float:
    """Raise the warnings and return a value computed on the way."""
    for _ in range(2):
        warnings.warn(USER_MESSAGE, UserWarning, stacklevel=1)
    squeezed = np.array([1e300]).astype(np.float32)  # overflow encountered in cast
    header = fits.Header()
    header["LONGKEYWORD"] = 1  # VerifyWarning: becomes a HIERARCH card
    future = Time("2300-01-01T00:00:00", scale="utc").tai  # ERFA: dubious year
    return float(np.isinf(squeezed).sum()) + future.jd * 0.0


class WarnTarget(Process):
    targets = OnePer(WarnRaw, link="raw", copy=("label",))

    raw = persistent("The raw value", WarnRaw, None)
    label = persistent("Name of the raw value", str, "")
    value = persistent("The level, checked", float, None)

    def make(self) -> None:
        self.value = self.raw.level + raise_library_warnings()


class FailingWarnTarget(Process):
    raw = persistent("The raw value", WarnRaw, None)

    def make(self) -> None:
        raise_library_warnings()
        raise ValueError("the level is negative")
