"""The interval encoding of issue 18 on its own (no database): encode wall and CPU seconds, peak
memory, labels per edge and the decomposition's figures, per graph shape and size, on the
graphs of ``benchmarks/closure.py`` (``make_graph``).

Graphs are generated once and kept (--cache), outside the time limit. Each graph is encoded
in a child process of its own, under a memory limit and a time limit, so a shape that blows up
is reported (``memory``, ``timeout``, ``too large`` when the duplication goes over the label
budget) instead of ending the run. With ``--baseline DIR`` every graph is encoded a second
time by the encoder of another checkout (for example main's), in a child process of the same
kind, and the ratio of the CPU times (baseline / this checkout; the machine may be shared)
is printed beside them.

Memory is the child's maximum resident set: over the whole child (interpreter, graph and
encoding) and the part of it the encoding added (0 when the encoding stayed below the peak of
loading the graph); wall and CPU are of the encoding only.

Usage: python benchmarks/closure_encoding.py [--sizes 1000,10000,...] [--shapes a,b,...]
           [--window W] [--seed S] [--budget B] [--timeout S] [--memory-gb G]
           [--baseline DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark_support import load_average

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent


def graph_file(shape: str, size: int, args: argparse.Namespace) -> Path | None:
    """The pickled parents lists of the graph, made once (wfcommons takes minutes at 100,000
    tasks, which must not count against the encoding's time limit); None when the recipe
    has no graph of that size."""
    path = args.cache / f"{shape}-{size}-w{args.window}-s{args.seed}.pickle"
    if not path.exists():
        args.cache.mkdir(parents=True, exist_ok=True)
        sys.path.insert(0, str(HERE))
        from closure import make_graph

        graph = make_graph(shape, size, args.window, args.seed)
        with path.open("wb") as out:
            pickle.dump(None if graph is None else graph.parents, out)
    with path.open("rb") as stored:
        return None if pickle.load(stored) is None else path


def encode_one(path: Path, budget: float, partial: bool = False) -> dict:
    """Encode one stored graph in this process; the figures as a dict (with `partial`, a
    graph over the budget is split as the index splits it: the part that fits labelled)."""
    import awlineage.lineage as lineage
    from awlineage.lineage import ClosureTooLargeError, encode_closure

    with path.open("rb") as stored:
        parents: list[list[int]] = pickle.load(stored)
    edges = [(p, child) for child, mine in enumerate(parents) for p in mine]
    nodes = range(len(parents))
    limit = int(budget * max(len(edges), len(parents)))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu = time.perf_counter(), time.process_time()
    out = {"nodes": len(parents), "edges": len(edges), "module": lineage.__file__}
    try:
        result = encode_closure(edges, nodes, max_labels=limit)
    except ClosureTooLargeError:
        out["result"] = "too large"
        if partial:
            from awlineage.lineage import labelled_part

            started = time.process_time()
            part = labelled_part(list(nodes), set(edges))
            out["split_cpu"] = time.process_time() - started
            if part is not None:
                out["split"] = {"labelled": len(part.labelled), "edges": part.edges,
                                "labels": len(part.encoding.labels),
                                "bound": part.max_ancestors}
    else:
        out["result"] = "ok"
        out["labels"] = len(result.labels)
        out["stats"] = vars(result.stats)
    out["wall"] = time.perf_counter() - wall
    out["cpu"] = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["peak_mb"] = (peak - before) / 1024
    out["rss_mb"] = peak / 1024
    return out


def run_child(checkout: Path, path: Path, args: argparse.Namespace) -> dict:
    """`encode_one` in a child process that imports awlineage from `checkout`."""
    env = dict(os.environ, PYTHONPATH=f"{checkout}{os.pathsep}{HERE}")
    memory = int(args.memory_gb * 2**30)
    command = [sys.executable, __file__, "--child", str(path), "--budget", str(args.budget),
               *(["--partial"] if args.partial else [])]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.timeout,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (memory, memory)))
    except subprocess.TimeoutExpired:
        return {"result": "timeout", "wall": time.perf_counter() - started}
    if done.returncode != 0:
        failed = "memory" if "MemoryError" in done.stderr else "error"
        return {"result": failed, "detail": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def cell(figures: dict) -> str:
    """Wall / CPU seconds and peak MB, or what went wrong."""
    if figures["result"] not in ("ok", "too large"):
        return f"{figures['result']:>26}"
    text = (f"{figures['wall']:8.2f} {figures['cpu']:8.2f} "
            f"{figures.get('rss_mb', 0):6.0f}+{figures['peak_mb']:<6.0f}")
    return text if figures["result"] == "ok" else text + " (too large)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--shapes", default="random-d1,random-d2,random-d4,montage,epigenomics,"
                        "1000genome,srasearch,cycles,soykb,pipeline")
    parser.add_argument("--window", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--budget", type=float, default=4.0,
                        help="max_labels = budget * max(edges, nodes)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per encoding")
    parser.add_argument("--memory-gb", type=float, default=6.0, help="address space per child")
    parser.add_argument("--baseline", type=Path, help="checkout whose encoder to compare with")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir())
                        / "awl-closure-graphs", help="where generated graphs are kept "
                        "(default: awl-closure-graphs in the temporary folder, $TMPDIR)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--partial", action="store_true",
                        help="split a graph over the budget as the index does, and print the "
                             "part labelled (objects, labels per edge of theirs)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1,000 nodes, random-d1 (the quickest to encode)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.shapes, args.timeout = "1000", "random-d1", 60.0
    if args.child:
        print(json.dumps(encode_one(args.child, args.budget, args.partial)))
        return
    print(load_average())
    columns = "wall s    CPU s  RSS+enc MB"
    header = f"{'shape':12} {'size':>9} {'edges':>9} {columns:>26}"
    if args.baseline:
        header += f" | baseline {columns:>17} | CPU ratio"
    print(f"interval encoding, label budget {args.budget} x edges; this checkout {CHECKOUT}"
          + (f", baseline {args.baseline}" if args.baseline else ""))
    print(header + " | labels/edge  stats")
    for size in (int(s) for s in args.sizes.split(",")):
        for shape in args.shapes.split(","):
            path = graph_file(shape, size, args)
            if path is None:
                continue
            mine = run_child(CHECKOUT, path, args)
            line = f"{shape:12} {size:>9,} {mine.get('edges', 0):>9,} {cell(mine)}"
            base: dict = {}
            if args.baseline:
                base = run_child(args.baseline, path, args)
                ratio = (f"{base['cpu'] / mine['cpu']:9.1f}x"
                         if base["result"] in ("ok", "too large") and mine.get("cpu")
                         else f"{'-':>10}")
                line += f" | {cell(base)} | {ratio}"
            if mine["result"] == "ok":
                stats = mine["stats"]
                line += (f" | {mine['labels'] / max(1, mine['edges']):11.2f}  "
                         f"reduced {stats['reduced_edges']:,} series {stats['series_parts']:,} "
                         f"parallel {stats['parallel_parts']:,} dim2 "
                         f"{stats['dimension2_parts']:,} split {stats['split_parts']:,} "
                         f"dup {stats['duplicated_parts']:,} copies "
                         f"{stats['duplicated_nodes']:,} clusters {stats.get('clusters', 0):,}")
            part = mine.get("split")
            if part is not None:
                line += (f" | partial: {part['labelled'] / max(1, mine['nodes']):.0%} of "
                         f"the objects labelled (at most {part['bound']:,} ancestors), "
                         f"{part['labels'] / max(1, part['edges']):.2f} labels per edge "
                         f"of theirs ({part['edges']:,}), split CPU {mine['split_cpu']:.1f} s")
            elif "split_cpu" in mine:
                line += " | partial: none fits"
            for figures in (mine, base) if args.baseline else (mine,):
                if "detail" in figures:
                    line += f" | {figures['detail']}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
    if "--child" not in sys.argv:  # a child's one line of JSON is all it prints
        print(load_average())
