"""``awl schema dump``: write (or check) the DDL of the framework's tables in ``schema/``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _dump(args: argparse.Namespace) -> int:
    from awlineage.database import DIALECTS, framework_ddl
    from awlineage.federation import SITE_TABLES

    out = Path(args.output)
    stale = []
    for backend in DIALECTS:
        target = out / f"{backend}.sql"
        text = framework_ddl(backend, extra=SITE_TABLES)
        if args.check:
            if not target.exists() or target.read_text() != text:
                stale.append(str(target))
            continue
        out.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(f"wrote {target}")
    if stale:
        print(f"stale: {', '.join(stale)}; run `awl schema dump`", file=sys.stderr)
        return 1
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``schema dump`` to the ``awl`` parser."""
    schema = commands.add_parser("schema", help="the framework's SQL schema")
    schema_commands = schema.add_subparsers(dest="schema_command", required=True)
    dump = schema_commands.add_parser("dump", help="write schema/postgresql.sql and sqlite.sql")
    dump.add_argument("--output", default="schema", metavar="DIRECTORY",
                      help="directory the two files are written to (default %(default)s)")
    dump.add_argument("--check", action="store_true", help="fail if the files are stale")
    dump.set_defaults(run=_dump)
