"""The ``awl`` command. Each command group lives in a module of its own that adds its
subcommands to the parser (`COMMAND_MODULES`); this module assembles them and runs one."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import warnings
from collections.abc import Sequence
from typing import NoReturn

import sqlalchemy as sa

from awlineage import config
from awlineage.cli._common import working_directory_first
from awlineage.errors import AwlError

COMMAND_MODULES = (
    "awlineage.cli._select",
    "awlineage.cli._schema",
    "awlineage.cli._lineage",
    "awlineage.cli._sites",
    "awlineage.cli._regions",
    "awlineage.cli._cutout",
    "awlineage.cli._make",
    "awlineage.cli._ingest",
    "awlineage.cli._dataserver",
    "awlineage.cli._demo",
    "awlineage.cli._serve",
)
"""Modules with an ``add_commands(subparsers)`` function, in the order of ``awl --help``."""
RETRY_PAUSE = 1.0
"""Seconds before a read-only command is run again after a lost database connection."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other ``awl`` error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``awl``, with the subcommands of every command module."""
    parser = _Parser(prog="awl", description="awlineage: persistent objects "
                                     "and lineage for scientific pipelines")
    parser.add_argument("--database", help="database URL (default: AWL_DATABASE_URL or "
                        "sqlite:///awlineage.db)")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``awl``; returns the exit status: 2 for an error, reported in one line
    on stderr (``AWL_TRACEBACK=1`` shows the traceback of an unexpected one)."""
    working_directory_first()
    _quiet_third_party_warnings()
    args: argparse.Namespace | None = None
    try:
        # inside: an argument type that fails in a way argparse does not catch is one line too
        args = build_parser().parse_args(argv)
        return _run(args)
    except AwlError as exc:
        print(f"awl: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except sa.exc.DBAPIError as exc:  # the database went away or refused us
        print(f"awl: {database_failure(args, exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader (e.g. `head`) stopped early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("awl: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a file named on the command line: the message names it
        print(f"awl: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        # A bug (ours or a plug-in's) still ends in one line; the traceback is one setting away.
        if os.environ.get("AWL_TRACEBACK"):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(f"awl: unexpected {type(exc).__name__}: {first} (AWL_TRACEBACK=1 shows where; "
              "please report it)", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    """Run the command; a read-only one is run once more after a lost connection (each run
    opens its own engine), since reading again cannot leave anything half-written."""
    try:
        return args.run(args)
    except sa.exc.DBAPIError as exc:
        if not (getattr(args, "read_only", False) and is_disconnect(exc)):
            raise
        time.sleep(RETRY_PAUSE)
        return args.run(args)


def is_disconnect(exc: sa.exc.DBAPIError) -> bool:
    """Whether `exc` is a lost or refused connection rather than a failing statement."""
    return bool(exc.connection_invalidated) or isinstance(exc, sa.exc.OperationalError)


def database_failure(args: argparse.Namespace | None, exc: sa.exc.DBAPIError) -> str:
    """One line saying which database failed and how (never the statement or its values)."""
    url = config.setting("database_url", getattr(args, "database", None))
    try:
        shown = sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        shown = "the database"
    reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
    if is_disconnect(exc):
        return f"DatabaseUnavailable: lost or could not open the connection to {shown} " \
               f"(nothing was committed by the failed step): {reason}"
    return f"DatabaseError: {shown} refused a statement: {type(exc.orig).__name__}: {reason}"


def _quiet_third_party_warnings() -> None:
    """Hide FutureWarnings that pyspark, pandas and py4j give about their own internals: they
    say nothing to a user of ``awl``."""
    for module in ("pyspark", "pandas", "py4j"):
        warnings.filterwarnings("ignore", category=FutureWarning, module=module)
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=module)


__all__ = ["build_parser", "main"]
