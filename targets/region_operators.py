"""Region-lineage operators of the pipeline's own, all in map mode (nothing is stored): a frame
placed on a coadd's pixels (a translation), a frame resampled onto a sky grid, and a raw frame
overscan-subtracted and trimmed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from astropy.wcs.utils import pixel_to_pixel

from awlineage import Boxes, Operator, Shapes

if TYPE_CHECKING:
    from targets.overscan import FrameLayout
    from targets.regrid import PixelTransform


class PlaceOnGrid(Operator):
    """Output cell p shows input cell p + `offset` where the input covers it, nothing
    elsewhere (a regridded frame on the pixels of its coadd).

    Parameters
    ----------
    offset
        (rows, columns) from output to input coordinates: the coadd's origin on the sky grid
        minus the frame's.
    """

    supported_modes = ("map",)

    def __init__(self, offset: Sequence[int]) -> None:
        super().__init__("place_on_grid", offset=[int(v) for v in offset])
        self._shift = np.asarray(self.params["offset"], dtype=np.int64)

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        return Boxes(boxes.lo + self._shift, boxes.hi + self._shift).clip(shapes.inputs[i])

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        return Boxes(boxes.lo - self._shift, boxes.hi - self._shift).clip(shapes.output)


class WcsResample(Operator):
    """A frame resampled onto part of a sky grid (`targets.regrid.regrid`): output pixel p is
    interpolated from the input pixels around the point the WCSs map it to.

    Map mode: lineage is computed at query time from the two WCSs, by transforming the
    boundaries of the boxes asked about (a WCS resampling is smooth, so a box's image is
    bounded by the image of its boundary), one pixel wider for safety; nothing is stored and
    capture costs nothing. The result is a superset of the exact cells by at most that pixel.

    Parameters
    ----------
    wcs_in
        The input frame's celestial WCS, as FITS header text.
    shape_in
        The input frame's (rows, columns).
    grid
        The sky grid: (ra, dec, pixel scale, rows, columns).
    origin
        (row, column) of the output image's pixel (0, 0) in the grid.
    order
        ``"bilinear"`` or ``"nearest-neighbor"``, as regridded.
    """

    supported_modes = ("map",)
    SAMPLES_PER_EDGE = 17

    def __init__(self, wcs_in: str, shape_in: Sequence[int], grid: Sequence[float],
                 origin: Sequence[int], order: str = "bilinear") -> None:
        super().__init__("wcs_resample", wcs_in=wcs_in, shape_in=[int(v) for v in shape_in],
                         grid=[float(v) for v in grid], origin=[int(v) for v in origin],
                         order=order)
        self._transforms: tuple[object, object] | None = None

    @classmethod
    def for_regrid(cls, transform: PixelTransform) -> WcsResample:
        """The operator of a `targets.regrid.PixelTransform`."""
        grid = transform.grid
        return cls(transform.wcs_in_text, transform.shape_in,
                   [grid.ra, grid.dec, grid.pixel_scale, grid.rows, grid.cols, grid.rotation,
                    grid.stretch, grid.shear],
                   transform.origin, transform.order)

    def _wcs(self) -> tuple[object, object]:
        if self._transforms is None:
            from astropy.io import fits
            from astropy.wcs import WCS

            from targets.regrid import SkyGrid

            ra, dec, scale, rows, cols, *turned = self.params["grid"]  # older: square, north up
            out_wcs = SkyGrid(ra, dec, scale, int(rows), int(cols), *turned).wcs(
                tuple(self.params["origin"]))
            self._transforms = (out_wcs, WCS(fits.Header.fromstring(self.params["wcs_in"])))
        return self._transforms

    def _reach(self) -> int:
        return 1 if self.params["order"] == "bilinear" else 0

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        out_wcs, in_wcs = self._wcs()
        low, high = _image_bounds(boxes, out_wcs, in_wcs, 0.0, self.SAMPLES_PER_EDGE)
        lo = np.floor(low).astype(np.int64) - 1
        hi = np.floor(high).astype(np.int64) + self._reach() + 1
        return Boxes(lo, hi).clip(shapes.inputs[i])

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        out_wcs, in_wcs = self._wcs()
        # an input cell c is read for output points mapped within (c - 1, c + 1)
        low, high = _image_bounds(boxes, in_wcs, out_wcs, 1.0, self.SAMPLES_PER_EDGE)
        return Boxes(np.floor(low).astype(np.int64) - 1,
                     np.ceil(high).astype(np.int64) + 1).clip(shapes.output)


class OverscanTrim(Operator):
    """A raw frame overscan-subtracted and trimmed (`targets.overscan.correct_frame`): output
    pixel p is raw pixel p + `origin` minus the overscan level of its raw row (the overscan
    pixels of that row, and of `reach` rows either side when the levels are smoothed) or of
    the frame (the whole overscan section).

    Parameters
    ----------
    origin
        Raw (row, column) of the output's pixel (0, 0).
    overscan
        The overscan section as raw [first row, last row, first column, last column]
        (inclusive), or None when no overscan is subtracted.
    per_row
        One level per row; otherwise one level for the frame.
    reach
        Rows either side whose overscan enters a row's level (half the smoothing window).
    """

    supported_modes = ("map",)

    def __init__(self, origin: Sequence[int], overscan: Sequence[int] | None = None,
                 per_row: bool = True, reach: int = 0) -> None:
        super().__init__("overscan_trim", origin=[int(v) for v in origin],
                         overscan=None if overscan is None else [int(v) for v in overscan],
                         per_row=bool(per_row), reach=int(reach))
        self._shift = np.asarray(self.params["origin"], dtype=np.int64)

    @classmethod
    def for_layout(cls, layout: FrameLayout) -> OverscanTrim:
        """The operator of a `targets.overscan.FrameLayout`."""
        section = layout.overscan
        overscan = None if section is None else \
            [section.row0, section.row1 - 1, section.col0, section.col1 - 1]
        return cls(layout.origin, overscan, layout.per_row, layout.smooth // 2)

    def _overscan(self) -> Boxes:
        r0, r1, c0, c1 = self.params["overscan"]
        return Boxes([[r0, c0]], [[r1, c1]])

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        data = Boxes(boxes.lo + self._shift, boxes.hi + self._shift).clip(shapes.inputs[i])
        if self.params["overscan"] is None or not len(boxes):
            return data
        overscan = self._overscan()
        if not self.params["per_row"]:
            return Boxes.concat([data, overscan], 2)
        reach = self.params["reach"]
        rows_lo = np.maximum(boxes.lo[:, 0] + self._shift[0] - reach, overscan.lo[0, 0])
        rows_hi = np.minimum(boxes.hi[:, 0] + self._shift[0] + reach, overscan.hi[0, 0])
        columns = np.ones(len(boxes), dtype=np.int64)
        strips = Boxes(np.stack([rows_lo, columns * overscan.lo[0, 1]], axis=1),
                       np.stack([rows_hi, columns * overscan.hi[0, 1]], axis=1)).nonempty()
        return Boxes.concat([data, strips], 2)

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        data = Boxes(boxes.lo - self._shift, boxes.hi - self._shift).clip(shapes.output)
        if self.params["overscan"] is None or not len(boxes):
            return data
        overscan = self._overscan()
        hit = Boxes(np.maximum(boxes.lo, overscan.lo), np.minimum(boxes.hi, overscan.hi)
                    ).nonempty()
        if not len(hit):
            return data
        if not self.params["per_row"]:
            return Boxes.concat([data, Boxes.full(shapes.output)], 2)
        reach, last_column = self.params["reach"], shapes.output[1] - 1
        columns = np.ones(len(hit), dtype=np.int64)
        rows = Boxes(np.stack([hit.lo[:, 0] - self._shift[0] - reach, columns * 0], axis=1),
                     np.stack([hit.hi[:, 0] - self._shift[0] + reach, columns * last_column],
                              axis=1)).clip(shapes.output)
        return Boxes.concat([data, rows], 2)


def _image_bounds(boxes: Boxes, from_wcs: object, to_wcs: object, widen: float,
                  per_edge: int) -> tuple[np.ndarray, np.ndarray]:
    """Per box, the (row, col) bounding box of the image of its boundary (widened by
    `widen` pixels) mapped from `from_wcs` pixels to `to_wcs` pixels, all boxes at once."""
    lo = boxes.lo.astype(np.float64) - widen
    hi = boxes.hi.astype(np.float64) + widen
    t = np.linspace(0.0, 1.0, per_edge)[None, :]
    r0, c0, r1, c1 = lo[:, :1], lo[:, 1:], hi[:, :1], hi[:, 1:]
    along_c = c0 + t * (c1 - c0)
    along_r = r0 + t * (r1 - r0)
    rows = np.concatenate([np.broadcast_to(r0, along_c.shape), np.broadcast_to(r1, along_c.shape),
                           along_r, along_r], axis=1)
    cols = np.concatenate([along_c, along_c, np.broadcast_to(c0, along_r.shape),
                           np.broadcast_to(c1, along_r.shape)], axis=1)
    # through sky coordinates in each WCS's own frame (FK5, FK4 or ICRS), as reproject maps;
    # in one frame, the sky coordinates as numbers (astropy's SkyCoord between the two does
    # nothing then, and cost most of a capture's statistics, which map a few cells at a time)
    if _same_sky_frame(from_wcs, to_wcs):
        world = from_wcs.pixel_to_world_values(cols.ravel(), rows.ravel())  # type: ignore[attr-defined]
        x, y = to_wcs.world_to_pixel_values(*world)  # type: ignore[attr-defined]
    else:
        x, y = pixel_to_pixel(from_wcs, to_wcs, cols.ravel(), rows.ravel())
    y, x = np.asarray(y).reshape(rows.shape), np.asarray(x).reshape(cols.shape)
    return (np.stack([y.min(axis=1), x.min(axis=1)], axis=1),
            np.stack([y.max(axis=1), x.max(axis=1)], axis=1))


def _same_sky_frame(first: object, second: object) -> bool:
    """Whether two celestial WCSs give longitude and latitude, in this order, of the same kind
    (RA/Dec, ...) in the same reference frame and equinox, so that the world values of one
    are those the other takes."""
    try:
        a, b = first.wcs, second.wcs  # type: ignore[attr-defined]
        if first.naxis != 2 or second.naxis != 2:  # type: ignore[attr-defined]
            return False
        if (a.lng, a.lat) != (0, 1) or (b.lng, b.lat) != (0, 1):
            return False
        if [c[:4] for c in a.ctype] != [c[:4] for c in b.ctype]:
            return False
        if a.radesys != b.radesys:
            return False
        return bool(a.equinox == b.equinox or (np.isnan(a.equinox) and np.isnan(b.equinox)))
    except AttributeError:
        return False
