"""The example pipeline's commands of ``awl``, found through the ``awlineage.commands`` entry
points (contract: ``awlineage.cli._plugins``); the pipeline is imported only when one runs, so
that ``awl --help`` needs none of the ``pipeline`` extra's packages.

``awl demo``: the main job, on the embedded defaults (an SQLite file and a data directory in
the working directory, Spark in local mode when the ``spark`` extra is installed, else the
serial executor): the imaging pipeline on a synthetic night.

``awl ingest PATH...``: store raw FITS frames (one per image extension) and record what their
headers say; files that cannot be frames, or whose headers hold a value that cannot be read, are
refused one line each, naming why and the override (``--set KEYWORD=VALUE``), and nothing of
them is stored, while the other files are; a summary line ends the output, and the exit status
is 1 when any file was refused (2 when the command could not run: a bad ``--set``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from awlineage import AwlError
from awlineage.cli import real_number
from awlineage.processing import EXECUTOR_NAMES


def _demo(args: argparse.Namespace) -> int:
    from targets.demo import run_demo

    return run_demo(args.database, size=args.size, executor=args.executor,
                    spark_master=args.spark_master,
                    cosmic_ray_threshold=args.cosmic_ray_threshold, colour=args.colour)


def add_demo(commands: argparse._SubParsersAction) -> None:
    """Add ``awl demo`` (the ``awlineage.commands`` entry point ``demo``)."""
    demo = commands.add_parser("demo", help="generate a night, ingest it, pull its source "
                               "lists and trace a star back to its raw pixels")
    demo.add_argument("--size", choices=("small", "medium", "large"), default="small",
                      help="how big a night: small (2 chips of 256x256), medium (4 of 1024x1024) "
                      "or large (4 of 2048x2048) (default %(default)s)")
    demo.add_argument("--executor", choices=EXECUTOR_NAMES, default="auto",
                      help="where targets are made: spark, serial, or auto (default: spark "
                      "when pyspark is installed, else serial)")
    demo.add_argument("--spark-master", metavar="URL",
                      help="Spark master URL (default local[*]), such as the one awl spark "
                      "start prints; a cluster needs PostgreSQL (AWL_DATABASE_URL) and an S3 "
                      "or HTTP data server (AWL_DATA_URL)")
    demo.add_argument("--cosmic-ray-threshold", type=real_number("a detection limit", above=True),
                      metavar="SIGMA",
                      help="LACosmic's detection limit (default 4.5): changing it remakes only "
                           "what depends on it")
    demo.add_argument("--colour", "--color", choices=("auto", "always", "never"),
                      default="auto",
                      help="colour the progress and the report: auto (on a terminal, unless "
                      "NO_COLOR is set), always or never (default %(default)s)")
    demo.set_defaults(run=_demo)


def _ingest(args: argparse.Namespace) -> int:
    from awlineage import connect
    from awlineage.storage import current_data_server
    from targets.header_overrides import parse_overrides
    from targets.pipeline import ingest

    try:
        overrides = parse_overrides(args.set or ())
    except ValueError as exc:
        raise AwlError(f"nothing ingested: {exc}") from None
    paths = []
    for given in map(Path, args.paths):
        if not given.is_dir():
            paths.append(given)
            continue
        found = sorted(given.glob("*.fits"))
        if not found:
            raise AwlError(f"nothing ingested: the directory {given} holds no *.fits file "
                           "(name other files themselves: awl ingest DIR/*.fit)")
        paths.extend(found)
    current_data_server()  # first: a file named awl-data is said so before the database is made
    connect(args.database)
    try:
        report = ingest(paths, args.type, refused="report", overrides=overrides)
    except ValueError as exc:
        raise AwlError(f"nothing ingested: {exc}") from None
    for frame in report.ingested:
        where = f"[{frame.extension}]" if frame.extension else ""
        print(f"{frame.object_id}  {type(frame).__name__:16s} {frame.original_name}{where}  "
              f"chip={frame.chip} filter={frame.filter} exptime={frame.exptime}")
    for note in report.overridden:
        print(f"set: {note}", file=sys.stderr)
    for note in report.repairs:
        print(f"repaired: {note}", file=sys.stderr)
    for note in report.defaults:
        print(f"default: {note}", file=sys.stderr)
    for note in report.skipped:
        print(f"skipped: {note}", file=sys.stderr)
    for _, reason in report.refused:
        print(f"refused: {reason}", file=sys.stderr)
    print(report.summary(), file=sys.stderr)
    # like make's "troubled" status: the batch ran and the other files are stored (exit 2 is
    # for a command that could not run at all)
    return 1 if report.refused else 0


def add_ingest(commands: argparse._SubParsersAction) -> None:
    """Add ``awl ingest`` (the ``awlineage.commands`` entry point ``ingest``)."""
    ingest = commands.add_parser("ingest", help="store raw FITS frames (files or directories) "
                                 "and record what their headers say")
    ingest.add_argument("paths", nargs="+", metavar="PATH",
                        help="a FITS file, or a directory whose FITS files (.fits) are ingested")
    ingest.add_argument("--type", choices=("bias", "domeflat", "science"),
                        help="the kind of every frame, instead of the header's IMAGETYP, ...")
    ingest.add_argument("--set", action="append", metavar="KEYWORD=VALUE",
                        help="use VALUE for KEYWORD in every frame's header before it is read "
                        "(a value the header has but that cannot be read refuses the frame); "
                        "an empty VALUE removes the keyword; repeatable")
    ingest.set_defaults(run=_ingest)
