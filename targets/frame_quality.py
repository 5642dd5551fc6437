"""Plausibility of a frame's pixels for its kind: a science frame mostly saturated, a bias whose
level is near saturation, a flat with no light or close to saturation. Such a frame is still
made (the user decides), but flagged: a sentence for the product's ``notes`` and a
`FrameQualityWarning`, which reaches the summary of ``awl make``.

>>> import numpy as np
>>> saturated_note(np.full((4, 4), 65535.0), 65535.0, "a.fits") is not None
True
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from targets.errors import FrameQualityWarning

IMPLAUSIBLE = "implausible"
"""How every note of this module begins (products downstream carry such notes on)."""
MOST_SATURATED = 0.5
"""A science frame with more than this fraction of its pixels at or above saturation is
flagged (a sky flat taken for science was 77% saturated; a crowded field of bright stars is a
few percent)."""
BIAS_NEAR_SATURATION = 0.5
"""A raw bias whose median is at or above this fraction of saturation is flagged (biases sit
at a few percent of the range)."""
FLAT_NEAR_SATURATION = 0.9
"""A raw flat whose median is at or above this fraction of saturation is flagged: it is
saturated or beyond the linear range."""


def saturated_note(raw: np.ndarray, saturation: float, name: str) -> str | None:
    """A note when most of a science frame's raw pixels are saturated, else None.

    Parameters
    ----------
    raw
        The raw pixels (trimmed), ADU.
    saturation
        The raw saturation level, ADU (infinite or huge: no level, never flagged).
    name
        The frame, for the note.

    Returns
    -------
    str or None
        The note.
    """
    if not math.isfinite(saturation) or raw.size == 0 or saturation > _largest(raw):
        return None
    fraction = float(np.mean(raw >= saturation))
    if fraction <= MOST_SATURATED:
        return None
    return (f"{IMPLAUSIBLE} science frame {name}: {fraction:.0%} of its pixels are at or above "
            f"saturation ({saturation:g} ADU); is it a flat or a test exposure? Its sources "
            "are not to be trusted (give awl ingest --type if its kind is wrong)")


def _largest(raw: np.ndarray) -> float:
    """The largest value `raw`'s type holds: a saturation above it (a frame without a level is
    stored with the largest float) is reached by no pixel, and comparing float32 pixels with it
    would overflow the cast."""
    info = np.finfo(raw.dtype) if np.issubdtype(raw.dtype, np.floating) else np.iinfo(raw.dtype)
    return float(info.max)


def level_note(kind: str, raws: list[tuple[str, np.ndarray, float]]) -> str | None:
    """A note naming the raw biases or flats whose median level is implausible, else None.

    Parameters
    ----------
    kind
        ``bias`` or ``flat``.
    raws
        (name, raw pixels, saturation level) of each raw frame.

    Returns
    -------
    str or None
        The note: a bias at or above `BIAS_NEAR_SATURATION` of saturation; a flat at or below 0
        or at or above `FLAT_NEAR_SATURATION` of saturation.
    """
    limit = BIAS_NEAR_SATURATION if kind == "bias" else FLAT_NEAR_SATURATION
    problems = []
    for name, raw, saturation in raws:
        level = float(np.median(raw))
        if math.isfinite(saturation) and level >= limit * saturation:
            problems.append(f"{name} (median {level:g} ADU, {level / saturation:.0%} of "
                            f"saturation)")
        elif kind == "flat" and level <= 0:
            problems.append(f"{name} (median {level:g} ADU: no light)")
    if not problems:
        return None
    expected = ("a bias sits at a few percent of the range" if kind == "bias" else
                f"a flat should be well above 0 and below {limit:.0%} of saturation")
    return (f"{IMPLAUSIBLE} raw {kind}(s): {', '.join(problems)}; {expected}: check the frames' "
            "kind and exposure")


def flag(notes: list[str], note: str | None) -> list[str]:
    """`notes` with `note` appended, and a `FrameQualityWarning` emitted (nothing when `note`
    is None).

    Parameters
    ----------
    notes
        The product's notes so far.
    note
        The note, or None.

    Returns
    -------
    list of str
        The notes.
    """
    if note is None:
        return list(notes)
    warnings.warn(note, FrameQualityWarning, stacklevel=2)
    return [*notes, note]
