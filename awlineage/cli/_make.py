"""``awl make CLASS [--where QUERY]``: pull targets through the target processor, showing the
coloured plan (``--dry-run``) or a progress bar and a summary table. Exit status 1 when a
target failed or could not be made."""

from __future__ import annotations

import argparse
import sys

from awlineage.cli._common import import_modules, import_registered_modules
from awlineage.database import connect
from awlineage.errors import AwlError
from awlineage.persistence import DBObjectMeta


def _run(args: argparse.Namespace) -> int:
    from awlineage.processing import TargetProcessor, print_report

    db = connect(args.database)
    import_modules(args.imports)
    import_registered_modules(db)
    cls = DBObjectMeta.registry.get(args.cls)
    if cls is None:
        raise AwlError(f"unknown persistent class {args.cls!r}: name a process target, and "
                       "--import the module that defines it if the database does not know it")
    colour = args.colour == "always" or (args.colour == "auto" and sys.stdout.isatty())
    processor = TargetProcessor(args.executor, database=db, spark_master=args.spark_master,
                                keep_going=args.keep_going)
    report = processor.make(cls, args.where, force=args.force,
                            force_upstream=args.force_upstream, dry_run=args.dry_run)
    print_report(report, colour=colour)
    if args.dry_run:
        return 0
    troubled = report.count("failed") + report.count("skipped") + report.count("blocked")
    return 1 if troubled else 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``make`` to the ``awl`` parser."""
    make = commands.add_parser("make", help="pull targets: reuse what is up to date, make the "
                               "rest")
    make.add_argument("cls", metavar="CLASS", help="the process target class, e.g. SourceList")
    make.add_argument("--where", help="condition on the targets' attributes, e.g. "
                      "\"chip == 'ccd50' and filter == 'r'\" (default: every target that "
                      "can be made)")
    make.add_argument("--dry-run", action="store_true",
                      help="show the plan (green reuse, red make) and its reasons; make nothing")
    make.add_argument("--force", action="store_true", help="make the targets even if up to date")
    make.add_argument("--force-upstream", action="store_true",
                      help="make everything they depend on, too")
    make.add_argument("--keep-going", action="store_true",
                      help="after a failure, go on with what does not depend on it")
    make.add_argument("--executor", choices=("spark", "serial"), default="spark")
    make.add_argument("--spark-master", help="Spark master URL (default local[*]); a cluster "
                      "needs PostgreSQL and an S3 or HTTP data server")
    make.add_argument("--colour", "--color", choices=("auto", "always", "never"),
                      default="auto")
    make.add_argument("--import", dest="imports", action="append", default=[],
                      help="module defining persistent classes (repeatable)")
    make.set_defaults(run=_run)
