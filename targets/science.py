"""Science frames as process targets: reduced frames (bias, flat, cosmic rays, weight map), the
common sky grid of a pointing, frames regridded onto it, and their coadd per pointing and
filter. Each make records region lineage with the ready-made operators."""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Iterator

import numpy as np
from astropy.wcs import WCS

from awlineage import (
    DataObject,
    Footprint,
    Needs,
    OnePer,
    OnePerGroup,
    Process,
    capture_regions,
    elementwise,
    flagged_with_globals,
    global_summary,
    persistent,
    reduce,
    stack,
)
from targets.coadd import CoaddParameters, coadd
from targets.cosmic_lineage import lineage_radius_at
from targets.errors import GridError
from targets.footprints import set_footprint
from targets.frame_quality import flag, saturated_note
from targets.images import read_hdu, read_hdus, store_image
from targets.masters import (
    BiasFrame,
    DomeFlatFrame,
    calibration_needed,
    corrected_raws,
    trimmed_arrays,
)
from targets.parameters import (
    CoaddedRegriddedFrameParameters,
    PointingGridParameters,
    ReducedScienceFrameParameters,
    RegriddedFrameParameters,
    stage_parameters,
)
from targets.raw_frames import RawScienceFrame
from targets.reduction import (
    ReducedImage,
    ReductionParameters,
    at_or_above,
    background_mesh,
    cosmic_ray_reach,
    reduce_science,
)
from targets.region_operators import PlaceOnGrid, WcsResample
from targets.regrid import (
    PixelTransform,
    RegriddedImage,
    RegridParameters,
    SkyGrid,
    grid_for_frames,
    regrid,
)
from targets.retracted_pixels import retracted_pixels

_FRAME_COPY = ("chip", "filter", "obs_date", "object_name")


class ScienceProduct(Process, DataObject):
    """What the products of one raw science frame share: the frame and its header values."""

    __abstract__ = True
    file_extension = ".fits"

    raw = persistent("The raw science frame", RawScienceFrame, None)
    chip = persistent("CCD", str, "", index=True)
    filter = persistent("Filter", str, "", index=True)
    obs_date = persistent("Start of the exposure, UTC", datetime.datetime, None)
    object_name = persistent("Field observed", str, "", index=True)
    footprint = persistent("Sky covered by the product's pixels (from their WCS); None: no "
                           "WCS", Footprint, None)


def _calibration_required(step: str) -> Callable[[ReducedScienceFrame], str | None]:
    """A ``blocked_when`` check: no master `step` could be had, and the parameters demand
    one (``require_bias``, ``require_flat``)."""
    def check(target: ReducedScienceFrame) -> str | None:
        if getattr(target, step) is not None or \
                not getattr(target.process_params, f"require_{step}"):
            return None
        raw = target.raw
        return (f"no master {step} covers raw frame {raw.original_name} (chip {raw.chip!r}, "
                f"filter {raw.filter!r}, taken {raw.obs_date}), and the parameters require "
                f"one (require_{step}=True)")

    return check


class ReducedScienceFrame(ScienceProduct):
    """A raw science frame with the bias subtracted, divided by the flat, cosmic rays found
    (LACosmic) and masked; HDUs: the image, WEIGHT (inverse variance), MASK."""

    identity = ("raw",)
    targets = OnePer(RawScienceFrame, link="raw", copy=_FRAME_COPY)
    requires = {"bias": calibration_needed(BiasFrame, ("chip",)),
                "flat": calibration_needed(DomeFlatFrame, ("chip", "filter"))}
    blocked_when = {"no master bias, and the parameters require one":
                    _calibration_required("bias"),
                    "no master flat, and the parameters require one":
                    _calibration_required("flat")}

    bias = persistent("Master bias subtracted (None: none could be had)", BiasFrame, None)
    flat = persistent("Master flat divided (None: none could be had)", DomeFlatFrame, None)
    sky_level = persistent("Sky level [ADU]", float, None)
    sky_noise = persistent("Sky noise [ADU]", float, None)
    cosmic_ray_pixels = persistent("Pixels flagged as cosmic rays", int, None)
    star_peaks = persistent("Bright star peaks found before cosmic-ray cleaning", int, None)
    star_peaks_masked = persistent("Bright star peaks masked as cosmic rays", int, None)
    steps = persistent("Steps applied: overscan, trim, bias, flat, cosmic_rays", str, [])
    notes = persistent("Steps skipped and why", str, [])
    process_params = persistent("Processing parameters", ReducedScienceFrameParameters, None)
    trim_origin = persistent("Raw (row, column) of the frame's pixel (0, 0) after trimming",
                             int, [])

    def make(self) -> None:
        name = self.raw.original_name
        frame = corrected_raws([self.raw], self.process_params, f"reduction of {name}")[0]
        bias = None if self.bias is None else read_hdu(self.bias)[0]
        flat = None if self.flat is None else read_hdu(self.flat)[0]
        parameters = stage_parameters(self.process_params, ReductionParameters)
        # saturation is a raw level: flag it on the raw pixels, and give LACosmic the level
        # above the overscan
        reduced = reduce_science(frame.data, bias=bias, flat=flat,
                                 gain=self.raw.electrons_per_unit,
                                 saturation=self.raw.saturation - frame.level,
                                 parameters=parameters, header=frame.header,
                                 bad=at_or_above(frame.raw_trimmed, self.raw.saturation),
                                 name=name)
        self.sky_level, self.sky_noise = reduced.sky.level, reduced.sky.noise
        self.cosmic_ray_pixels = int(reduced.cosmic_rays.sum())
        self.steps = [*(["overscan"] if frame.layout.overscan is not None else []),
                      *(["trim"] if frame.layout.is_trimmed else []),
                      *reduced.applied]
        self.notes = flag([*frame.notes, *reduced.notes],
                          saturated_note(frame.raw_trimmed, self.raw.saturation, name))
        self.trim_origin = list(frame.layout.origin)
        peaks, sky_map = reduced.star_peaks, reduced.background
        assert peaks is not None and sky_map is not None  # reduce_science measures both
        self.star_peaks, self.star_peaks_masked = (peaks.count, peaks.masked)
        problem = set_footprint(self, reduced_wcs(self, reduced.data.shape), reduced.data.shape)
        self.notes = [*self.notes, *([problem] if problem else [])]
        mesh = background_mesh(sky_map, parameters.background_box)
        weight, mask = reduced.weight, reduced.mask
        excluded = retracted_pixels(self.raw, [self.bias, self.flat], reduced.data.shape,
                                    (self.trim_origin[0], self.trim_origin[1]))
        if excluded.mask.any():
            weight = np.where(excluded.mask, weight.dtype.type(0), weight)
            mask = mask | excluded.mask
            self.notes = [*self.notes, *excluded.notes]
        store_image(self, reduced.data, reduced.header, WEIGHT=weight, MASK=mask,
                    BACKGROUND=mesh)
        with capture_regions(self) as capture:
            shape = frame.data.shape
            image = trimmed_arrays(capture, [self.raw], [frame])[0]
            if self.bias is not None:  # pixel by pixel
                image = capture.apply(elementwise(), [image, capture.array(self.bias,
                                                                           shape=shape)],
                                      name="debiased")
            if self.flat is not None:
                image = capture.apply(elementwise(), [image, capture.array(self.flat,
                                                                           shape=shape)],
                                      name="flattened")
            # one to one, except cosmic-ray pixels: what their cleaned value and their flag
            # were computed from (targets.cosmic_lineage), and the background maps (global)
            background = capture.apply(global_summary(BACKGROUND_GLOBAL), [],
                                       hdu="BACKGROUND", shape=mesh.shape)
            call = capture.operator(flagged_with_globals([BACKGROUND_USE]),
                                    [image, background], hdu=0)
            hits = np.argwhere(reduced.cosmic_rays)
            if len(hits):
                call.lwrite_payload(hits, cosmic_ray_radii(reduced, hits, parameters,
                                                           self.raw.saturation))
            call.close()


BACKGROUND_GLOBAL = (
    "the local sky level and noise maps of the frame (sep.Background, at their mesh centres: "
    "level, noise), computed from every unmasked pixel of the frame after bias and flat; "
    "LACosmic also uses the median of those pixels")
BACKGROUND_USE = (
    "BACKGROUND: a flag is set against the noise of these maps, and the star cores kept from "
    "flagging are sep detections on them; a flagged pixel whose 5x5 box has no unmasked pixel "
    "gets the median of the frame's unmasked pixels")


def cosmic_ray_radii(reduced: ReducedImage, hits: np.ndarray, parameters: ReductionParameters,
                     saturation: float) -> np.ndarray:
    """Per flagged pixel (`hits`, (N, 2)), the radius of the input it depends on
    (`targets.cosmic_lineage.lineage_radius`; the static `cosmic_ray_reach` without a
    trace)."""
    trace = reduced.cosmic_ray_trace
    if trace is None or trace.iteration is None:
        return np.full(len(hits), cosmic_ray_reach(parameters))
    return lineage_radius_at(trace.iteration, hits + trace.pad, parameters,
                             math.isfinite(saturation))


def _has_wcs(raw: RawScienceFrame) -> bool:
    return bool(raw.wcs_header)


def reduced_wcs(reduced: ReducedScienceFrame, shape: tuple[int, ...]) -> WCS | None:
    """The celestial WCS of a reduced frame's pixels: its raw frame's, shifted by the trim."""
    wcs = reduced.raw.wcs
    if wcs is None:
        return None
    row0, col0 = reduced.trim_origin or (0, 0)
    if (row0, col0) == (0, 0) and tuple(shape) == reduced.raw.shape:
        return wcs
    return wcs.slice((slice(row0, row0 + shape[0]), slice(col0, col0 + shape[1])))


def _without_wcs(target: RegriddedFrame) -> str | None:
    """A ``blocked_when`` check: a frame without a WCS cannot be regridded."""
    if _has_wcs(target.raw):
        return None
    return (f"raw frame {target.raw.original_name} has no WCS, so it cannot be put on a "
            "sky grid")


class PointingGrid(Process):
    """The common sky grid of a pointing, laid out from all its frames (every filter)."""

    identity = ("object_name",)
    targets = OnePerGroup(RawScienceFrame, link="raw_frames", by=("object_name",),
                          where=_has_wcs)

    raw_frames = persistent("The pointing's raw science frames with a WCS", RawScienceFrame,
                            [])
    object_name = persistent("Field observed", str, "", index=True)
    ra = persistent("Centre, right ascension (ICRS) [deg]", float, None)
    dec = persistent("Centre, declination (ICRS) [deg]", float, None)
    pixel_scale = persistent("Pixel scale [arcsec]", float, None)
    rotation = persistent("Angle from north to the grid's rows-increasing axis (CROTA2) [deg]",
                          float, 0.0)
    rows = persistent("Rows of the grid", int, None)
    cols = persistent("Columns of the grid", int, None)
    stretch = persistent("A pixel's column step over the pixel scale (SkyGrid.stretch)",
                         float, 1.0)
    shear = persistent("A pixel's row step aside, in pixel scales (SkyGrid.shear)", float, 0.0)
    process_params = persistent("Processing parameters", PointingGridParameters, None)

    def make(self) -> None:
        frames = sorted(self.raw_frames, key=lambda f: f.original_name)
        grid = grid_for_frames([f.wcs for f in frames], [f.shape for f in frames],
                               stage_parameters(self.process_params, RegridParameters))
        self.ra, self.dec, self.pixel_scale = grid.ra, grid.dec, grid.pixel_scale
        self.rows, self.cols, self.rotation = grid.rows, grid.cols, grid.rotation
        self.stretch, self.shear = grid.stretch, grid.shear

    def sky_grid(self) -> SkyGrid:
        """The grid as the regridding functions take it."""
        return SkyGrid(self.ra, self.dec, self.pixel_scale, self.rows, self.cols,
                       self.rotation or 0.0, self.stretch or 1.0, self.shear or 0.0)


class RegriddedFrame(ScienceProduct):
    """A reduced frame resampled onto its pointing's grid (the part it covers); HDUs: the
    image (sky subtracted) and WEIGHT."""

    identity = ("raw",)
    targets = OnePer(ReducedScienceFrame, link="reduced", copy=("raw", *_FRAME_COPY))
    requires = {"grid": Needs(PointingGrid, match=("object_name",))}
    blocked_when = {"the raw frame has no WCS": _without_wcs}

    reduced = persistent("The reduced frame resampled", ReducedScienceFrame, None)
    grid = persistent("The pointing's sky grid", PointingGrid, None)
    origin_row = persistent("Grid row of the image's row 0", int, None)
    origin_col = persistent("Grid column of the image's column 0", int, None)
    scale = persistent("Factor to electrons per second (gain / exposure time; the gain for "
                       "pixels that are a rate)", float, None)
    process_params = persistent("Processing parameters", RegriddedFrameParameters, None)

    def make(self) -> None:
        (data, header), (weight, _) = read_hdus(self.reduced, (0, "WEIGHT"))
        parameters = stage_parameters(self.process_params, RegridParameters)
        grid, wcs = self.grid.sky_grid(), reduced_wcs(self.reduced, data.shape)
        image = regrid(data, weight, wcs, grid, parameters, header, self.reduced.sky_level)
        self.origin_row, self.origin_col = image.origin
        self.scale = self.raw.electrons_per_second
        set_footprint(self, image.wcs, image.data.shape)  # a TAN grid: always one
        store_image(self, image.data, image.header, WEIGHT=image.weight)
        # lineage from the WCSs at query time (map mode): nothing stored, no capture cost
        transform = PixelTransform(wcs, data.shape, grid, image.origin, parameters.order)
        with capture_regions(self) as capture:
            capture.apply(WcsResample.for_regrid(transform),
                          [capture.array(self.reduced, shape=data.shape)],
                          shape=image.data.shape)


Placement = tuple[tuple[int, int], tuple[int, ...]]
"""Where a regridded frame lies on its grid: the grid row and column of its pixel (0, 0), and
its shape."""


def read_regridded(frames: list[RegriddedFrame], grid: SkyGrid,
                   placements: list[Placement]) -> Iterator[RegriddedImage]:
    """The image of each frame of `frames` on `grid`, read from its file only when the one
    before has been taken, so that a coadd holds one frame at a time, not the whole stack (a
    Spark worker making a medium demo night's coadd of 16 frames held 452 MB, proportional
    set size, against 162-208 MB read so); each frame's placement is appended to
    `placements` as it is read."""
    for frame in frames:
        (data, header), (weight, _) = read_hdus(frame, (0, "WEIGHT"))
        origin = (frame.origin_row, frame.origin_col)
        placements.append((origin, data.shape))
        yield RegriddedImage(data, weight, origin, grid, header)


class CoaddedRegriddedFrame(Process, DataObject):
    """The weighted mean of the regridded frames of one pointing and filter, in electrons per
    second; HDUs: the image, WEIGHT, COUNT (frames per pixel)."""

    file_extension = ".fits"
    identity = ("object_name", "filter")
    targets = OnePerGroup(RegriddedFrame, link="regridded_frames", by=("object_name", "filter"))

    regridded_frames = persistent("The frames stacked", RegriddedFrame, [])
    object_name = persistent("Field observed", str, "", index=True)
    filter = persistent("Filter", str, "", index=True)
    nframes = persistent("Frames stacked", int, None)
    origin_row = persistent("Grid row of the image's row 0", int, None)
    origin_col = persistent("Grid column of the image's column 0", int, None)
    footprint = persistent("Sky covered by the coadd's pixels (the grid's WCS)", Footprint,
                           None)
    process_params = persistent("Processing parameters", CoaddedRegriddedFrameParameters, None)

    def make(self) -> None:
        frames = sorted(self.regridded_frames, key=lambda f: f.raw.original_name)
        if not frames:
            raise GridError(f"coadd of {self.object_name} {self.filter}: no regridded frames")
        grid = frames[0].grid.sky_grid()
        placements: list[Placement] = []
        result = coadd(read_regridded(frames, grid, placements), [f.scale for f in frames],
                       stage_parameters(self.process_params, CoaddParameters),
                       unit="electron/s")
        self.nframes = result.nframes
        self.origin_row, self.origin_col = result.origin
        set_footprint(self, result.wcs, result.data.shape)  # a TAN grid: always one
        store_image(self, result.data, result.header, WEIGHT=result.weight, COUNT=result.count)
        self._record_regions(frames, placements, result.data.shape)

    def _record_regions(self, frames: list[RegriddedFrame], placements: list[Placement],
                        shape: tuple[int, int]) -> None:
        """Each coadd pixel depends on the same sky pixel of every frame covering it: each
        frame is placed on the coadd's pixels (a translation), then they are stacked."""
        with capture_regions(self) as capture:
            placed = []
            for number, (frame, (origin, frame_shape)) in enumerate(
                    zip(frames, placements, strict=True)):
                offset = (self.origin_row - origin[0], self.origin_col - origin[1])
                placed.append(capture.apply(PlaceOnGrid(offset), [capture.array(
                    frame, shape=frame_shape)], name=f"placed{number}", shape=shape))
            cube = capture.apply(stack(), placed, name="cube")
            capture.apply(reduce(0), [cube])


__all__ = ["CoaddedRegriddedFrame", "PointingGrid", "ReducedScienceFrame", "RegriddedFrame"]
