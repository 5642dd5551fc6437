"""Which cells of an object's array a retraction covers: boxes of FITS pixels in one HDU, given
as text or read from a mask file, with a text form that a retraction record stores and the
command line takes.

A mask file is read once, when the cells are made, and turned into boxes (runs of cells along
each row, joined over rows where they line up): a record keeps the cells themselves, with the
mask's shape and the file's name for reference, so that it means the same after the file is
changed, moved or deleted, and at another site.

Boxes are written as the cutout service and IRAF sections write them, ``x0:x1,y0:y1`` with
1-based, inclusive FITS pixel numbers (x along NAXIS1, the columns); several boxes are joined
by ``;``. ``57:57,1:2048`` is column 57 of a 2048-row image. A single number stands for one
column or row (``57,1:2048``), and ``*`` for the whole axis (``57,*``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from awlineage.errors import AwlError


class RetractedCellsError(AwlError, ValueError):
    """A region of a retraction that cannot be read; the message names the text and position."""


@dataclass(frozen=True)
class CellBox:
    """Columns ``x0..x1`` by rows ``y0..y1``, 1-based and inclusive; None means the whole axis."""

    x0: int | None
    x1: int | None
    y0: int | None
    y1: int | None

    def slices(self, shape: tuple[int, ...]) -> tuple[slice, slice]:
        """The (rows, columns) numpy slices of this box in a 2-d array of `shape`, clipped."""
        rows, columns = shape[-2:]
        r0 = 0 if self.y0 is None else self.y0 - 1
        r1 = rows if self.y1 is None else min(self.y1, rows)
        c0 = 0 if self.x0 is None else self.x0 - 1
        c1 = columns if self.x1 is None else min(self.x1, columns)
        return slice(r0, max(r0, r1)), slice(c0, max(c0, c1))

    def text(self) -> str:
        """The ``x0:x1,y0:y1`` form."""
        return f"{_axis_text(self.x0, self.x1)},{_axis_text(self.y0, self.y1)}"


@dataclass(frozen=True)
class RetractedCells:
    """The retracted cells of one HDU of an object, as boxes.

    Parameters
    ----------
    hdu
        The HDU (0 for the primary array) the cells belong to.
    boxes
        Boxes of cells.
    shape
        (rows, columns) of the mask file the boxes were read from, which the array must have;
        None for boxes given as text.
    source
        The mask file the boxes were read from (for reference only: it is never read again).
    """

    hdu: int = 0
    boxes: tuple[CellBox, ...] = ()
    shape: tuple[int, int] | None = None
    source: str | None = None

    @classmethod
    def parse(cls, text: str, hdu: int = 0) -> RetractedCells:
        """Cells from the ``x0:x1,y0:y1[;...]`` form.

        Examples
        --------
        >>> RetractedCells.parse("57:57,1:2048").boxes[0]
        CellBox(x0=57, x1=57, y0=1, y1=2048)
        >>> RetractedCells.parse("57,*", hdu=1).text()
        '57:57,*'
        """
        if not isinstance(hdu, int) or isinstance(hdu, bool) or hdu < 0:
            raise RetractedCellsError(f"the HDU of a region must be a number >= 0, not {hdu!r}")
        boxes = []
        position = 0
        for part in text.split(";"):
            boxes.append(_parse_box(part, text, position))
            position += len(part) + 1
        return cls(hdu=hdu, boxes=tuple(boxes))

    @classmethod
    def from_mask_file(cls, path: str | Path, hdu: int = 0) -> RetractedCells:
        """Cells from a mask file (FITS image or ``.npy``; its non-zero cells), read now.

        Examples
        --------
        >>> import numpy as np, tempfile, pathlib
        >>> mask = np.zeros((4, 6), np.uint8); mask[1:3, 2] = 1; mask[3, 4:6] = 1
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "bad.npy"; np.save(path, mask)
        >>> RetractedCells.from_mask_file(path).text()
        '3:3,2:3;5:6,4:4'
        """
        resolved = Path(path).resolve()
        mask = _read_mask(resolved, hdu)
        if not mask.any():
            raise RetractedCellsError(f"mask file {resolved} (HDU {hdu}) sets no cell: every "
                                      "value is 0, so nothing would be retracted")
        rows, columns = mask.shape
        return cls(hdu=hdu, boxes=mask_boxes(mask), shape=(rows, columns), source=str(resolved))

    def mask(self, shape: tuple[int, ...]) -> np.ndarray:
        """A boolean array of `shape` (the last two axes rows, columns), True where retracted.

        Raises `RetractedCellsError` when the mask file the cells came from had another shape.
        """
        self.check_shape(shape)
        mask = np.zeros(shape, dtype=bool)
        for box in self.boxes:
            rows, columns = box.slices(shape)
            mask[..., rows, columns] = True
        return mask

    def check_within(self, shape: tuple[int, ...], what: str) -> None:
        """Raise `RetractedCellsError` when a box reaches beyond an array of `shape` (the
        last two axes rows, columns): a typo such as ``1:1000`` for ``1:100`` would
        otherwise take in every cell to the edge. `what` names the array in the message.

        Examples
        --------
        >>> RetractedCells.parse("1:100,*").check_within((256, 256), "the bias")
        >>> try:
        ...     RetractedCells.parse("1:1000,*").check_within((256, 256), "the bias")
        ... except RetractedCellsError as refused:
        ...     print(str(refused)[:57])
        region box 1:1000,* reaches column 1000, beyond the bias,
        """
        self.check_shape(shape)
        rows, columns = shape[-2:]
        for box in self.boxes:
            for axis, last, size in (("column", box.x1, columns), ("row", box.y1, rows)):
                if last is not None and last > size:
                    raise RetractedCellsError(
                        f"region box {box.text()} reaches {axis} {last}, beyond {what}, "
                        f"which is {columns}x{rows} pixels (columns 1-{columns}, rows "
                        f"1-{rows}; * takes a whole axis)")

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise `RetractedCellsError` when the cells came from a mask file whose shape is not
        the last two axes of `shape`."""
        if self.shape is not None and self.shape != tuple(shape[-2:]):
            rows, columns = self.shape
            raise RetractedCellsError(
                f"the mask {self.source} is {columns}x{rows} pixels but the array is "
                f"{shape[-1]}x{shape[-2]}")

    def text(self) -> str:
        """The ``x0:x1,y0:y1[;...]`` form (empty for a mask with no cell set)."""
        return ";".join(box.text() for box in self.boxes)

    def summary(self, most: int = 4) -> str:
        """`text` when it has at most `most` boxes, else how many cells in how many boxes (and
        the mask file they came from): for sentences and banners."""
        if len(self.boxes) <= most:
            return self.text()
        cells = None if self.shape is None else int(self.mask(self.shape).sum())
        counted = f"{cells:,} cells in " if cells is not None else ""
        origin = f" from {Path(self.source).name}" if self.source else ""
        return f"{counted}{len(self.boxes):,} boxes{origin}"

    def to_json(self) -> str:
        """The form a retraction record stores."""
        data: dict[str, object] = {"hdu": self.hdu, "cells": self.text()}
        if self.shape is not None:
            data["shape"] = list(self.shape)
        if self.source is not None:
            data["source"] = self.source
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> RetractedCells:
        """Cells back from `to_json`'s form (a record stored before cells were kept in it,
        ``mask:PATH``, reads its file)."""
        data = json.loads(text)
        cells = data["cells"]
        if cells.startswith("mask:"):
            return cls.from_mask_file(cells[len("mask:"):], hdu=data["hdu"])
        parsed = cls.parse(cells, hdu=data["hdu"]) if cells else cls(hdu=data["hdu"])
        shape = data.get("shape")
        return cls(hdu=parsed.hdu, boxes=parsed.boxes,
                   shape=None if shape is None else (int(shape[0]), int(shape[1])),
                   source=data.get("source"))


def mask_boxes(mask: np.ndarray) -> tuple[CellBox, ...]:
    """The set cells of a 2-d boolean `mask` as boxes: each row's runs of set cells, a run
    joined with the runs of the rows above it that span the same columns.

    Examples
    --------
    >>> mask = np.zeros((3, 5), bool); mask[:, 1] = True; mask[2, 3:5] = True
    >>> [box.text() for box in mask_boxes(mask)]
    ['2:2,1:3', '4:5,3:3']
    """
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), np.int8)
    padded[:, 1:-1] = mask
    steps = np.diff(padded, axis=1)
    rows, starts = np.nonzero(steps == 1)
    _, ends = np.nonzero(steps == -1)  # both in row-major order: the k-th end closes the k-th run
    if not len(rows):
        return ()
    order = np.lexsort((rows, ends, starts))  # runs of the same columns together, by row
    rows, starts, ends = rows[order], starts[order], ends[order]
    fresh = np.ones(len(rows), bool)
    fresh[1:] = (starts[1:] != starts[:-1]) | (ends[1:] != ends[:-1]) | (rows[1:] != rows[:-1] + 1)
    first = np.flatnonzero(fresh)
    last = np.append(first[1:], len(rows)) - 1
    boxes = sorted(zip(rows[first].tolist(), starts[first].tolist(), ends[first].tolist(),
                       rows[last].tolist(), strict=True))
    return tuple(CellBox(x0 + 1, x1, y0 + 1, y1 + 1) for y0, x0, x1, y1 in boxes)


def _axis_text(first: int | None, last: int | None) -> str:
    return "*" if first is None else f"{first}:{last}"


def _parse_box(part: str, text: str, position: int) -> CellBox:
    axes = part.split(",")
    if len(axes) != 2:
        raise RetractedCellsError(
            f"region {text!r} at position {position}: a box is x0:x1,y0:y1 "
            f"(1-based, inclusive FITS pixels), not {part.strip()!r}")
    x0, x1 = _parse_axis(axes[0], "x", text, position)
    y0, y1 = _parse_axis(axes[1], "y", text, position + len(axes[0]) + 1)
    return CellBox(x0, x1, y0, y1)


def _parse_axis(raw: str, name: str, text: str, position: int) -> tuple[int | None, int | None]:
    value = raw.strip()
    if value == "*":
        return None, None
    ends = value.split(":")
    try:
        numbers = [int(end) for end in ends]
    except ValueError:
        numbers = []
    if len(ends) > 2 or not numbers:
        raise RetractedCellsError(
            f"region {text!r} at position {position}: {name} must be N, N:M or *, "
            f"not {value!r}")
    first, last = numbers[0], numbers[-1]
    if first < 1 or last < first:
        raise RetractedCellsError(
            f"region {text!r} at position {position}: {name} {value!r} must count from 1 "
            f"and not run backwards")
    return first, last


def _read_mask(path: Path, hdu: int) -> np.ndarray:
    if not path.is_file():
        raise RetractedCellsError(f"mask file {path} does not exist")
    try:
        if path.suffix == ".npy":
            data = np.load(path, allow_pickle=False)
        else:
            from astropy.io import fits

            with fits.open(path) as hdus:
                data = np.asarray(hdus[hdu].data)
    except (OSError, ValueError, IndexError) as error:
        raise RetractedCellsError(f"mask file {path} (HDU {hdu}) cannot be read: {error}") \
            from None
    if data.ndim != 2:
        raise RetractedCellsError(f"mask file {path} must hold a 2-d image, not {data.ndim}-d")
    return data != 0
