"""``awl make CLASS [--where QUERY] [--set STAGE.attribute=value ...]``: pull targets through
the target processor, showing the coloured plan (``--dry-run``) or a progress bar and a summary
table. ``--set`` makes parameters objects (defaults plus the values set) for target classes of
the chain. ``--retracted`` / ``--affected-by ID`` make only what retractions made red. Exit
status 1 when a target failed or could not be made."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from awlineage.cli._common import find_class, open_database, prepare, use_colour
from awlineage.cli._ids import parse_id, resolve_id
from awlineage.errors import AwlError
from awlineage.processing import EXECUTOR_NAMES

if TYPE_CHECKING:
    from awlineage.database import Database


def _run(args: argparse.Namespace) -> int:
    from awlineage.processing import (
        TargetOutcome,
        TargetProcessor,
        override_parameters,
        print_report,
        require_spark,
    )

    if args.spark_master and args.executor == "serial":
        raise AwlError(f"--spark-master {args.spark_master} needs the Spark executor, not "
                       "--executor serial")
    if args.executor == "spark" and not args.dry_run:
        require_spark(imported=False)  # a missing extra is said before the database is read
    db = _open_to_make(args)
    prepare(db, args.imports, [args.cls])
    cls = find_class(db, args.cls)
    _check_is_target(cls)
    # before anything is made: a bad setting ends the command with nothing written
    parameters = override_parameters(cls, args.settings, db.class_named)
    colour = use_colour(args.colour, sys.stdout)
    processor = TargetProcessor(args.executor, database=db, spark_master=args.spark_master,
                                keep_going=args.keep_going, parameters=parameters)
    retracted = True if args.retracted else \
        None if args.affected_by is None else resolve_id(db, args.affected_by)
    report = processor.make(cls, args.where, force=args.force,
                            force_upstream=args.force_upstream, dry_run=args.dry_run,
                            retracted=retracted)
    print_report(report, colour=colour)
    if args.dry_run:
        return 0
    troubled = sum(report.count(outcome) for outcome in
                   (TargetOutcome.FAILED, TargetOutcome.SKIPPED, TargetOutcome.BLOCKED))
    return 1 if troubled else 0


def _open_to_make(args: argparse.Namespace) -> Database:
    """The database to make targets in. A make creates none: a database that does not exist
    (or holds no awlineage objects) has nothing to make targets from, and is refused naming
    it before anything is written, as a mistyped URL should be."""
    from awlineage.storage import check_data_directory

    if not args.dry_run:
        check_data_directory()  # a data directory that is a file is said first, as for ingest
    return open_database(args, when_missing="there is nothing to make targets from: store "
                         "the inputs first (awl ingest FILE..., or commit() from a script)")


def _check_is_target(cls: type) -> None:
    """Refuse a class that is not a process target, saying what it is: stored data is
    ingested or committed, not made; a class read from the registry (its module cannot be
    imported here) cannot be made either, and the message says where to import it from."""
    from awlineage.persistence import describe_class, import_hint, is_stand_in
    from awlineage.trace import Process

    if is_stand_in(cls):
        raise AwlError(f"cannot make {cls.__name__} here: {describe_class(cls)}, whose code "
                       f"this process cannot import; {import_hint(cls)}")
    if issubclass(cls, Process):
        return
    raise AwlError(f"{cls.__name__} is raw data to ingest, not a process target to make: "
                   "store it (FITS frames with `awl ingest FILE...`, other objects with "
                   "commit() from a script); `awl make` makes Process classes, from raw data")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``make`` to the ``awl`` parser."""
    make = commands.add_parser("make", help="pull targets: reuse what is up to date, make the "
                               "rest")
    make.add_argument("cls", metavar="CLASS", help="the process target class, e.g. SourceList")
    make.add_argument("--where", help="condition on the targets' attributes, e.g. "
                      "\"chip == 'ccd50' and filter == 'r'\" (default: every target that "
                      "can be made)")
    make.add_argument("--set", dest="settings", action="append", default=[],
                      metavar="STAGE.ATTRIBUTE=VALUE",
                      help="a parameter of a target class the targets are made from, e.g. "
                      "ReducedScienceFrame.biassec=none or SourceList.threshold=3 "
                      "(repeatable): the defaults plus the values set, stored like any "
                      "parameters object; the targets it changes are made again")
    make.add_argument("--dry-run", action="store_true",
                      help="show the plan (green reuse, red make) and its reasons; make nothing")
    make.add_argument("--force", action="store_true", help="make the targets even if up to date")
    make.add_argument("--force-upstream", action="store_true",
                      help="make everything they depend on, too")
    only = make.add_mutually_exclusive_group()
    only.add_argument("--retracted", action="store_true",
                      help="make only the targets that retractions make red (awl retract), "
                      "as new versions; the others are left as they are")
    only.add_argument("--affected-by", metavar="ID",
                      type=parse_id,
                      help="as --retracted, for one retraction (its id, or the id of the "
                      "object retracted)")
    make.add_argument("--keep-going", action="store_true",
                      help="after a failure, go on with what does not depend on it")
    make.add_argument("--executor", choices=EXECUTOR_NAMES, default="auto",
                      help="where targets are made: spark (Spark, the spark extra), serial "
                      "(this process, one at a time) or auto (default: spark when pyspark is "
                      "installed, else serial)")
    make.add_argument("--spark-master", help="Spark master URL (default local[*]); a cluster "
                      "needs PostgreSQL and an S3 or HTTP data server")
    make.add_argument("--colour", "--color", choices=("auto", "always", "never"),
                      default="auto",
                      help="colour the progress and the report: auto (on a terminal, unless "
                      "NO_COLOR is set), always or never (default %(default)s)")
    make.add_argument("--import", dest="imports", action="append", default=[],
                      help="module defining persistent classes (repeatable)")
    make.set_defaults(run=_run)
