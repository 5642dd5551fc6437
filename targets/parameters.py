"""The persistent parameters of each stage: defaults in code, changed by making new parameter
objects in a script (seed 003 section 4.2). Attribute names are those of the stage's dataclass,
so `stage_parameters` turns one into the other."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from awlineage import DBObject, persistent

T = TypeVar("T")


def stage_parameters(params: DBObject | None, stage_class: type[T]) -> T:
    """The stage dataclass `stage_class` with the values of the persistent `params` (its
    defaults for fields the persistent class does not have, or when `params` is None)."""
    if params is None:
        return stage_class()
    names = {f.name for f in dataclasses.fields(stage_class)}  # type: ignore[arg-type]
    values: dict[str, Any] = {name: getattr(params, name)
                              for name in type(params)._properties  # type: ignore[attr-defined]
                              if name in names}
    return stage_class(**values)


class BiasFrameParameters(DBObject):
    """How a master bias is made (see `targets.calibration.BiasParameters`)."""

    sigma_clip = persistent("Clip pixels further than this many sigma from the median", float,
                            3.0)
    max_iterations = persistent("Clipping iterations", int, 5)
    min_frames = persistent("Fewest raw biases accepted", int, 3)


class DomeFlatFrameParameters(DBObject):
    """How a master dome flat is made (see `targets.calibration.FlatParameters`)."""

    sigma_clip = persistent("Clipping sigma on the stack of median-scaled flats", float, 3.0)
    max_iterations = persistent("Clipping iterations", int, 5)
    min_frames = persistent("Fewest raw flats accepted", int, 1)
    min_response = persistent("Pixels of a lower normalised response are bad", float, 0.5)


class ReducedScienceFrameParameters(DBObject):
    """How a science frame is reduced (see `targets.reduction.ReductionParameters`)."""

    sigclip = persistent("LACosmic detection limit (Laplacian over noise)", float, 4.5)
    sigfrac = persistent("Fraction of sigclip for neighbouring pixels", float, 0.3)
    objlim = persistent("LACosmic contrast limit against fine structure", float, 5.0)
    niter = persistent("LACosmic iterations", int, 4)
    cleantype = persistent("How flagged pixels are replaced (astroscrappy)", str, "meanmask")
    separable_median = persistent("Use the faster separable median filters", bool, True)
    detect_cosmic_rays = persistent("Find and mask cosmic rays", bool, True)
    min_flat = persistent("Pixels of a lower flat response are bad", float, 0.5)
    require_bias = persistent("Refuse to reduce without a master bias", bool, False)
    require_flat = persistent("Refuse to reduce without a master flat", bool, False)


class PointingGridParameters(DBObject):
    """How the common sky grid of a pointing is laid out (see `RegridParameters`)."""

    pixel_scale = persistent("Arcseconds per grid pixel; 0: the frames' median", float, 0.0)
    margin = persistent("Empty pixels around the frames' footprint", int, 8)


class RegriddedFrameParameters(DBObject):
    """How a frame is resampled onto its pointing's grid (see `RegridParameters`)."""

    order = persistent("Interpolation: bilinear or nearest-neighbor", str, "bilinear")
    conserve_flux = persistent("Scale by the ratio of pixel areas", bool, True)
    subtract_sky = persistent("Subtract the frame's sky level first", bool, True)


class CoaddedRegriddedFrameParameters(DBObject):
    """How the regridded frames of a pointing and filter are stacked (`CoaddParameters`)."""

    crop = persistent("Keep only the part of the grid some frame covers", bool, True)


class SourceListParameters(DBObject):
    """How sources are found and measured (see `targets.extraction.ExtractionParameters`)."""

    threshold = persistent("Detection threshold [pixel noise]", float, 3.0)
    min_area = persistent("Fewest connected pixels above threshold", int, 5)
    deblend_nthresh = persistent("Deblending levels", int, 32)
    deblend_cont = persistent("Deblending contrast", float, 0.005)
    clean = persistent("Remove spurious detections near bright ones", bool, True)
    background_box = persistent("Background mesh size [pixels]", int, 64)
    background_filter = persistent("Background median filter [meshes]", int, 3)
    kron_factor = persistent("Kron aperture in Kron radii", float, 2.5)
    min_radius = persistent("Smallest aperture radius [pixels]", float, 1.75)
