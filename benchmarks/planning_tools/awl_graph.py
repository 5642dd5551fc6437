"""The benchmark graph in an awlineage database, and the planning measurement; run as a child
process (``python -m planning_tools.awl_graph build|plan ...``) so its peak memory is its own.

Building commits in batches of frames (raw frames, their calibrated frames, their groups),
each target made by its own ``make()`` as the processor would, and empties the identity map
between batches so that memory stays bounded."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "spark_targets"))
sys.path.insert(0, str(HERE.parent))

from benchmark_support import count_queries  # noqa: E402
from processor_models import (  # noqa: E402  imported as itself, as Spark workers and awl do
    BenchFrame,
    BenchGroup,
    BenchMaster,
    BenchRawCal,
    BenchRawFrame,
)

from awlineage import TargetProcessor, commit, connect  # noqa: E402
from awlineage.processing import State  # noqa: E402
from awlineage.trace import default_parameters  # noqa: E402
from planning_tools.child import report  # noqa: E402
from planning_tools.shape import CALS, CHIPS, GROUP  # noqa: E402


def build(url: str, schema: str | None, frames: int, batch: int) -> dict[str, float]:
    """Store raw data and make every target of a graph of `frames` frames; return the seconds
    spent making (``make()`` and its run records) and committing."""
    db = connect(url, schema=schema)
    spent = {"make": 0.0, "commit": 0.0}

    def timed(kind: str, work: Callable[[], object]) -> object:
        start = time.perf_counter()
        value = work()
        spent[kind] += time.perf_counter() - start
        return value

    cals = [BenchRawCal(chip=f"ccd{i % CHIPS}", level=100.0 + i) for i in range(CALS)]
    timed("commit", lambda: commit(cals))
    masters = {}
    for chip in range(CHIPS):
        master = BenchMaster(chip=f"ccd{chip}", raws=[c for c in cals if c.chip == f"ccd{chip}"],
                             process_params=default_parameters(BenchMaster))
        timed("make", master.make)
        masters[master.chip] = master
    timed("commit", lambda: commit(list(masters.values())))
    frame_params = default_parameters(BenchFrame)
    group_params = default_parameters(BenchGroup)
    batch = max(GROUP, batch // GROUP * GROUP)
    for first in range(0, frames, batch):
        raws = [BenchRawFrame(chip=f"ccd{i % CHIPS}", field=f"f{i // GROUP}", counts=float(i))
                for i in range(first, min(frames, first + batch))]
        timed("commit", lambda: commit(raws))  # noqa: B023
        made = []
        for raw in raws:
            frame = BenchFrame(raw=raw, chip=raw.chip, field=raw.field, master=masters[raw.chip],
                               process_params=frame_params)
            timed("make", frame.make)
            made.append(frame)
        timed("commit", lambda: commit(made))  # noqa: B023
        stacks = []
        for start in range(0, len(made), GROUP):
            members = made[start:start + GROUP]
            group = BenchGroup(field=members[0].field, frames=members,
                               process_params=group_params)
            timed("make", group.make)
            stacks.append(group)
        timed("commit", lambda: commit(stacks))  # noqa: B023
        db.identity_map.clear()
    db.close()
    return spent


def plan(url: str, schema: str | None, repeat: int) -> dict[str, float]:
    """Plan the graph's groups `repeat` times after a first, counted plan that checks every
    target is up to date; return the best time (that of the first when `repeat` is 0), the
    first, the targets and the queries."""
    db = connect(url, schema=schema)
    processor = TargetProcessor("serial", progress=False)
    start, start_cpu = time.perf_counter(), time.process_time()
    first: list = []
    queries = count_queries(db, lambda: first.append(processor.plan(BenchGroup)))
    first_seconds, first_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    made = first.pop()
    # counted by state, which a plan that builds nodes lazily answers without building them
    targets = sum(made.count(state) for state in State)
    red = made.count(State.RED)
    if red:
        raise SystemExit(f"{red} targets are not up to date")
    del made
    best, best_cpu = (float("inf"), float("inf")) if repeat else (first_seconds, first_cpu)
    for _ in range(repeat):
        db.identity_map.clear()
        start, start_cpu = time.perf_counter(), time.process_time()
        processor.plan(BenchGroup)
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    db.close()
    return {"seconds": best, "cpu_seconds": best_cpu, "first_seconds": first_seconds,
            "targets": targets, "queries": queries}


def main() -> None:
    """Child entry point: ``build URL FRAMES`` or ``plan URL``, figures as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("build", "plan"))
    parser.add_argument("url")
    parser.add_argument("--schema")
    parser.add_argument("--frames", type=int, default=8_000)
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if args.action == "build":
        report(**build(args.url, args.schema, args.frames, args.batch))
    else:
        report(**plan(args.url, args.schema, args.repeat))


if __name__ == "__main__":
    main()
