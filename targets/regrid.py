"""Regridding: the common sky grid of a pointing, resampling a reduced frame onto it with
reproject (only the part of the grid the frame covers, with its offset), and the pixel transform
from output pixels back to input pixels that region lineage needs.

Pixel coordinates follow numpy: (row, column), 0-based, pixel centres at integers. The grid is
in ICRS; a frame's WCS in FK5 or FK4 (with its equinox and epoch) is converted to ICRS wherever
the grid is built or placed (`icrs_of_pixels`, `pixels_of_icrs`), as reproject converts it when
it resamples: taking FK5 numbers as ICRS moved a frame 0.13-0.17 px from its own grid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from astropy.coordinates import ICRS, SkyCoord
from astropy.io import fits
from astropy.wcs import WCS
from astropy.wcs.utils import (
    pixel_to_pixel,
    proj_plane_pixel_scales,
    wcs_to_celestial_frame,
)
from reproject import reproject_interp

from targets.errors import GridError
from targets.fitsio import derived_header, with_wcs

ORDERS = ("nearest-neighbor", "bilinear")
ORIENTATIONS = ("frames", "north")


@dataclass(frozen=True)
class SkyGrid:
    """A TAN pixel grid on the sky, east left of north, turned by `rotation`.

    Attributes
    ----------
    ra, dec
        Centre of the grid (ICRS, degrees); it falls on the centre of the middle pixel.
    pixel_scale
        Arcseconds per pixel.
    rows, cols
        Size of the whole grid.
    rotation
        Angle from north to the grid's rows-increasing axis, as FITS's CROTA2 [deg]; 0 is
        north up.
    stretch, shear
        The pixels' shape, for a grid that follows a frame whose pixels are not square (or
        whose projection stretches them there, as a ZPN does off its axis): a pixel's step
        along the columns is `stretch` pixel scales long; along the rows it is
        1/`stretch` long and `shear` pixel scales aside. Square pixels: 1 and 0.
    """

    ra: float
    dec: float
    pixel_scale: float
    rows: int
    cols: int
    rotation: float = 0.0
    stretch: float = 1.0
    shear: float = 0.0

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols)."""
        return self.rows, self.cols

    def wcs(self, origin: tuple[int, int] = (0, 0)) -> WCS:
        """The WCS of the grid, or of the part of it whose pixel (0, 0) is grid pixel
        `origin` = (row, col)."""
        wcs = WCS(naxis=2)
        wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
        wcs.wcs.cunit = ["deg", "deg"]
        wcs.wcs.crval = [self.ra, self.dec]
        wcs.wcs.crpix = [(self.cols + 1) / 2 - origin[1], (self.rows + 1) / 2 - origin[0]]
        scale = self.pixel_scale / 3600.0
        cos, sin = math.cos(math.radians(self.rotation)), math.sin(math.radians(self.rotation))
        turn = np.array([[-cos, -sin], [-sin, cos]])  # east left of north, turned
        shape = np.array([[self.stretch, self.shear], [0.0, 1.0 / self.stretch]])
        wcs.wcs.cd = scale * turn @ shape
        wcs.wcs.radesys = "ICRS"
        wcs.wcs.equinox = 2000.0
        wcs.wcs.set()
        return wcs


@dataclass(frozen=True)
class RegridParameters:
    """How frames are regridded.

    Attributes
    ----------
    pixel_scale
        Arcseconds per grid pixel; 0 takes the median pixel scale of the frames.
    margin
        Empty pixels around the frames' combined footprint.
    orientation
        "frames": the grid takes the orientation of the frame nearest the frames' mean
        centre, and when that frame's pixels are the grid's size it is centred on one of them,
        so the frame's pixels fall on the grid's and resampling it moves no light (a half-pixel
        shift, which a grid centred between pixels gives any even-sized frame, averages four
        pixels into each: 5% of the light of an undersampled star left its aperture).
        "north": north up, centred on the frames' mean centre.
    order
        Interpolation: "bilinear" (each output pixel from the 2x2 nearest inputs) or
        "nearest-neighbor". Spline orders are not offered: they make every output pixel depend
        on the whole input, which region lineage could not narrow.
    conserve_flux
        Scale values by the ratio of pixel areas so that a star's summed flux is unchanged
        when the grid's pixels differ in size from the frame's.
    subtract_sky
        Subtract the frame's sky level first, so frames of different sky brightness stack
        without steps where their coverage changes.
    """

    pixel_scale: float = 0.0
    margin: int = 8
    orientation: str = "frames"
    order: str = "bilinear"
    conserve_flux: bool = True
    subtract_sky: bool = True

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise ValueError(f"RegridParameters.order must be one of {ORDERS}, got {self.order!r}")
        if self.orientation not in ORIENTATIONS:
            raise ValueError(f"RegridParameters.orientation must be one of {ORIENTATIONS}, got "
                             f"{self.orientation!r}")
        if self.pixel_scale < 0 or self.margin < 0:
            raise ValueError("RegridParameters.pixel_scale and margin must not be negative")


@dataclass
class RegriddedImage:
    """A frame on a part of a sky grid.

    Attributes
    ----------
    data
        float32, on the sub-grid; 0 where the frame gives nothing.
    weight
        float32 inverse variance, 0 where the frame gives nothing or only masked pixels.
    origin
        (row, col) of the sub-grid's pixel (0, 0) in the whole grid.
    grid
        The whole grid.
    header
        The input header with the sub-grid's WCS (None when no header was given).
    """

    data: np.ndarray
    weight: np.ndarray
    origin: tuple[int, int]
    grid: SkyGrid
    header: fits.Header | None = None

    @property
    def wcs(self) -> WCS:
        """The WCS of the sub-grid."""
        return self.grid.wcs(self.origin)


def icrs_of_pixels(wcs: WCS, x: np.ndarray | float, y: np.ndarray | float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """ICRS right ascension and declination (degrees) of pixels of a frame.

    Parameters
    ----------
    wcs
        The frame's WCS; its celestial frame (ICRS, FK5 or FK4 with its equinox, the epoch of
        observation for FK4) as astropy reads it from RADESYS, RADECSYS, EQUINOX, EPOCH and
        DATE-OBS.
    x, y
        0-based pixel coordinates (column, row).

    Returns
    -------
    tuple of numpy.ndarray
        (ra, dec) in ICRS.
    """
    celestial = wcs.celestial
    if isinstance(wcs_to_celestial_frame(celestial), ICRS):
        ra, dec = celestial.pixel_to_world_values(x, y)
        return np.asarray(ra), np.asarray(dec)
    sky = SkyCoord(celestial.pixel_to_world(x, y)).icrs
    return np.asarray(sky.ra.deg), np.asarray(sky.dec.deg)


def pixels_of_icrs(wcs: WCS, ra: np.ndarray | float, dec: np.ndarray | float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The 0-based pixel coordinates (column, row) in a frame of ICRS positions (degrees):
    the inverse of `icrs_of_pixels`.

    Parameters
    ----------
    wcs
        The frame's WCS.
    ra, dec
        ICRS right ascension and declination, degrees.

    Returns
    -------
    tuple of numpy.ndarray
        (x, y) pixel coordinates.
    """
    celestial = wcs.celestial
    frame = wcs_to_celestial_frame(celestial)
    if isinstance(frame, ICRS):
        x, y = celestial.world_to_pixel_values(ra, dec)
    else:
        x, y = celestial.world_to_pixel(SkyCoord(ra, dec, unit="deg", frame="icrs"))
    return np.asarray(x), np.asarray(y)


def grid_for_frames(wcs_list: Sequence[WCS], shapes: Sequence[tuple[int, int]],
                    parameters: RegridParameters | None = None) -> SkyGrid:
    """The common grid of a pointing, covering all its frames: centred on the frames' mean
    centre, or on the pixel there of the frame nearest it and turned as that frame is
    (`RegridParameters.orientation`).

    The result depends only on the set of frames, not on their order, so every frame of a
    pointing can compute the same grid independently.

    Raises
    ------
    GridError
        No frames, a frame without a celestial WCS, or shapes and WCSs of different counts.
    """
    parameters = parameters or RegridParameters()
    if not wcs_list or len(wcs_list) != len(shapes):
        raise GridError(f"a sky grid needs frames: got {len(wcs_list)} WCS and {len(shapes)} "
                        "shapes")
    for index, wcs in enumerate(wcs_list):
        if wcs is None or not wcs.has_celestial:
            raise GridError(f"frame {index} has no celestial WCS; it cannot be put on a sky grid")
    centres = [_icrs_point(wcs, (shape[1] - 1) / 2, (shape[0] - 1) / 2)
               for wcs, shape in zip(wcs_list, shapes, strict=True)]
    vectors = sorted(_unit_vector(ra, dec) for ra, dec in centres)
    x, y, z = (math.fsum(v[i] for v in vectors) for i in range(3))
    ra = math.degrees(math.atan2(y, x)) % 360.0
    dec = math.degrees(math.atan2(z, math.hypot(x, y)))
    # rounded to 7 significant digits, not to 0.1 mas: that was 0.25% of an HST pixel, enough
    # for a frame's pixels not to count as the grid's size
    median = float(np.median([_local_scale(wcs, shape)
                              for wcs, shape in zip(wcs_list, shapes, strict=True)]))
    scale = parameters.pixel_scale or float(f"{median:.7g}")
    form = (1.0, 0.0)  # the pixels' stretch and shear
    if parameters.orientation == "frames":
        ra, dec, rotation, scale, form = _follow_frame(
            wcs_list, shapes, centres, ra, dec, scale, exact_scale=not parameters.pixel_scale)
    else:
        ra, dec, rotation = round(ra, 9), round(dec, 9), 0.0
    probe = SkyGrid(ra, dec, scale, 1, 1, rotation, *form).wcs()  # pixel (0, 0) on the centre
    half_cols = half_rows = 0.0
    for wcs, shape in zip(wcs_list, shapes, strict=True):
        ra_edge, dec_edge = icrs_of_pixels(wcs, *_border(shape)[::-1])
        x_edge, y_edge = probe.world_to_pixel_values(ra_edge, dec_edge)
        half_cols = max(half_cols, float(np.max(np.abs(x_edge))))
        half_rows = max(half_rows, float(np.max(np.abs(y_edge))))
    cols = 2 * math.ceil(half_cols + parameters.margin) + 1
    rows = 2 * math.ceil(half_rows + parameters.margin) + 1
    return SkyGrid(ra, dec, scale, rows, cols, rotation, *form)


_SAME_SCALE = 1e-3
"""Relative difference of pixel scales below which a frame's pixels are the grid's size."""


def _follow_frame(wcs_list: Sequence[WCS], shapes: Sequence[tuple[int, int]],
                  centres: list[tuple[float, float]], ra: float, dec: float,
                  scale: float, exact_scale: bool = True
                  ) -> tuple[float, float, float, float, tuple[float, float]]:
    """Centre, rotation and pixel scale of a grid that follows the frame nearest (`ra`,
    `dec`), the frames' mean centre (ties to the smaller centre, so the order of the frames
    does not matter): its pixel nearest that centre becomes the grid's middle pixel when its
    pixels are `scale` arcseconds (within `_SAME_SCALE`), mirrored or not; the rotation is the
    frame's there. The grid's pixels then take the frame's shape there (`SkyGrid.stretch`,
    `SkyGrid.shear`) and, with `exact_scale` (a scale the frames chose, not the user), its
    size, not the rounded median: 0.05% of difference moved the edge of a 500-pixel HST frame
    by a quarter pixel, and a ZPN frame's pixels 0.4% longer one way than the other moved its
    edge by a pixel, which resampling spread out (peaks 5.6% and 15% low)."""
    target = np.array(_unit_vector(ra, dec))
    nearest = min(range(len(wcs_list)), key=lambda i: (
        -float(np.dot(_unit_vector(float(centres[i][0]), float(centres[i][1])), target)),
        float(centres[i][0]), float(centres[i][1])))
    wcs, (rows, cols) = wcs_list[nearest].celestial, shapes[nearest]
    col, row = (float(v) for v in pixels_of_icrs(wcs, ra, dec))
    anchor_col = min(max(round(col), 0), cols - 1) if math.isfinite(col) else (cols - 1) // 2
    anchor_row = min(max(round(row), 0), rows - 1) if math.isfinite(row) else (rows - 1) // 2
    ra_anchor, dec_anchor = _icrs_point(wcs, anchor_col, anchor_row)
    # one-pixel steps of the frame, in pixels of a north-up grid of `scale` on the anchor
    # (central differences: exact for the frame's local scale, distortion and all)
    probe = SkyGrid(ra_anchor, dec_anchor, scale, 1, 1).wcs()
    step_x, step_y = probe.world_to_pixel_values(*icrs_of_pixels(
        wcs, anchor_col + np.array([0.5, -0.5, 0.0, 0.0]),
        anchor_row + np.array([0.0, 0.0, 0.5, -0.5])))
    jacobian = np.array([[step_x[0] - step_x[1], step_x[2] - step_x[3]],
                         [step_y[0] - step_y[1], step_y[2] - step_y[3]]])  # columns: steps
    if np.linalg.det(jacobian) < 0:
        # a mirrored frame (east right): its lattice mirrored is the same lattice, so the
        # grid takes the rotation of the mirror image and still falls on the frame's pixels
        jacobian = jacobian @ np.diag([-1.0, 1.0])
    # jacobian = size * turn(rotation) @ [[stretch, shear], [0, 1 / stretch]] (as SkyGrid.wcs)
    angle = math.atan2(-jacobian[1, 0], jacobian[0, 0])
    size = math.sqrt(abs(np.linalg.det(jacobian)))
    cos, sin = math.cos(angle), math.sin(angle)
    shape = np.array([[cos, -sin], [sin, cos]]) @ jacobian / size
    rotation = round(math.degrees(angle), 9)
    if abs(size - 1.0) < _SAME_SCALE:
        own = round(scale * size, 10) if exact_scale else scale
        return (round(ra_anchor % 360.0, 10), round(dec_anchor, 10), rotation, own,
                (round(float(shape[0, 0]), 12), round(float(shape[0, 1]), 12)))
    return round(ra, 9), round(dec, 9), rotation, scale, (1.0, 0.0)


def footprint_box(wcs_in: WCS, shape_in: tuple[int, int],
                  grid: SkyGrid) -> tuple[int, int, int, int]:
    """The part of `grid` a frame covers, as (row0, col0, rows, cols), one pixel of slack on
    each side, clipped to the grid.

    Raises
    ------
    GridError
        When the frame does not overlap the grid.
    """
    ra_edge, dec_edge = icrs_of_pixels(wcs_in, *_border(shape_in, 33)[::-1])
    x, y = grid.wcs().world_to_pixel_values(ra_edge, dec_edge)
    finite = np.isfinite(x) & np.isfinite(y)  # points beyond the projection's horizon are not
    if not finite.any():
        raise GridError(f"the frame does not overlap the grid centred on ({grid.ra:.6f}, "
                        f"{grid.dec:.6f}): it lies beyond the projection")
    x, y = x[finite], y[finite]
    row0 = max(math.floor(np.min(y)) - 1, 0)
    col0 = max(math.floor(np.min(x)) - 1, 0)
    row1 = min(math.ceil(np.max(y)) + 1, grid.rows - 1)
    col1 = min(math.ceil(np.max(x)) + 1, grid.cols - 1)
    if row1 < row0 or col1 < col0:
        raise GridError(f"the frame does not overlap the grid centred on ({grid.ra:.6f}, "
                        f"{grid.dec:.6f})")
    return row0, col0, row1 - row0 + 1, col1 - col0 + 1


def regrid(data: np.ndarray, weight: np.ndarray, wcs_in: WCS | None, grid: SkyGrid,
           parameters: RegridParameters | None = None, header: fits.Header | None = None,
           sky_level: float = 0.0) -> RegriddedImage:
    """Resample a reduced frame and its weight map onto the part of `grid` it covers.

    Values are interpolated as weight * data and weight separately and divided afterwards, so a
    pixel of weight 0 (a cosmic ray, a bad column) lends nothing to its neighbours. With
    `parameters.subtract_sky`, `sky_level` (the reduced frame's) is subtracted first.

    Raises
    ------
    GridError
        No WCS, or no overlap with the grid.
    ValueError
        `data` and `weight` of different shapes.
    """
    parameters = parameters or RegridParameters()
    if wcs_in is None or not wcs_in.has_celestial:
        raise GridError("regrid: the frame has no celestial WCS")
    if data.shape != weight.shape:
        raise ValueError(f"regrid: data shape {data.shape} differs from weight shape "
                         f"{weight.shape}")
    row0, col0, rows, cols = footprint_box(wcs_in, data.shape, grid)
    out_wcs = grid.wcs((row0, col0))
    weight = np.where(np.isfinite(weight) & np.isfinite(data), weight, 0.0)
    sky = sky_level if parameters.subtract_sky else 0.0
    stack = np.stack([np.where(weight > 0, (data - sky) * weight, 0.0), weight]).astype(
        np.float64)
    resampled, footprint = reproject_interp((stack, wcs_in), out_wcs, shape_out=(rows, cols),
                                            order=parameters.order, return_footprint=True)
    product = np.nan_to_num(resampled[0], nan=0.0)
    out_weight = np.nan_to_num(resampled[1], nan=0.0) * (footprint[1] > 0)
    out_weight[out_weight < 1e-6 * max(float(out_weight.max()), 1e-30)] = 0.0
    out_data = np.divide(product, out_weight, out=np.zeros_like(product), where=out_weight > 0)
    if parameters.conserve_flux:
        # the frame's pixel area where it is, not at its reference pixel: a ZPN chip's pixels
        # far from the axis are 0.8% smaller than there, and its stars came out 0.8% bright
        ratio = grid.pixel_scale**2 / _local_scale(wcs_in, data.shape) ** 2
        out_data *= ratio
        out_weight /= ratio**2
    out_header = None if header is None else derived_header(with_wcs(header, out_wcs), {
        "GRIDRA": (grid.ra, "[deg] centre of the common sky grid"),
        "GRIDDEC": (grid.dec, "[deg] centre of the common sky grid"),
        "GRIDSCAL": (grid.pixel_scale, "[arcsec] pixel scale of the grid"),
        "GRIDROT": (grid.rotation, "[deg] rotation of the grid from north (CROTA2)"),
        "GRIDSTRE": (grid.stretch, "pixel's column step over the pixel scale"),
        "GRIDSHEA": (grid.shear, "pixel's row step aside, in pixel scales"),
        "GRIDROWS": (grid.rows, "rows of the whole grid"),
        "GRIDCOLS": (grid.cols, "columns of the whole grid"),
        "GRIDROW0": (row0, "grid row of this image's row 0"),
        "GRIDCOL0": (col0, "grid column of this image's column 0"),
        "SKYSUB": (float(sky), "[ADU] sky level subtracted before regridding"),
    }, f"awlineage regrid: {parameters.order} onto the common sky grid")
    return RegriddedImage(out_data.astype(np.float32), out_weight.astype(np.float32),
                          (row0, col0), grid, out_header)


def grid_from_header(header: fits.Header) -> tuple[SkyGrid, tuple[int, int]]:
    """The grid and origin a regridded frame's header records (see `regrid`)."""
    try:
        grid = SkyGrid(float(header["GRIDRA"]), float(header["GRIDDEC"]),
                       float(header["GRIDSCAL"]), int(header["GRIDROWS"]),
                       int(header["GRIDCOLS"]), float(header.get("GRIDROT", 0.0)),
                       float(header.get("GRIDSTRE", 1.0)), float(header.get("GRIDSHEA", 0.0)))
        return grid, (int(header["GRIDROW0"]), int(header["GRIDCOL0"]))
    except KeyError as exc:
        raise GridError(f"the header records no sky grid: {exc.args[0]} missing") from None


class PixelTransform:
    """Where each output pixel of a regridded frame comes from in the input frame.

    Vectorised and picklable (it keeps the WCSs as header text), so region lineage can call
    it on whole arrays of output pixels, on any executor.

    Parameters
    ----------
    wcs_in
        The input frame's WCS.
    shape_in
        The input frame's (rows, cols).
    grid, origin
        The sky grid and the (row, col) of the regridded image's pixel (0, 0) in it.
    order
        The interpolation used by `regrid`.
    """

    def __init__(self, wcs_in: WCS, shape_in: tuple[int, int], grid: SkyGrid,
                 origin: tuple[int, int], order: str = "bilinear") -> None:
        if order not in ORDERS:
            raise ValueError(f"PixelTransform: order must be one of {ORDERS}, got {order!r}")
        self.wcs_in_text = wcs_in.celestial.to_header_string(relax=True)
        """The input frame's celestial WCS as FITS header text."""
        self.shape_in = tuple(shape_in)
        self.grid = grid
        self.origin = cast(tuple[int, int], tuple(origin))  # (row, col)
        self.order = order
        self._wcs_cache: tuple[WCS, WCS] | None = None

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_wcs_cache"] = None
        return state

    def _wcs(self) -> tuple[WCS, WCS]:
        if self._wcs_cache is None:
            self._wcs_cache = (self.grid.wcs(self.origin),
                               WCS(fits.Header.fromstring(self.wcs_in_text)))
        return self._wcs_cache

    def __call__(self, rows: np.ndarray,
                 cols: np.ndarray | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Input coordinates, as floats, of output pixels.

        Called with two arrays (rows, cols) it returns (input rows, input cols); called with
        one (N, 2) array of (row, col) points, as region lineage's resample operator does, it
        returns an (N, 2) array of input (row, col) points.
        """
        if cols is None:
            points = np.asarray(rows, dtype=np.float64)
            if points.ndim != 2 or points.shape[1] != 2:
                raise ValueError(f"PixelTransform: points must be an (N, 2) array of (row, col), "
                                 f"got shape {points.shape}")
            return np.stack(self._map(points[:, 0], points[:, 1]), axis=1)
        return self._map(np.asarray(rows, dtype=np.float64), np.asarray(cols, dtype=np.float64))

    def _map(self, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # through sky coordinates in their frames, as reproject does: a frame in FK5 (EQUINOX
        # 2000 and no RADESYS) is 20 mas from the grid's ICRS, 0.4 pixel at HST's scale
        out_wcs, in_wcs = self._wcs()
        x, y = pixel_to_pixel(out_wcs, in_wcs, cols, rows)
        return np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64)

    def contributing_cells(self, rows: np.ndarray,
                           cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The input pixels each output pixel is interpolated from.

        Returns
        -------
        tuple
            Arrays of shape (n, k): input rows, input cols and whether each entry is a real
            input pixel (k is 4 for bilinear, 1 for nearest-neighbour). An output pixel with no
            valid entry lies outside the input frame.
        """
        in_rows, in_cols = self._map(np.ravel(rows).astype(np.float64),
                                     np.ravel(cols).astype(np.float64))
        rows_in, cols_in = self.shape_in
        inside = ((in_rows >= -0.5) & (in_rows <= rows_in - 0.5)
                  & (in_cols >= -0.5) & (in_cols <= cols_in - 0.5))
        # reproject moves coordinates in the outer half of the border pixels onto their centres
        in_rows = np.clip(in_rows, 0, rows_in - 1)
        in_cols = np.clip(in_cols, 0, cols_in - 1)
        if self.order == "nearest-neighbor":
            cell_rows = np.rint(in_rows)[:, None]
            cell_cols = np.rint(in_cols)[:, None]
        else:
            r0, c0 = np.floor(in_rows), np.floor(in_cols)
            cell_rows = np.stack([r0, r0, r0 + 1, r0 + 1], axis=1)
            cell_cols = np.stack([c0, c0 + 1, c0, c0 + 1], axis=1)
        valid = (inside[:, None] & (cell_rows <= rows_in - 1) & (cell_cols <= cols_in - 1))
        return cell_rows.astype(np.int64), cell_cols.astype(np.int64), valid


def _local_scale(wcs: WCS, shape: tuple[int, int]) -> float:
    """A frame's pixel size at its centre, arcsec (the square root of the pixel's area):
    its projection's there, which for a ZPN chip far from the axis differs from the scale at
    the reference pixel by 0.4%, and its CD matrix's for a TAN frame."""
    col, row = (shape[1] - 1) / 2, (shape[0] - 1) / 2
    ra, dec = icrs_of_pixels(wcs, col + np.array([0.0, 1.0, 0.0]),
                             row + np.array([0.0, 0.0, 1.0]))
    probe = SkyGrid(float(ra[0]), float(dec[0]), 1.0, 1, 1).wcs()
    x, y = probe.world_to_pixel_values(ra, dec)
    area = abs((x[1] - x[0]) * (y[2] - y[0]) - (x[2] - x[0]) * (y[1] - y[0]))
    if not math.isfinite(area) or area <= 0:  # beyond the projection: the reference's scale
        return float(proj_plane_pixel_scales(wcs.celestial).mean() * 3600.0)
    return math.sqrt(area)


def _icrs_point(wcs: WCS, x: float, y: float) -> tuple[float, float]:
    ra, dec = icrs_of_pixels(wcs, x, y)
    return float(ra), float(dec)


def _unit_vector(ra: float, dec: float) -> tuple[float, float, float]:
    ra_r, dec_r = math.radians(ra), math.radians(dec)
    return (math.cos(dec_r) * math.cos(ra_r), math.cos(dec_r) * math.sin(ra_r), math.sin(dec_r))


def _border(shape: tuple[int, int], per_edge: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of points along the outer edges of a frame's pixels."""
    rows, cols = shape
    r = np.linspace(-0.5, rows - 0.5, per_edge)
    c = np.linspace(-0.5, cols - 0.5, per_edge)
    edge_rows = np.concatenate([r, r, np.full(per_edge, -0.5), np.full(per_edge, rows - 0.5)])
    edge_cols = np.concatenate([np.full(per_edge, -0.5), np.full(per_edge, cols - 0.5), c, c])
    return edge_rows, edge_cols
