"""``awl retract | retractions``: record that an object (or some cells of one of its arrays)
must no longer be used, reinstate it, and list the records. Errors are one line, exit 2."""

from __future__ import annotations

import argparse
import json
import sys

from awlineage.cli._cells import add_cell_arguments, cells_from
from awlineage.cli._common import open_database, prepare
from awlineage.cli._ids import parse_id, resolve_id
from awlineage.errors import AwlError


def _retract(args: argparse.Namespace) -> int:
    from awlineage.retraction import reinstate, retract

    if args.reinstate and (args.region is not None or args.mask is not None):
        raise AwlError("--reinstate takes no --region or --mask: it undoes the retractions "
                       "of the object (or the retraction) named")
    cells = cells_from(args)
    db = open_database(args)
    prepare(db, args.imports)
    obj = db.get(resolve_id(db, args.id))
    if args.reinstate:
        record = reinstate(obj, reason=args.reason, database=db)
    else:
        record = retract(obj, reason=args.reason, region=cells, database=db)
    print(f"{record.sentence()} (record {record.object_id})")
    return 0


def _retractions(args: argparse.Namespace) -> int:
    from awlineage.retraction import retraction_history, retractions_of

    db = open_database(args)
    prepare(db, args.imports)
    records = retraction_history(database=db)
    in_force = {r.object_id for listed in retractions_of(database=db).values()
                for r in listed}
    rows = [{**r.to_dict(), "in_force": r.object_id in in_force} for r in records]
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return 0
    if not rows:
        print("no retractions")
        return 0
    for record, row in zip(records, rows, strict=True):
        state = "in force" if row["in_force"] else \
            ("reinstatement" if record.is_reinstatement else "reinstated")
        print(f"{record.object_id}  [{state}]  {record.sentence()}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``awl retract`` and ``awl retractions`` to the ``awl`` parser."""
    retract = commands.add_parser(
        "retract", help="record that an object (or cells of it) must no longer be used",
        description="Record, as data of its own, that a stored object must no longer be used "
        "(the target processor stops choosing it), or that some cells of one of its arrays "
        "are bad; --reinstate undoes it. Objects themselves never change.")
    retract.add_argument("id", type=parse_id, metavar="ID",
                         help="the object (or, with --reinstate, the object or the "
                         "retraction record): an object_id or a unique prefix of one")
    retract.add_argument("--reason", required=True, help="why (required)")
    add_cell_arguments(retract, "retract only")
    retract.add_argument("--reinstate", action="store_true",
                         help="undo the retraction(s) of ID instead")
    retract.add_argument("--import", dest="imports", action="append", default=[],
                         help="module defining persistent classes (repeatable)")
    retract.set_defaults(run=_retract)
    listing = commands.add_parser("retractions", help="list retractions and reinstatements")
    listing.add_argument("--json", action="store_true", help="as JSON")
    listing.add_argument("--import", dest="imports", action="append", default=[],
                         help="module defining persistent classes (repeatable)")
    listing.set_defaults(run=_retractions, read_only=True)
