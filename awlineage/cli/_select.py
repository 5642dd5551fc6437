"""``awl select``: run a textual query and list the objects."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from awlineage.cli._arguments import MAX_ROWS, whole_number
from awlineage.cli._common import (
    find_class,
    names_in_query,
    open_database,
    prepare,
    print_objects,
)
from awlineage.errors import AwlError

DEFAULT_LIMIT = 100
"""Objects listed when no --limit is given."""


def _run(args: argparse.Namespace) -> int:
    from awlineage.query import Query, class_name_alone, select

    db = open_database(args)
    prepare(db, args.imports, [*([args.cls] if args.cls else []), *names_in_query(args.query)])
    cls = find_class(db, args.cls) if args.cls else None
    whole = class_name_alone(args.query)
    if whole:  # a class unknown is told how to make it known
        find_class(db, whole)
    query: Query[Any] = select(args.query, cls, bind=_bindings(args.bind) if args.bind else None)
    if args.newest:
        query = query.newest()
    if args.count:  # every match, or at most --limit when it is given (as Query.count does)
        print((query if args.limit is None else query.limit(args.limit)).count())
        return 0
    objects = query.limit(DEFAULT_LIMIT if args.limit is None else args.limit).all()
    print_objects(objects)
    print(f"({len(objects)} object{'s' if len(objects) != 1 else ''})", file=sys.stderr)
    return 0


def _bindings(pairs: list[str]) -> dict[str, Any]:
    """``name=value`` pairs as a bind mapping, each value read as a query literal."""
    from awlineage.query import parse_value

    bound: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip().removeprefix(":")
        if not sep or not name.isidentifier():
            raise AwlError(f"--bind {pair!r}: write name=value, e.g. --bind d=5")
        if name in bound:
            raise AwlError(f"--bind: {name!r} is bound twice")
        try:
            bound[name] = parse_value(text)
        except AwlError as exc:
            raise type(exc)(f"--bind {name}: {exc}") from None
    return bound


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``select`` to the ``awl`` parser."""
    sel = commands.add_parser("select", help="run a textual query and list the objects")
    sel.add_argument("query", help="e.g. \"RawFrame.exptime > 10 and RawFrame.chip == 'ccd50'\", "
                     "or a class name alone for every object of the class")
    sel.add_argument("--class", dest="cls", help="class for bare attribute names")
    sel.add_argument("--limit", type=whole_number("a number of objects", high=MAX_ROWS),
                     help=f"list at most this many objects (default {DEFAULT_LIMIT}); with "
                     "--count, count at most this many")
    sel.add_argument("--count", action="store_true", help="print only how many match (all of "
                     "them, unless --limit is given)")
    sel.add_argument("--newest", action="store_true", help="only the newest version of each "
                     "identity (no object of which a newer version is stored)")
    sel.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE",
                     help="value of the placeholder :NAME in the query (repeatable), written "
                     "as in a query: 5, -2.5, 'WFI' (quote it for the shell), 2024-01-03, "
                     "true, false, none; e.g. select 'X.n in (:lo..:hi)' --bind lo=0 "
                     "--bind hi=9")
    sel.add_argument("--import", dest="imports", action="append", default=[],
                     help="module defining persistent classes (repeatable)")
    sel.set_defaults(run=_run, read_only=True)
