"""``awl affected``: the blast radius of an object or of some of its cells: counts per class,
then every descendant (whole object) or the cells reached in each descendant array and the
rows of each source list reached (``--region`` / ``--mask``), as a table or JSON."""

from __future__ import annotations

import argparse

from awlineage.cli._arguments import whole_number
from awlineage.cli._common import open_database, prepare
from awlineage.cli._ids import parse_id, resolve_id


def _run(args: argparse.Namespace) -> int:
    from awlineage.blast_radius import affected, render_blast_radius
    from awlineage.retraction import RetractedCells, RetractedCellsError

    if args.hdu is not None and args.region is None and args.mask is None:
        raise RetractedCellsError("--hdu names the HDU of --region or --mask; give one")
    hdu = args.hdu or 0
    cells = RetractedCells.parse(args.region, hdu=hdu) if args.region is not None else \
        RetractedCells.from_mask_file(args.mask, hdu=hdu) if args.mask is not None else None
    db = open_database(args)
    prepare(db, args.imports)
    obj = db.get(resolve_id(db, args.id))
    answer = affected(db, obj, cells)
    print(answer.to_json() if args.json else render_blast_radius(answer))
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``affected`` to the ``awl`` parser."""
    parser = commands.add_parser(
        "affected", help="what an object, or some of its cells, reached: counts per class, "
        "then the arrays, cells and source rows",
        description="The blast radius of an object (every descendant) or of some of its "
        "cells (region lineage: the cells reached in every descendant array and the rows of "
        "every source list reached). Counts per class first, then the details.")
    parser.add_argument("id", type=parse_id, metavar="ID",
                        help="an object_id (or enough of its first digits to be unique); a "
                        "retraction's id asks about what it retracted")
    cells = parser.add_mutually_exclusive_group()
    cells.add_argument("--region", metavar="x0:x1,y0:y1",
                       help="1-based inclusive FITS pixels (57:57,* is column 57); several "
                       "boxes joined by ';'")
    cells.add_argument("--mask", metavar="FILE", help="a FITS image or .npy file whose "
                       "non-zero cells are the region")
    parser.add_argument("--hdu", type=whole_number("an HDU", low=0),
                        help="the HDU of --region or --mask (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        help="module defining persistent classes (repeatable)")
    parser.set_defaults(run=_run, read_only=True)
