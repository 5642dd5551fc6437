"""The ``--region | --mask`` and ``--hdu`` options of the commands that name cells of an
object's array (``awl retract``, ``awl affected``), and the `RetractedCells` they give."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from awlineage.cli._arguments import whole_number

if TYPE_CHECKING:
    from awlineage.retraction import RetractedCells


def add_cell_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """Add ``--region``/``--mask`` (one of them) and ``--hdu``; `verb` says what the cells
    are for (``retract only``, ``ask about``)."""
    cells = parser.add_mutually_exclusive_group()
    cells.add_argument("--region", metavar="x0:x1,y0:y1",
                       help=f"{verb} these cells: 1-based inclusive FITS pixels, boxes "
                       "joined by ';' (57,* is column 57)")
    cells.add_argument("--mask", metavar="FILE",
                       help=f"{verb} the non-zero cells of a FITS or .npy mask")
    parser.add_argument("--hdu", type=whole_number("an HDU", low=0),
                        help="the HDU of --region or --mask (default 0)")


def cells_from(args: argparse.Namespace) -> RetractedCells | None:
    """The cells the options name, None for none; `RetractedCellsError` for ``--hdu``
    alone or cells that cannot be read (the message names the position)."""
    from awlineage.retraction import RetractedCells, RetractedCellsError

    hdu = 0 if args.hdu is None else args.hdu
    if args.region is not None:
        return RetractedCells.parse(args.region, hdu=hdu)
    if args.mask is not None:
        return RetractedCells.from_mask_file(args.mask, hdu=hdu)
    if args.hdu is not None:
        raise RetractedCellsError("--hdu names the HDU of a --region or --mask; give one")
    return None
