"""``awl ingest PATH...``: store raw FITS frames (one per image extension) and record what their
headers say; files that cannot be frames, or whose headers hold a value that cannot be read, are
refused, naming why and the override (``--set KEYWORD=VALUE``), and nothing of them is stored."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from awlineage.database import connect
from awlineage.errors import AwlError


def _run(args: argparse.Namespace) -> int:
    from targets.header_overrides import parse_overrides
    from targets.pipeline import ingest

    try:
        overrides = parse_overrides(args.set or ())
    except ValueError as exc:
        raise AwlError(f"nothing ingested: {exc}") from None
    connect(args.database)
    paths = []
    for given in map(Path, args.paths):
        paths.extend(sorted(given.glob("*.fits")) if given.is_dir() else [given])
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
    for note in report.defaults:
        print(f"default: {note}", file=sys.stderr)
    for note in report.skipped:
        print(f"skipped: {note}", file=sys.stderr)
    print(f"ingested {len(report.ingested)} frame(s); {len(report.already)} already ingested",
          file=sys.stderr)
    if report.refused:
        for _, reason in report.refused:
            print(f"refused: {reason}", file=sys.stderr)
        raise AwlError(f"{len(report.refused)} file(s) refused, nothing of them stored: "
                       + ", ".join(str(path) for path, _ in report.refused))
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``ingest`` to the ``awl`` parser."""
    ingest = commands.add_parser("ingest", help="store raw FITS frames (files or directories) "
                                 "and record what their headers say")
    ingest.add_argument("paths", nargs="+", metavar="PATH")
    ingest.add_argument("--type", choices=("bias", "domeflat", "science"),
                        help="the kind of every frame, instead of the header's IMAGETYP, ...")
    ingest.add_argument("--set", action="append", metavar="KEYWORD=VALUE",
                        help="use VALUE for KEYWORD in every frame's header before it is read "
                        "(a value the header has but that cannot be read refuses the frame); "
                        "an empty VALUE removes the keyword; repeatable")
    ingest.set_defaults(run=_run)
