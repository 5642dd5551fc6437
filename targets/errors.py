"""The errors of the imaging stages. Plain `ValueError` subclasses, so the stages stay usable
without the framework; each message names the frame, keyword or parameter at fault."""

from __future__ import annotations


class HeaderError(ValueError):
    """A FITS header says something the pipeline cannot interpret (and no default applies)."""


class CalibrationMissingError(ValueError):
    """A stage's parameters demand a calibration that was not given."""


class NoInputError(ValueError):
    """A stage was given nothing to work on (no raw frames in the window, no frames to stack)."""


class GridError(ValueError):
    """A frame cannot be placed on a sky grid (no WCS, no overlap, or grids that differ)."""


class FrameQualityWarning(UserWarning):
    """A frame or product whose pixels are implausible for its kind (a science frame mostly
    saturated, a bias near saturation, a flat with no light or near saturation): it is made
    all the same, and flagged in its notes."""
