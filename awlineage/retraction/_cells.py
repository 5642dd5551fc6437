"""Which cells of an object's array a retraction covers: boxes of FITS pixels in one HDU, or a
mask file, with a text form that a retraction record stores and the command line takes.

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
    """The retracted cells of one HDU of an object: boxes, or a boolean mask read from a file.

    Parameters
    ----------
    hdu
        The HDU (0 for the primary array) the cells belong to.
    boxes
        Boxes of cells; empty when `mask_path` gives the cells.
    mask_path
        A FITS image or ``.npy`` file whose non-zero cells are retracted.
    """

    hdu: int = 0
    boxes: tuple[CellBox, ...] = ()
    mask_path: str | None = None

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
        """Cells from a mask file (FITS image or ``.npy``); the file is read now to check it."""
        resolved = Path(path).resolve()
        _read_mask(resolved, hdu)
        return cls(hdu=hdu, mask_path=str(resolved))

    def mask(self, shape: tuple[int, ...]) -> np.ndarray:
        """A boolean array of `shape` (the last two axes rows, columns), True where retracted.

        Raises `RetractedCellsError` when a mask file's shape differs from `shape`.
        """
        if self.mask_path is not None:
            mask = _read_mask(Path(self.mask_path), self.hdu)
            if mask.shape != tuple(shape[-2:]):
                raise RetractedCellsError(
                    f"the mask {self.mask_path} is {mask.shape[1]}x{mask.shape[0]} pixels but "
                    f"the array is {shape[-1]}x{shape[-2]}")
            return np.broadcast_to(mask, shape).copy()
        mask = np.zeros(shape, dtype=bool)
        for box in self.boxes:
            rows, columns = box.slices(shape)
            mask[..., rows, columns] = True
        return mask

    def text(self) -> str:
        """The ``x0:x1,y0:y1[;...]`` form, or ``mask:PATH``."""
        if self.mask_path is not None:
            return f"mask:{self.mask_path}"
        return ";".join(box.text() for box in self.boxes)

    def to_json(self) -> str:
        """The form a retraction record stores."""
        return json.dumps({"hdu": self.hdu, "cells": self.text()})

    @classmethod
    def from_json(cls, text: str) -> RetractedCells:
        """Cells back from `to_json`'s form."""
        data = json.loads(text)
        cells = data["cells"]
        if cells.startswith("mask:"):
            return cls(hdu=data["hdu"], mask_path=cells[len("mask:"):])
        return cls.parse(cells, hdu=data["hdu"])


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
