"""The ``awl regions`` command group: ``stats`` shows what region lineage captures recorded
per operator (calls, strategies, rows, bytes, the operator's own seconds where calls recorded
them, capture seconds, fan-in, fan-out) and what queries did through it (cells asked, mean hop
time, strategies used), as a table or JSON; ``optimise`` (`awlineage.cli._region_optimise`)
chooses the strategies."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from awlineage.cli import _region_optimise
from awlineage.cli._common import open_database


def _bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(headers)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
            for line in (headers, *rows)]


def _stats(args: argparse.Namespace) -> int:
    from awlineage.regions import read_operator_stats, read_query_summary

    db = open_database(args)
    operators = read_operator_stats(db, operator=args.operator)
    queries = read_query_summary(db, operator=args.operator)
    if args.json:
        print(json.dumps({"operators": [{**asdict(s), "run_seconds": s.run_seconds or None}
                                        for s in operators.values()],
                          "queries": [asdict(q) for q in queries]}, indent=1))
        return 0
    if not operators and not queries:
        known = sorted(read_operator_stats(db)) if args.operator else []
        if known:  # a name that is not among them: say which there are
            print(f"awl regions stats: no region lineage recorded for operator "
                  f"{args.operator!r}; operators with region lineage: {', '.join(known)}",
                  file=sys.stderr)
            return 1
        which = f"operator {args.operator!r}" if args.operator else "any operator"
        print(f"no region lineage recorded for {which}")
        return 0
    print("Captures, per operator (means per call):")
    print("\n".join("  " + line for line in _table(
        ["operator", "calls", "strategies", "rows", "stored", "run s", "lineage s", "fan-in",
         "fan-out"],
        [[s.operator, str(s.calls), ",".join(s.strategies), f"{s.rows:.0f}",
          _bytes(s.stored_bytes), _run_seconds(s.run_seconds), f"{s.lineage_seconds:.4f}",
          f"{s.fan_in:.2f}", f"{s.fan_out:.2f}"] for s in operators.values()])))
    print()
    if not queries:
        print("Queries: none recorded")
        return 0
    print("Queries, per operator and direction:")
    print("\n".join("  " + line for line in _table(
        ["operator", "direction", "queries", "hops", "cells asked", "mean s", "strategies"],
        [[q.operator, q.direction, str(q.queries), str(q.hops), str(q.cells),
          f"{q.mean_seconds:.5f}", _used(q.strategies)] for q in queries])))
    return 0


def _run_seconds(seconds: float) -> str:
    """The mean over the calls that recorded their operator's own seconds (those run through
    ``capture.run``); 0 means none did: not recorded, rather than a run that took no time."""
    return f"{seconds:.4f}" if seconds > 0 else "not recorded"


def _used(strategies: dict[str, Any]) -> str:
    return ", ".join(f"{name} x{hops}" for name, hops in strategies.items())


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add the ``regions`` command group to the ``awl`` parser."""
    regions = commands.add_parser("regions", help="region lineage: statistics and storage "
                                  "strategies")
    actions = regions.add_subparsers(dest="action", required=True, metavar="ACTION")
    stats = actions.add_parser("stats", help="capture and query statistics per operator")
    stats.add_argument("--operator", metavar="NAME", help="only this operator")
    stats.add_argument("--json", action="store_true", help="print JSON instead of tables")
    stats.set_defaults(run=_stats, read_only=True)
    _region_optimise.add(actions)
