"""``awl affected``: the blast radius of an object or of some of its cells: counts per class,
then every descendant (whole object) or the cells reached in each descendant array and the
rows of each source list reached (``--region`` / ``--mask``), as a table or JSON."""

from __future__ import annotations

import argparse

from awlineage.cli._cells import add_cell_arguments, cells_from
from awlineage.cli._common import open_database, prepare
from awlineage.cli._ids import parse_id, resolve_id


def _run(args: argparse.Namespace) -> int:
    from awlineage.blast_radius import affected, render_blast_radius
    from awlineage.retraction import Retraction, retractions_of, standing

    cells = cells_from(args)
    db = open_database(args)
    prepare(db, args.imports)
    obj = db.get(resolve_id(db, args.id))
    chosen = None
    if cells is None and not isinstance(obj, Retraction):  # the retraction in force, if any
        chosen = standing(retractions_of([obj], database=db).get(obj.object_id, []))
    answer = affected(db, chosen or obj, cells)
    if args.json:
        print(answer.to_json())
        return 0
    if chosen is not None:
        print(f"the retraction in force (record {chosen.object_id}): {chosen.sentence()}")
    print(render_blast_radius(answer))
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
                        help="an object_id (or enough of its first digits to be unique): "
                        "without --region or --mask, its retraction in force (a whole-"
                        "object one first, else the newest) or, retracted by none, the "
                        "object whole; a retraction's id asks about what it retracted")
    add_cell_arguments(parser, "ask about")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        help="module defining persistent classes (repeatable)")
    parser.set_defaults(run=_run, read_only=True)
