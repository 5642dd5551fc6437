"""The ``awl`` command: queries, schema dumps and the demo."""

from __future__ import annotations

import argparse
import datetime
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from awlineage.database import Database, connect
from awlineage.database._ddl import DIALECTS, framework_ddl
from awlineage.errors import AwlError
from awlineage.persistence import DBObject, DBObjectMeta


def _import_modules(names: Sequence[str]) -> None:
    for name in names:
        importlib.import_module(name)


def import_registered_modules(db: Database) -> list[str]:
    """Import the modules that defined the classes stored in `db`; return those that failed."""
    failed = []
    for entry in db.registered_classes().values():
        if entry.name in DBObjectMeta.registry or entry.module.startswith("__main__"):
            continue
        try:
            importlib.import_module(entry.module)
        except ImportError:
            failed.append(entry.module)
    return failed


def _format_value(value: object) -> str:
    if isinstance(value, DBObject):
        return f"<{type(value).__name__} {value.object_id}>"
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def print_objects(objects: Sequence[DBObject], out=sys.stdout) -> None:
    """Print objects as a table: id, class, then each descriptor."""
    for obj in objects:
        values = [
            f"{name}={_format_value(obj.__dict__.get(name))}"
            for name, prop in type(obj)._properties.items()  # type: ignore[attr-defined]
            if not prop.builtin and not (prop.kind.is_link or prop.kind.is_list)
        ]
        print(f"{obj.object_id}  {type(obj).__name__} v{obj.version}  {'  '.join(values)}",
              file=out)


def _cmd_select(args: argparse.Namespace) -> int:
    from awlineage.query import select

    db = connect(args.database)
    _import_modules(args.imports)
    import_registered_modules(db)
    cls = DBObjectMeta.registry.get(args.cls) if args.cls else None
    if args.cls and cls is None:
        raise AwlError(f"unknown persistent class {args.cls!r}")
    query = select(args.query, cls)
    if args.count:
        print(query.count())
        return 0
    objects = query.limit(args.limit).all()
    print_objects(objects)
    print(f"({len(objects)} object{'s' if len(objects) != 1 else ''})", file=sys.stderr)
    return 0


def _cmd_schema_dump(args: argparse.Namespace) -> int:
    out = Path(args.output)
    stale = []
    for backend in DIALECTS:
        target = out / f"{backend}.sql"
        text = framework_ddl(backend)
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


def _cmd_demo(args: argparse.Namespace) -> int:
    from awlineage.demo import run_demo

    return run_demo(args.database)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``awl``."""
    parser = argparse.ArgumentParser(prog="awl", description=__doc__)
    parser.add_argument("--database", help="database URL (default: AWL_DATABASE_URL or "
                        "sqlite:///awlineage.db)")
    commands = parser.add_subparsers(dest="command", required=True)

    sel = commands.add_parser("select", help="run a textual query and list the objects")
    sel.add_argument("query", help="e.g. \"RawFrame.exptime > 10 and RawFrame.chip == 'ccd50'\"")
    sel.add_argument("--class", dest="cls", help="class for bare attribute names")
    sel.add_argument("--limit", type=int, default=100)
    sel.add_argument("--count", action="store_true", help="print only how many match")
    sel.add_argument("--import", dest="imports", action="append", default=[],
                     help="module defining persistent classes (repeatable)")
    sel.set_defaults(run=_cmd_select)

    schema = commands.add_parser("schema", help="the framework's SQL schema")
    schema_commands = schema.add_subparsers(dest="schema_command", required=True)
    dump = schema_commands.add_parser("dump", help="write schema/postgresql.sql and sqlite.sql")
    dump.add_argument("--output", default="schema")
    dump.add_argument("--check", action="store_true", help="fail if the files are stale")
    dump.set_defaults(run=_cmd_schema_dump)

    demo = commands.add_parser("demo", help="run the demo on the embedded defaults")
    demo.set_defaults(run=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``awl``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except AwlError as exc:
        print(f"awl: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader (e.g. `head`) stopped early
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
