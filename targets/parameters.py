"""The persistent parameters of each stage: defaults in code, changed by making new parameter
objects in a script (seed 003 section 4.2). Attribute names and defaults are those of the
stage's dataclass (one place for each default), so `stage_parameters` turns one into the
other."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from awlineage import DBObject, persistent
from targets.calibration import BiasParameters, FlatParameters
from targets.coadd import CoaddParameters
from targets.extraction import ExtractionParameters
from targets.overscan import OverscanParameters
from targets.reduction import ReductionParameters
from targets.regrid import RegridParameters

T = TypeVar("T")


def stage_parameters(params: DBObject | None, stage_class: type[T]) -> T:
    """The stage dataclass `stage_class` with the values of the persistent `params` (its
    defaults for fields the persistent class does not have, or when `params` is None)."""
    if params is None:
        return stage_class()
    names = {f.name for f in dataclasses.fields(stage_class)}  # type: ignore[arg-type]
    values: dict[str, Any] = {name: getattr(params, name)
                              for name in type(params)._properties
                              if name in names}
    return stage_class(**values)


class _SectionsChecked:
    """Parameters with overscan sections: a malformed section (or statistic) is refused when
    the object is made, naming the parameter, rather than when the first frame is reduced."""

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
        stage_parameters(self, OverscanParameters)  # type: ignore[arg-type]


class BiasFrameParameters(_SectionsChecked, DBObject):
    """How a master bias is made (see `targets.calibration.BiasParameters`)."""

    sigma_clip = persistent("Clip pixels further than this many sigma from the median", float,
                            BiasParameters.sigma_clip)
    max_iterations = persistent("Clipping iterations", int, BiasParameters.max_iterations)
    min_frames = persistent("Fewest raw biases accepted", int, BiasParameters.min_frames)
    overscan = persistent("Subtract the overscan (BIASSEC)", bool, OverscanParameters.overscan)
    overscan_statistic = persistent("Overscan level per row: median or clipped_mean", str,
                                    OverscanParameters.overscan_statistic)
    overscan_clip_sigma = persistent("Clipping sigma of clipped_mean", float,
                                     OverscanParameters.overscan_clip_sigma)
    overscan_smooth = persistent("Rows in the running median of the overscan levels", int,
                                 OverscanParameters.overscan_smooth)
    trim = persistent("Cut the frame to TRIMSEC (else DATASEC)", bool, OverscanParameters.trim)
    biassec = persistent("Overscan section instead of the header's; empty: BIASSEC", str,
                         OverscanParameters.biassec)
    trimsec = persistent("Data section instead of the header's; empty: TRIMSEC/DATASEC", str,
                         OverscanParameters.trimsec)


class DomeFlatFrameParameters(_SectionsChecked, DBObject):
    """How a master dome flat is made (see `targets.calibration.FlatParameters`)."""

    sigma_clip = persistent("Clipping sigma on the stack of median-scaled flats", float,
                            FlatParameters.sigma_clip)
    max_iterations = persistent("Clipping iterations", int, FlatParameters.max_iterations)
    min_frames = persistent("Fewest raw flats accepted", int, FlatParameters.min_frames)
    min_response = persistent("Pixels of a lower normalised response are bad", float,
                              FlatParameters.min_response)
    overscan = persistent("Subtract the overscan (BIASSEC)", bool, OverscanParameters.overscan)
    overscan_statistic = persistent("Overscan level per row: median or clipped_mean", str,
                                    OverscanParameters.overscan_statistic)
    overscan_clip_sigma = persistent("Clipping sigma of clipped_mean", float,
                                     OverscanParameters.overscan_clip_sigma)
    overscan_smooth = persistent("Rows in the running median of the overscan levels", int,
                                 OverscanParameters.overscan_smooth)
    trim = persistent("Cut the frame to TRIMSEC (else DATASEC)", bool, OverscanParameters.trim)
    biassec = persistent("Overscan section instead of the header's; empty: BIASSEC", str,
                         OverscanParameters.biassec)
    trimsec = persistent("Data section instead of the header's; empty: TRIMSEC/DATASEC", str,
                         OverscanParameters.trimsec)


class ReducedScienceFrameParameters(_SectionsChecked, DBObject):
    """How a science frame is reduced (see `targets.reduction.ReductionParameters`)."""

    sigclip = persistent("LACosmic detection limit (Laplacian over noise)", float,
                         ReductionParameters.sigclip)
    sigfrac = persistent("Fraction of sigclip for neighbouring pixels", float,
                         ReductionParameters.sigfrac)
    objlim = persistent("LACosmic contrast limit against fine structure", float,
                        ReductionParameters.objlim)
    niter = persistent("LACosmic iterations", int, ReductionParameters.niter)
    cleantype = persistent("How flagged pixels are replaced (astroscrappy)", str,
                           ReductionParameters.cleantype)
    separable_median = persistent("Use the faster separable median filters", bool,
                                  ReductionParameters.separable_median)
    detect_cosmic_rays = persistent("Find and mask cosmic rays", bool,
                                    ReductionParameters.detect_cosmic_rays)
    min_flat = persistent("Pixels of a lower flat response are bad", float,
                          ReductionParameters.min_flat)
    require_bias = persistent("Refuse to reduce without a master bias", bool,
                              ReductionParameters.require_bias)
    require_flat = persistent("Refuse to reduce without a master flat", bool,
                              ReductionParameters.require_flat)
    overscan = persistent("Subtract the overscan (BIASSEC)", bool, OverscanParameters.overscan)
    overscan_statistic = persistent("Overscan level per row: median or clipped_mean", str,
                                    OverscanParameters.overscan_statistic)
    overscan_clip_sigma = persistent("Clipping sigma of clipped_mean", float,
                                     OverscanParameters.overscan_clip_sigma)
    overscan_smooth = persistent("Rows in the running median of the overscan levels", int,
                                 OverscanParameters.overscan_smooth)
    trim = persistent("Cut the frame to TRIMSEC (else DATASEC)", bool, OverscanParameters.trim)
    biassec = persistent("Overscan section instead of the header's; empty: BIASSEC", str,
                         OverscanParameters.biassec)
    trimsec = persistent("Data section instead of the header's; empty: TRIMSEC/DATASEC", str,
                         OverscanParameters.trimsec)
    background_box = persistent("Mesh of the local background and noise map [pixels]", int,
                                ReductionParameters.background_box)
    background_filter = persistent("Median filter of the background map [meshes]", int,
                                   ReductionParameters.background_filter)
    protect_stars = persistent("Keep the cores of detected stars out of the cosmic-ray mask",
                               bool, ReductionParameters.protect_stars)
    star_threshold = persistent("Star detection threshold [local noise]", float,
                                ReductionParameters.star_threshold)
    star_max_sharpness = persistent("Largest fraction of the 3x3 flux in a star's peak pixel",
                                    float, ReductionParameters.star_max_sharpness)
    star_min_roundness = persistent("Least light beside a star's peak, relative to the most",
                                    float, ReductionParameters.star_min_roundness)
    star_core_radius = persistent("Radius of a protected star core [pixels]", float,
                                  ReductionParameters.star_core_radius)
    bright_peak_snr = persistent("Peak over local noise of a bright star", float,
                                 ReductionParameters.bright_peak_snr)
    star_peak_warning = persistent("Fraction of bright star peaks masked above which the notes "
                                   "warn", float, ReductionParameters.star_peak_warning)


class PointingGridParameters(DBObject):
    """How the common sky grid of a pointing is laid out (see `RegridParameters`)."""

    pixel_scale = persistent("Arcseconds per grid pixel; 0: the frames' median", float,
                             RegridParameters.pixel_scale)
    margin = persistent("Empty pixels around the frames' footprint", int, RegridParameters.margin)
    orientation = persistent("frames: the orientation (and pixels) of the frame nearest the "
                             "centre; north: north up", str, RegridParameters.orientation)


class RegriddedFrameParameters(DBObject):
    """How a frame is resampled onto its pointing's grid (see `RegridParameters`)."""

    order = persistent("Interpolation: bilinear or nearest-neighbor", str, RegridParameters.order)
    conserve_flux = persistent("Scale by the ratio of pixel areas", bool,
                               RegridParameters.conserve_flux)
    subtract_sky = persistent("Subtract the frame's sky level first", bool,
                              RegridParameters.subtract_sky)


class CoaddedRegriddedFrameParameters(DBObject):
    """How the regridded frames of a pointing and filter are stacked (`CoaddParameters`)."""

    crop = persistent("Keep only the part of the grid some frame covers", bool,
                      CoaddParameters.crop)


class SourceListParameters(DBObject):
    """How sources are found and measured (see `targets.extraction.ExtractionParameters`)."""

    threshold = persistent("Detection threshold [pixel noise]", float,
                           ExtractionParameters.threshold)
    min_area = persistent("Fewest connected pixels above threshold", int,
                          ExtractionParameters.min_area)
    deblend_nthresh = persistent("Deblending levels", int, ExtractionParameters.deblend_nthresh)
    deblend_cont = persistent("Deblending contrast", float, ExtractionParameters.deblend_cont)
    clean = persistent("Remove spurious detections near bright ones", bool,
                       ExtractionParameters.clean)
    background_box = persistent("Background mesh size [pixels]", int,
                                ExtractionParameters.background_box)
    background_filter = persistent("Background median filter [meshes]", int,
                                   ExtractionParameters.background_filter)
    kron_factor = persistent("Kron aperture in Kron radii", float, ExtractionParameters.kron_factor)
    min_radius = persistent("Smallest aperture radius [pixels]", float,
                            ExtractionParameters.min_radius)
    calibrate_errors = persistent("Scale flux errors by the empty-aperture noise correlation",
                                  bool, ExtractionParameters.calibrate_errors)
    aperture_correction = persistent("Correct fluxes to the total light of a point source by the "
                                     "image's curve of growth", bool,
                                     ExtractionParameters.aperture_correction)
    total_radius = persistent("Radius of a point source's total light [pixels]", float,
                              ExtractionParameters.total_radius)
    correction_min_stars = persistent("Fewest bright isolated stars for a measured curve of "
                                      "growth (else the compact sources' median curve)", int,
                                      ExtractionParameters.correction_min_stars)
    own_total_min_snr = persistent("Least S/N of a source's own light within total_radius "
                                   "for that light to be its total flux", float,
                                   ExtractionParameters.own_total_min_snr)
    carry_rows = persistent("On a remake after a region retraction, carry the previous "
                            "version's rows that no retracted cell reached and re-measure only "
                            "the others (targets.carried_rows); off: extract the whole coadd "
                            "again", bool, True)
