"""How an image is turned into grey levels: a stretch (``linear``, ``asinh``, ``log``,
``sqrt``) applied between limits (``zscale``, ``minmax`` or a percentile such as ``99.5``),
with astropy.visualization's own stretch and interval classes, as `ImageNormalize` with
``clip=True`` does: ``stretch(clip((value - low) / (high - low), 0, 1))``.

Both are query parameters of the previews and the image page (``?stretch=asinh&limits=99.5``);
a value outside these is a 400 naming the parameter and the values allowed."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from astropy.visualization import (
    AsinhStretch,
    BaseInterval,
    BaseStretch,
    LinearStretch,
    LogStretch,
    MinMaxInterval,
    PercentileInterval,
    SqrtStretch,
    ZScaleInterval,
)
from starlette.requests import Request

from webviewer._errors import BadRequest

STRETCHES: dict[str, Callable[[], BaseStretch]] = {
    "linear": LinearStretch,
    "asinh": AsinhStretch,
    "log": LogStretch,
    "sqrt": SqrtStretch,
}
"""The stretches by name (astropy's defaults: asinh ``a=0.1``, log ``a=1000``)."""

NAMED_LIMITS: dict[str, Callable[[], BaseInterval]] = {
    "zscale": ZScaleInterval,
    "minmax": MinMaxInterval,
}
"""Limits by name; any other value is a percentile of the finite pixels kept."""

DEFAULT_STRETCH = "linear"
DEFAULT_LIMITS = "zscale"
ALLOWED_LIMITS = "zscale, minmax or a percentile above 0 and at most 100 (such as 99.5)"


@dataclass(frozen=True)
class Rendering:
    """A stretch and limits, by the names a request gives."""

    stretch: str = DEFAULT_STRETCH
    limits: str = DEFAULT_LIMITS

    @property
    def key(self) -> str:
        """A short name of this rendering, for cache keys and ETags."""
        return f"{self.limits}-{self.stretch}"

    def interval(self) -> BaseInterval:
        """astropy's interval class for these limits."""
        named = NAMED_LIMITS.get(self.limits)
        return named() if named is not None else PercentileInterval(float(self.limits))

    def stretch_of(self) -> BaseStretch:
        """astropy's stretch class of this rendering."""
        return STRETCHES[self.stretch]()


def parse_limits(text: str) -> str:
    """The canonical name of limits `text`: a named interval, or a percentile written as a
    plain number (``99.50`` is ``99.5``). Raises BadRequest naming parameter limits."""
    if text in NAMED_LIMITS:
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 100):
        raise BadRequest(f"parameter limits must be {ALLOWED_LIMITS}, not {text[:40]!r}")
    return f"{value:g}"


def rendering_param(request: Request) -> Rendering:
    """Query parameters ``stretch`` and ``limits``; 400 naming the parameter and the values
    allowed for anything else."""
    stretch = request.query_params.get("stretch", "") or DEFAULT_STRETCH
    if stretch not in STRETCHES:
        raise BadRequest(f"parameter stretch must be one of {', '.join(STRETCHES)}, not "
                         f"{stretch[:40]!r}")
    limits = parse_limits(request.query_params.get("limits", "") or DEFAULT_LIMITS)
    return Rendering(stretch, limits)


def normalise(values: np.ndarray, rendering: Rendering) -> np.ndarray:
    """`values` (finite) mapped to [0, 1]: the limits of `values` by the rendering's
    interval, then its stretch, clipped. A flat image (no range) maps to 0."""
    low, high = rendering.interval().get_limits(values)
    if not high > low:
        return np.zeros(values.shape, dtype=np.float64)
    scaled = np.clip((values.astype(np.float64) - low) / (high - low), 0.0, 1.0)
    return np.asarray(rendering.stretch_of()(scaled, clip=True), dtype=np.float64)


def to_grey(data: np.ndarray, rendering: Rendering) -> np.ndarray:
    """8-bit grey of an image; non-finite pixels (and an image with none finite) are
    black."""
    finite = np.isfinite(data)
    grey = np.zeros(data.shape, dtype=np.uint8)
    if finite.any():
        grey[finite] = np.round(normalise(data[finite], rendering) * 255.0).astype(np.uint8)
    return grey
