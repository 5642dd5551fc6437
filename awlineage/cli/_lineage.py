"""``awl info | trace | diff | ancestors | descendants | export | lineage``: lineage from the
command line. IDs are object_ids or a unique prefix of one (like git's short hashes); one that
is not stored, or a prefix of several, is an error naming it (exit status 2)."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from awlineage.cli._arguments import link_count
from awlineage.cli._common import open_database, prepare, print_objects
from awlineage.cli._ids import parse_id, resolve_id
from awlineage.cli._sites import export_bundle_command
from awlineage.errors import AwlError

if TYPE_CHECKING:
    from awlineage.database import Database
    from awlineage.persistence import DBObject


def _open(args: argparse.Namespace) -> tuple[Database, list[DBObject]]:
    db = open_database(args)
    prepare(db, args.imports)
    ids = args.ids if hasattr(args, "ids") else [args.id]
    return db, [db.get(resolve_id(db, text)) for text in ids]


@contextmanager
def _incomplete_on_stderr() -> Iterator[None]:
    """Print what other sites could not give (`LineageIncompleteWarning`) on stderr, in the
    command's own words; the answer on stdout keeps those objects as pointers."""
    from awlineage.lineage import LineageIncompleteWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LineageIncompleteWarning)
        yield
    for warning in caught:
        if issubclass(warning.category, LineageIncompleteWarning):
            print(f"awl: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)


def _info(args: argparse.Namespace) -> int:
    from awlineage.lineage import info

    _, (obj,) = _open(args)
    with _incomplete_on_stderr():
        tree = info(obj, depth=args.depth, group=not args.expand,
                    follow_remote=not args.no_remote)
    print(tree)
    if tree.grouped():
        print(f"(same-class siblings grouped, the first shown; each of them: "
              f"awl info {obj.object_id} --depth {args.depth} --expand)", file=sys.stderr)
    return 0


def find_run(obj: DBObject) -> Any:
    """The process run `obj` is, or the one that made it."""
    from awlineage.trace import Process, ProcessRun

    if isinstance(obj, ProcessRun):
        return obj
    if isinstance(obj, Process) and obj.process_run is not None:
        return obj.process_run
    raise AwlError(f"{type(obj).__name__} {obj.object_id} is neither a process run nor a "
                   "target made by one")


def format_trace(run: Any) -> str:
    """A run's header line, its call trace as an indented tree with durations, and the
    warnings raised during the make."""
    outcome = run.status if run.succeeded else f"{run.status}: {run.error_type}: " \
        f"{run.error_message}"
    duration = f" in {run.duration * 1000:.3f} ms" if run.duration is not None else ""
    lines = [f"ProcessRun {run.object_id} of {run.target_class} {run.target_id}: "
             f"{outcome}{duration}",
             f"  code version {run.code_version}, parameters {run.parameters}",
             f"  {run.user}@{run.host} pid {run.pid}, {run.python}, started "
             f"{run.started.isoformat() if run.started else '?'}"]
    for call in run.calls():
        result = f" raised {call['error']}" if call["error"] else f" -> {call['result']}"
        lines.append(f"{'  ' * (call['depth'] + 1)}{call['owner']}.{call['method']}"
                     f"({call['arguments']}){result}  [{call['duration'] * 1000:.3f} ms]")
    if run.calls_dropped:
        lines.append(f"  ... {run.calls_dropped} more calls not recorded (AWL_TRACE_MAX_CALLS)")
    count = run.warnings_count or 0
    if count:
        lines.append(f"  {count} warning{'s' if count != 1 else ''} during the make:")
        lines.extend(f"    {entry}" for entry in run.warnings or [])
    return "\n".join(lines)


def _trace(args: argparse.Namespace) -> int:
    _, (obj,) = _open(args)
    print(format_trace(find_run(obj)))
    return 0


def _diff(args: argparse.Namespace) -> int:
    from awlineage.lineage import diff

    _, (a, b) = _open(args)
    found = diff(a, b, depth=args.depth, tables=not args.no_tables)
    print(found.to_json() if args.json else found)
    return 0


def _walk(direction: str) -> Callable[[argparse.Namespace], int]:
    """The command that prints the `direction` (``ancestors`` or ``descendants``) of an
    object (the lineage package is imported when it runs, not when ``awl`` lists it)."""

    def run(args: argparse.Namespace) -> int:
        from awlineage import lineage

        walk: Callable[..., list[DBObject]] = getattr(lineage, direction)
        _, (obj,) = _open(args)
        options = {} if getattr(args, "no_remote", None) is None else \
            {"follow_remote": not args.no_remote}
        with _incomplete_on_stderr():
            found = walk(obj, depth=args.depth, **options)
        print_objects(found)
        print(f"({len(found)} object{'s' if len(found) != 1 else ''})", file=sys.stderr)
        return 0

    return run


def _export(args: argparse.Namespace) -> int:
    from awlineage.lineage import openlineage_events, prov_json
    from awlineage.whole_files import existing_file, write_whole

    if args.output and existing_file(args.output) and not args.overwrite:  # before any work
        raise AwlError(f"{args.output} exists: pass --overwrite to replace it")
    if args.format == "bundle":
        return export_bundle_command(args)
    _, (obj,) = _open(args)
    if args.format == "prov":
        text = prov_json(obj, depth=args.depth)
    else:
        text = json.dumps(openlineage_events(obj, depth=args.depth), indent=1)
    if args.output:
        write_whole(args.output, (text + "\n").encode())
    else:
        print(text)
    return 0


def _reindex(args: argparse.Namespace) -> int:
    from awlineage.lineage import drop_closure_index, reindex_closure

    db = open_database(args)
    prepare(db, args.imports)
    if args.drop:
        dropped = drop_closure_index(db)
        print(f"closure index off ({dropped} labels deleted); lineage queries walk the links")
        return 0
    built = reindex_closure(db, max_labels=args.max_labels, answer=args.answer)
    print(f"closure index built: {built}; commits now keep it up to date")
    return 0


def _check(args: argparse.Namespace) -> int:
    from awlineage.lineage import check_closure_index

    db = open_database(args)
    prepare(db, args.imports)
    result = check_closure_index(db)
    print(result)
    return 0 if result.ok or not result.present else 1


def _positive_count(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number of labels")
    return value


_ANSWERS = ("cheaper", "labels", "by query", "ancestors by query", "descendants by query",
            "partial")
"""`reindex_closure`'s answers other than the default (spelled as its `answer`)."""


def _add_index_commands(commands: argparse._SubParsersAction) -> None:
    lineage = commands.add_parser("lineage", help="the lineage graph's closure index "
                                  "(reindex, check)")
    actions = lineage.add_subparsers(dest="action", required=True, metavar="ACTION")
    reindex = actions.add_parser("reindex", help="build (or rebuild) the transitive-closure "
                                 "index of every stored object; commits then keep it up to date")
    reindex.add_argument("--max-labels", type=_positive_count, default=None,
                         help="refuse an encoding of more intervals than this")
    reindex.add_argument("--answer", default=None, choices=_ANSWERS, metavar="HOW",
                         help="how the index answers: labels within their budget (placed "
                         "ones only if estimated no slower than the recursive query one way; a "
                         "way where they are estimated over 4x slower by the query), else by "
                         "query, saying why (the default); 'partial' (labels for the part of "
                         "the graph that fits, the recursive query for the rest); 'cheaper' "
                         "(labels only for a direction where "
                         "their estimated scans cost no more than the recursive query); or "
                         "forced: " + ", ".join(repr(a) for a in _ANSWERS[1:-1]))
    reindex.add_argument("--drop", action="store_true",
                         help="turn the index off and delete it instead")
    reindex.set_defaults(run=_reindex)
    check = actions.add_parser("check", help="verify the index against the links (exit "
                               "status 1 if it disagrees)")
    check.set_defaults(run=_check, read_only=True)
    for parser in (reindex, check):
        parser.add_argument("--import", dest="imports", action="append", default=[],
                            help="module defining persistent classes (repeatable)")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add the lineage commands to the ``awl`` parser."""

    def command(name: str, help_text: str, run: Callable[[argparse.Namespace], int],
                depth: int | None, two_ids: bool = False) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=help_text)
        if name == "export":
            parser.add_argument("format", choices=("prov", "openlineage", "bundle"),
                                help="W3C PROV-JSON, OpenLineage events (JSON), or a "
                                "bundle another site can import (awl import bundle)")
        if two_ids:
            parser.add_argument("ids", type=parse_id, nargs=2, metavar="ID",
                                help="the two objects to compare: object_ids, or enough of "
                                "their first digits to be unique")
        else:
            parser.add_argument("id", type=parse_id, metavar="ID",
                                help="an object_id, or enough of its first digits to be unique")
        parser.add_argument("--depth", type=link_count, default=depth,
                            help=f"links to follow (default: {depth or 'all'})")
        parser.add_argument("--import", dest="imports", action="append", default=[],
                            help="module defining persistent classes (repeatable)")
        parser.set_defaults(run=run, read_only=True)
        return parser

    info = command("info", "the lineage tree of an object", _info, 1)
    info.add_argument("--expand", action="store_true", help="show every member of a link "
                      "list, instead of one line per class (12 x RawScienceFrame)")
    trace = commands.add_parser("trace", help="the call trace of a run (or of the run that "
                                "made a target)")
    trace.add_argument("id", type=parse_id, metavar="ID",
                       help="an object_id, or enough of its first digits to be unique")
    trace.add_argument("--import", dest="imports", action="append", default=[],
                       help="module defining persistent classes (repeatable)")
    trace.set_defaults(run=_trace, read_only=True)
    compare = command("diff", "where the lineages of two objects differ, and the rows of their "
                      "tables", _diff, None, two_ids=True)
    compare.add_argument("--json", action="store_true", help="print JSON instead of text")
    compare.add_argument("--no-tables", action="store_true", help="do not compare the rows "
                         "of the tables in the two objects' FITS files")
    remote_help = ("do not ask other sites for what pointers here stand for (by default "
                   "they are fetched and kept here; AWL_SITE_TIMEOUT bounds each request)")
    info.add_argument("--no-remote", action="store_true", help=remote_help)
    walk_up = command("ancestors", "everything an object was made from", _walk("ancestors"),
                      None)
    walk_up.add_argument("--no-remote", action="store_true", help=remote_help)
    command("descendants", "everything made from an object", _walk("descendants"), None)
    export = command("export", "an object's ancestry as PROV-JSON, OpenLineage events or a "
                     "bundle for another site", _export, None)
    export.add_argument("--output", "-o", help="write to this file instead of stdout (an "
                        "existing file is refused unless --overwrite is given)")
    export.add_argument("--overwrite", action="store_true", help="replace an existing file")
    export.add_argument("--files", action="store_true", help="bundle: include the files of "
                        "the data objects in it")
    _add_index_commands(commands)
