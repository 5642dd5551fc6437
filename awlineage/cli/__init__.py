"""The ``awl`` command. Each command group lives in a module of its own that adds its
subcommands to the parser (`COMMAND_MODULES`); this module assembles them and runs one."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from awlineage.errors import AwlError

COMMAND_MODULES = (
    "awlineage.cli._select",
    "awlineage.cli._schema",
    "awlineage.cli._lineage",
    "awlineage.cli._make",
    "awlineage.cli._ingest",
    "awlineage.cli._dataserver",
    "awlineage.cli._demo",
)
"""Modules with an ``add_commands(subparsers)`` function, in the order of ``awl --help``."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``awl``, with the subcommands of every command module."""
    parser = argparse.ArgumentParser(prog="awl", description="awlineage: persistent objects "
                                     "and lineage for scientific pipelines")
    parser.add_argument("--database", help="database URL (default: AWL_DATABASE_URL or "
                        "sqlite:///awlineage.db)")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``awl``; returns the exit status (2 for an awlineage error)."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except AwlError as exc:
        print(f"awl: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader (e.g. `head`) stopped early
        sys.stderr.close()
        return 0
