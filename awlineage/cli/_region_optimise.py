"""``awl regions optimise``: choose each operator's region lineage strategies with the
optimiser of SubZero (section VII) from the recorded statistics and a workload, print the
plan, and store it as `RegionStrategy` versions that later captures follow."""

from __future__ import annotations

import argparse
import math
import re

UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
         "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from ``50MB``, ``1.5GB``, ``200kB``, ``64KiB`` or bare bytes (decimal units,
    binary with ``i``)."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else None
    size = float(match.group(1)) * UNITS[unit] if match and unit in UNITS else math.nan
    if not math.isfinite(size):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size: a number of bytes, or one with a unit "
            "(B, kB, MB, GB, TB, KiB, MiB, GiB)")
    return round(size)


def parse_runtime(text: str) -> tuple[str, float]:
    """``1.1`` (a ratio >= 1 to the workflow's runtime without lineage) or ``30s`` (seconds
    of capture overhead) as (kind, value)."""
    stripped = text.strip().lower()
    try:
        if stripped.endswith("s"):
            seconds = float(stripped[:-1])
            if 0 <= seconds < math.inf:
                return "seconds", seconds
        else:
            ratio = float(stripped)
            if 1 <= ratio < math.inf:
                return "ratio", ratio
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{text!r}: give a ratio >= 1 to the workflow's runtime "
                                     "without lineage (1.1) or seconds of capture overhead "
                                     "(30s)")


def parse_pin(text: str) -> tuple[str, list[str]]:
    """``OP=STRATEGY`` (or ``OP=S1,S2``) as (operator, strategies), names checked."""
    from awlineage.regions import RegionError, check_strategies

    operator, sep, names = text.partition("=")
    if not sep or not operator.strip() or not names.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: give OPERATOR=STRATEGY")
    try:
        return operator.strip(), check_strategies(
            operator.strip(), [n.strip() for n in names.split(",") if n.strip()])
    except RegionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add(actions: argparse._SubParsersAction) -> None:
    """Add ``optimise`` to the subcommands of ``awl regions``."""
    parser = actions.add_parser(
        "optimise", help="choose each operator's lineage strategies for a workload within "
        "disk and runtime limits (SubZero, section VII) and store them for later captures")
    parser.add_argument("--max-disk", type=parse_size, default=None, metavar="SIZE",
                        help="MaxDISK: bytes the region lineage of the recorded calls may "
                        "take (50MB, 1.5GB, 200kB, bytes; default: no limit)")
    parser.add_argument("--max-runtime", type=parse_runtime, default=None, metavar="RATIO",
                        help="MaxRUNTIME: a ratio to the workflow's runtime without lineage "
                        "(1.1 = 10%% capture overhead) or seconds of overhead (30s)")
    parser.add_argument("--workload", metavar="FILE",
                        help="workload file, JSON lines or CSV: operator, direction, "
                        "frequency[, cells] (default: the recorded queries)")
    parser.add_argument("--pin", type=parse_pin, action="append", default=[],
                        metavar="OP=STRATEGY", help="keep this strategy for this operator "
                        "(stored as pinned; repeatable)")
    parser.add_argument("--adaptive", action="store_true",
                        help="also make operators without a choice start black-box (when "
                        "they can re-run), to be refined once statistics exist")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan without storing it")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        metavar="MODULE", help="module defining the operators (repeatable)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Optimise, print the plan and (unless ``--dry-run``) store it."""
    from awlineage.cli._common import open_database, prepare
    from awlineage.regions import gather_inputs, optimise, plan_table, set_adaptive, store_plan

    db = open_database(args)
    prepare(db, args.imports)
    inputs = gather_inputs(db, args.workload, dict(args.pin))
    max_runtime = _runtime_seconds(args.max_runtime, inputs.workflow_seconds)
    if args.adaptive and not args.dry_run:
        set_adaptive(True)
        print("adaptive start on: operators without a choice of their own start black-box "
              "(when they can re-run)")
    if not inputs.candidates:
        print("no region lineage recorded yet: nothing to optimise")
        return 0
    plan = optimise(inputs.candidates, inputs.weights, max_disk=args.max_disk,
                    max_runtime=max_runtime, pinned=inputs.pins)
    print(plan_table(plan, inputs.workload_source))
    print(_limits(args.max_disk, args.max_runtime, max_runtime, inputs.workflow_seconds,
                  inputs.workflow_source))
    for note in [*inputs.notes, *plan.notes]:
        print(f"  note: {note}")
    if args.dry_run:
        print("dry run: nothing stored")
    else:
        stored = store_plan(plan)
        print(f"stored {len(stored)} choices (RegionStrategy); later captures without mode= "
              "follow them")
    return 0


def _runtime_seconds(limit: tuple[str, float] | None, workflow: float) -> float | None:
    if limit is None:
        return None
    from awlineage.regions import RegionError

    kind, value = limit
    if kind == "seconds":
        return value
    if workflow <= 0:
        raise RegionError(f"--max-runtime {value}: a ratio needs the workflow's runtime, but "
                          "no make that captured lineage was timed and no recorded call ran "
                          "its operator (run_seconds); give seconds instead (e.g. 30s)")
    return (value - 1.0) * workflow


def _limits(max_disk: int | None, limit: tuple[str, float] | None, seconds: float | None,
            workflow: float, source: str = "") -> str:
    from awlineage.regions import format_size

    disk = "no limit" if max_disk is None else format_size(max_disk)
    if limit is None:
        runtime = "no limit"
    elif limit[0] == "ratio":
        runtime = (f"{limit[1]:g} x the {workflow:.4g} s without lineage ({source}): at "
                   f"most {seconds:.4g} s of capture")
    else:
        runtime = f"{seconds:.4g} s of capture"
    return f"limits: disk {disk}; runtime {runtime}"
