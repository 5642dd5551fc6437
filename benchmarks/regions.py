"""Region lineage: storage and query speed on the workloads of DSLog (seed 004, Table VII),
and the SubZero astronomy case (seed 000, section VIII-A), in one run.

Part 1, per workload (negative and add on (10, 100000), sum over an axis of (1000, 1000),
tile, matrix x vector, matrix x matrix, sort, a value-dependent image filter): the size of
the raw lineage tuple table as CSV and as int32 binary, as gzip'd Parquet (pyarrow), and of
our stored encoding (the bytes of the RegionTable), with the paper's ProvRC size; then
backward and forward query latency for 1, 1,000 and 100,000 cells (a contiguous run in C
order at a random place) against a DuckDB join of the query cells with the tuples (loaded
from the Parquet file into an in-memory DuckDB table first, the stronger baseline). Our
query is one hop through the stored record: cells -> Region, range join on the compressed
table, deduplicated Region. The tables are decoded once (time reported separately).

Part 2: two 512 x 2000 images through cosmic-ray detection (astroscrappy, composite
lineage), background subtraction and masking (mapping operators), a composite, cosmic-ray
repair (composite), smoothing (mapping) and star detection (sep, composite with a payload per
star). Figure 5 of seed 000 as tables, per strategy (BlackBox, FullOne, SubZero, and the
optimiser's choice): lineage storage as a multiple of the input size, capture runtime
overhead (the same workflow, objects committed both times, without capture), and the five
backward and one forward query of seed 000 II-A (the answers checked equal across
strategies). The optimiser reads the statistics and recorded queries of the first three
(MaxDISK 2x the input per execution, runtime unbounded), stores its plan, and the workflow
is re-run with no mode given, so that its captures follow the plan.

Part 3: the SubZero genomics case (seed 000 section VIII-B, Figures 6 and 7): see
benchmarks/genomics.py.

Usage: python benchmarks/regions.py [--quick] [--repeat R] [--database URL] [--part 1|2|3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from awlineage import DBObject, backward, connect, persistent
from benchmarks import dslog_workloads
from awlineage.regions import (
    Boxes,
    Operator,
    Region,
    StepContext,
    capture_regions,
    decode_record,
    elementwise,
    neighbourhood,
    reduce,
    register_array_loader,
    stack,
    step_backward,
    step_forward,
)

MB = 1e6
#: ProvRC sizes of DSLog's Table VII (MB), the goal for the structured workloads.
PAPER_PROVRC = {"negative": 0.00978, "add": 0.0195, "sum": 0.00978, "tile": 0.00983,
                "matvec": 0.0195, "matmul": 0.0198, "sort": 3.43, "imgfilter": 0.00999,
                "imgfilter-noise": 0.00999, "lime": 0.0123, "d-rise": 0.0106,
                "group-by": 29.45, "inner-join": 14.13}
#: The same as a percentage of the paper's Raw table (its "Rel (%)" column for ProvRC).
PAPER_PROVRC_REL = {"negative": 0.0431, "add": 0.0431, "sum": 0.0475, "tile": 0.0100,
                    "matvec": 0.0498, "matmul": 4.95e-5, "sort": 15.15, "imgfilter": 0.233,
                    "imgfilter-noise": 0.233, "lime": 0.0511, "d-rise": 0.120,
                    "group-by": 16.05, "inner-join": 0.604}
#: Tuples of the paper's Array baseline (its size / 8 bytes / 4 columns), for scale.
PAPER_TUPLES = {"lime": 926_000, "d-rise": 346_000, "group-by": 7_840_000,
                "inner-join": 81_600_000}


def timed(action: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median wall time of `repeat` runs after one warm-up, and the last result."""
    result = action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


# -- part 1: workloads -------------------------------------------------------------------
@dataclass
class Workload:
    """One operation's lineage: per input, paired output and input cells (or boxes)."""

    name: str
    out_shape: tuple[int, ...]
    in_shapes: list[tuple[int, ...]]
    pairs: list[tuple[np.ndarray, np.ndarray]] | None      # cell tuples per input
    boxes: list[tuple[Boxes, Boxes]] | None = None          # box pairs per input
    structured: bool = True


def _grid(shape: tuple[int, ...]) -> np.ndarray:
    return np.stack(np.unravel_index(np.arange(int(np.prod(shape))), shape), axis=1)


def workloads(quick: bool, rng: np.random.Generator) -> list[Workload]:
    rows, cols = (10, 1_000) if quick else (10, 100_000)
    n = 100 if quick else 1000
    cells = _grid((rows, cols))
    result = [
        Workload("negative", (rows, cols), [(rows, cols)], [(cells, cells)]),
        Workload("add", (rows, cols), [(rows, cols)] * 2, [(cells, cells)] * 2),
    ]
    square = _grid((n, n))
    result.append(Workload("sum", (n,), [(n, n)], [(square[:, :1], square)]))
    tiled = _grid((2 * rows, 2 * cols))
    result.append(Workload("tile", (2 * rows, 2 * cols), [(rows, cols)],
                           [(tiled, tiled % np.array([rows, cols]))]))
    result.append(Workload("matvec", (n,), [(n, n), (n,)],
                           [(square[:, :1], square), (square[:, :1], square[:, 1:])]))
    for size in ([n // 10] if quick else [100, n]):
        full = np.arange(size)
        row_out = Boxes(np.stack([full, np.zeros(size, int)], 1),
                        np.stack([full, np.full(size, size - 1)], 1))
        col_out = Boxes(np.stack([np.zeros(size, int), full], 1),
                        np.stack([np.full(size, size - 1), full], 1))
        pairs = None
        if size <= 100:
            grid3 = _grid((size, size, size))           # (i, j, k)
            pairs = [(grid3[:, :2], grid3[:, [0, 2]]), (grid3[:, :2], grid3[:, [2, 1]])]
        result.append(Workload(f"matmul {size}", (size, size), [(size, size)] * 2, pairs,
                               [(row_out, row_out), (col_out, col_out)]))
    order = np.argsort(rng.random((rows, cols)), axis=1)
    result.append(Workload("sort", (rows, cols), [(rows, cols)],
                           [(cells, np.stack([cells[:, 0], order.ravel()], 1))],
                           structured=False))
    side = 64 if quick else 512
    for name, bright in (("imgfilter", _star_field(rng, side) > 5.0),
                         ("imgfilter-noise", rng.random((side, side)) > 0.9)):
        result.append(_image_filter(name, bright))
    return result


#: Sizes of the four generated workloads: (frame side, LIME samples, D-RISE masks,
#: Group By rows, Inner Join episodes), full and --quick. The frame is the 416 x 416 the
#: paper's image workflow feeds YOLOv4; LIME's default 1,000 samples; D-RISE 2,000 masks
#: (its authors use 5,000; the saliency threshold is a z-score, so fewer masks only find
#: fewer pixels). Group By on 4 million rows gives about the paper's 7.8 million tuples;
#: Inner Join is at 1 million episodes (9 million tuples, the paper's ~82 million would
#: take minutes of capture and gigabytes of memory on this machine).
XAI_RELATIONAL_SIZES = {False: (416, 1000, 2000, 4_000_000, 1_000_000),
                        True: (208, 200, 500, 10_000, 5_000)}


def generated_workloads(quick: bool, rng: np.random.Generator
                        ) -> tuple[list[Workload], list[str]]:
    """LIME, D-RISE, Group By and Inner Join (benchmarks/dslog_workloads.py), and a note
    per workload on how it was made."""
    side, lime_n, drise_n, rows, episodes = XAI_RELATIONAL_SIZES[quick]
    result, notes = [], []
    start = time.perf_counter()
    (out, ins, pairs), facts = dslog_workloads.lime(side, lime_n, rng)
    result.append(Workload("lime", out, ins, pairs, structured=False))
    notes.append(f"lime: {side}x{side}x3 frame, {lime_n:,} samples over {facts['superpixels']} "
                 f"superpixels, {facts['chosen']:.1f} significant per output "
                 f"({time.perf_counter() - start:.1f} s)")
    start = time.perf_counter()
    (out, ins, pairs), facts = dslog_workloads.drise(side, drise_n, rng)
    result.append(Workload("d-rise", out, ins, pairs, structured=False))
    notes.append(f"d-rise: {side}x{side}x3 frame, {drise_n:,} masks on a 16x16 grid, "
                 f"{facts['pixels']:,.0f} significant pixels per output "
                 f"({time.perf_counter() - start:.1f} s)")
    out, ins, pairs = dslog_workloads.group_by(rows, rng)
    result.append(Workload("group-by", out, ins, pairs, structured=False))
    notes.append(f"group-by: {rows:,} rows x 5 columns, 2 groups (isAdult, unsorted)")
    out, ins, pairs = dslog_workloads.inner_join(episodes, rng)
    result.append(Workload("inner-join", out, ins, pairs, structured=False))
    notes.append(f"inner-join: {episodes:,} episodes x 4 columns with {ins[1][0]:,} titles "
                 "x 5 columns on tconst (sorted)")
    for work in result:
        tuples = sum(len(o) for o, _ in work.pairs or [])
        notes.append(f"{work.name}: {tuples:,} tuples here, the paper's about "
                     f"{PAPER_TUPLES[work.name]:,}")
    return result, notes


def _star_field(rng: np.random.Generator, side: int) -> np.ndarray:
    """Unit-noise image with 150 Gaussian stars: bright pixels come in clumps."""
    yy, xx = np.mgrid[0:side, 0:side]
    image = rng.normal(0, 1, (side, side))
    for _ in range(150):
        y, x, flux = rng.uniform(0, side), rng.uniform(0, side), rng.uniform(50, 2000)
        image += flux / (2 * np.pi * 2.0) * np.exp(-((yy - y) ** 2 + (xx - x) ** 2) / 4.0)
    return image


def _image_filter(name: str, bright: np.ndarray) -> Workload:
    """A value-dependent filter: bright pixels are replaced from their 3 x 3 neighbourhood,
    the others copied."""
    side = bright.shape[0]
    pix = _grid(bright.shape)
    flag = bright.ravel()
    out, inp = [pix[~flag]], [pix[~flag]]
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            moved = pix[flag] + np.array([dy, dx])
            ok = np.all((moved >= 0) & (moved < side), axis=1)
            out.append(pix[flag][ok])
            inp.append(moved[ok])
    return Workload(name, bright.shape, [bright.shape],
                    [(np.concatenate(out), np.concatenate(inp))], structured=False)


class BenchFrame(DBObject):
    label = persistent("What the array is", str, "")


def record_of(work: Workload):
    """Capture the workload's lineage through the real API; the RegionTable (uncommitted)."""
    output = BenchFrame(label=work.name)
    inputs = [BenchFrame(label=f"in{i}") for i in range(len(work.in_shapes))]
    with capture_regions(output) as cap:
        refs = [cap.array(o, shape=s) for o, s in zip(inputs, work.in_shapes, strict=True)]
        call = cap.operator(work.name, refs, shape=work.out_shape)
        if work.boxes is not None:
            for i, (out, inp) in enumerate(work.boxes):
                call.lwrite(out, *[inp if k == i else None for k in range(len(refs))])
        else:
            assert work.pairs is not None
            for i, (out, inp) in enumerate(work.pairs):
                call.lwrite(out, *[inp if k == i else None for k in range(len(refs))])
        call.close()
    (record,) = cap.records
    return record


def csv_bytes(columns: list[np.ndarray]) -> int:
    """Exact size of the tuples written as CSV (header line included)."""
    digits = sum(int((np.floor(np.log10(np.maximum(c, 1))) + 1).sum()) for c in columns)
    header = len(",".join(f"c{i}" for i in range(len(columns)))) + 1
    return header + digits + len(columns[0]) * len(columns)


def _digit_sum(n: int) -> int:
    values = np.arange(n)
    return int((np.floor(np.log10(np.maximum(values, 1))) + 1).sum())


def matmul_raw(size: int) -> tuple[int, int, int]:
    """(tuples, CSV bytes, int32 bytes) of matrix x matrix lineage, without building it:
    every column of (i, j, i, k) runs over all values size**2 times."""
    tuples = 2 * size ** 3
    digits = 2 * 4 * size ** 2 * _digit_sum(size)
    header = 2 * (len("c0,c1,c2,c3") + 1)
    return tuples, header + digits + tuples * 4, tuples * 4 * 4


def parquet_tables(work: Workload, directory: Path) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = []
    assert work.pairs is not None
    for i, (out, inp) in enumerate(work.pairs):
        columns = {f"o{a}": out[:, a].astype(np.int32) for a in range(out.shape[1])}
        columns.update({f"i{a}": inp[:, a].astype(np.int32) for a in range(inp.shape[1])})
        path = directory / f"{work.name.replace(' ', '_')}_{i}.parquet"
        pq.write_table(pa.table(columns), path, compression="gzip")
        paths.append(path)
    return paths


def run_part1(quick: bool, repeat: int) -> None:
    import duckdb

    rng = np.random.default_rng(7)
    print("\nPart 1: DSLog workloads (Table VII) - sizes in MB")
    print(f"{'workload':<16}{'tuples':>14}{'CSV':>10}{'int32':>10}{'parquet-gz':>12}"
          f"{'ours':>10}{'ours/pq':>9}{'paper':>9}{'rel%':>9}{'paper%':>9}"
          "  encoding (capture s)")
    query_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        works = workloads(quick, rng)
        generated, notes = generated_workloads(quick, rng)
        works += generated
        for work in works:
            start = time.perf_counter()
            record = record_of(work)
            capture_s = time.perf_counter() - start
            ours = len(record.encoding)
            if work.pairs is not None:
                tuples = sum(len(o) for o, _ in work.pairs)
                csv = sum(csv_bytes([*o.T, *i.T]) for o, i in work.pairs)
                int32 = sum(o.size * 4 + i.size * 4 for o, i in work.pairs)
                paths = parquet_tables(work, Path(tmp))
                parquet = sum(p.stat().st_size for p in paths)
            else:
                size = work.out_shape[0]
                tuples, csv, int32 = matmul_raw(size)
                paths, parquet = [], None
            paper = PAPER_PROVRC.get(work.name.split()[0])
            pq_text = f"{parquet / MB:12.3f}" if parquet else f"{'n/a':>12}"
            ratio = f"{ours / parquet:9.4f}" if parquet else f"{'':>9}"
            print(f"{work.name:<16}{tuples:>14,}{csv / MB:10.2f}{int32 / MB:10.2f}{pq_text}"
                  f"{ours / MB:10.5f}{ratio}{paper if paper else '':>9}"
                  f"{100 * ours / csv:9.3g}{PAPER_PROVRC_REL[work.name.split()[0]]:9.3g}  "
                  f"{record.encoding_name} ({capture_s:.1f})")
            if paths:
                query_rows.extend(query_latencies(work, record, paths, rng, repeat, duckdb))
    print("  value-dependent lineage (the rest is fixed by shapes): "
          + ", ".join(w.name for w in works if not w.structured))
    print("  rel%: ours as a percentage of the CSV tuple table; paper%: the paper's ProvRC "
          "as a percentage of its Raw table")
    for note in notes:
        print(f"  {note}")
    print("\nPart 1: query latency, one hop (ms; median of "
          f"{repeat}); DuckDB joins the query cells with the tuple table")
    print(f"{'workload':<16}{'dir':<9}{'cells':>9}{'ours':>10}{'duckdb':>10}{'speedup':>9}"
          f"{'result cells':>14}")
    for row in query_rows:
        print(row)
    print("  the paper gives no one-hop query time per Table VII workload (its Figure 8 plots "
          "whole workflows against DuckDB baselines); DuckDB is its query engine")


def query_latencies(work: Workload, record, paths: list[Path], rng: np.random.Generator,
                    repeat: int, duckdb) -> list[str]:
    con = duckdb.connect()
    for i, path in enumerate(paths):
        con.execute(f"CREATE TABLE t{i} AS SELECT * FROM read_parquet('{path}')")
    start = time.perf_counter()
    decode_record(record)
    decode_ms = (time.perf_counter() - start) * 1e3
    rows = [f"{work.name:<16}{'decode':<9}{'':>9}{decode_ms:10.2f}"]
    shapes = record.shapes()
    for direction in ("backward", "forward"):
        done: set[int] = set()
        for count in (1, 1_000, 100_000):
            ours_t = duck_t = 0.0
            ours_n = duck_n = 0
            cells_used = 0
            for i, _ in enumerate(paths):
                shape = shapes.output if direction == "backward" else shapes.inputs[i]
                size = int(np.prod(shape))
                take = min(count, size)
                first = int(rng.integers(0, size - take + 1))
                cells = np.stack(np.unravel_index(np.arange(first, first + take), shape), 1)
                cells_used = take
                step = step_backward if direction == "backward" else step_forward

                def ours(cells=cells, shape=shape, step=step, i=i):
                    return step(record, Region(shape, cells), i, StepContext())

                t, found = timed(ours, repeat)
                ours_t += t
                ours_n += found.count()
                t, got = timed(lambda cells=cells, i=i, d=direction:
                               _duck_query(con, i, cells, d, work), repeat)
                duck_t += t
                duck_n += got
            if cells_used in done:
                continue
            done.add(cells_used)
            speed = duck_t / ours_t if ours_t else float("inf")
            check = "" if ours_n == duck_n else f"  MISMATCH duckdb {duck_n}"
            rows.append(f"{work.name:<16}{direction:<9}{cells_used:>9,}{ours_t * 1e3:10.2f}"
                        f"{duck_t * 1e3:10.2f}{speed:8.1f}x{ours_n:>14,}{check}")
    con.close()
    return rows


def _duck_query(con, i: int, cells: np.ndarray, direction: str, work: Workload) -> int:
    import pyarrow as pa

    q = pa.table({f"c{a}": cells[:, a].astype(np.int32) for a in range(cells.shape[1])})
    con.register("q", q)
    out, inp = work.pairs[i]
    key, value = ("o", "i") if direction == "backward" else ("i", "o")
    width = out.shape[1] if direction == "backward" else inp.shape[1]
    vwidth = inp.shape[1] if direction == "backward" else out.shape[1]
    on = " AND ".join(f"t{i}.{key}{a} = q.c{a}" for a in range(width))
    columns = ", ".join(f"t{i}.{value}{a}" for a in range(vwidth))
    result = con.sql(f"SELECT DISTINCT {columns} FROM t{i} JOIN q ON {on}").to_arrow_table()
    con.unregister("q")
    return result.num_rows


# -- part 2: the astronomy case ------------------------------------------------------------
class RawImage(DBObject):
    label = persistent("Exposure", str, "")


class Product(DBObject):
    label = persistent("What was made", str, "")


ARRAYS: dict[int, np.ndarray] = {}


class CosmicRays(Operator):
    """UDF A/B: astroscrappy's cosmic-ray mask. Composite lineage: a flagged pixel depends
    on the pixels within 3 (SubZero's 49 neighbours), others on their own pixel."""

    supported_modes = ("comp", "full", "blackbox")
    entire_array = True

    def __init__(self) -> None:
        super().__init__("cosmic_rays")

    def run(self, image, *, lineage):
        import astroscrappy

        mask, _ = astroscrappy.detect_cosmics(image, sigclip=4.5, readnoise=5.0, gain=1.0,
                                              niter=2)
        if lineage.wants("comp"):
            lineage.lwrite_payload(np.argwhere(mask), 3)
        elif lineage.wants("full"):
            cells = Boxes.from_cells(_grid(image.shape))
            lineage.lwrite_clipped(cells, cells.expand(np.where(mask.ravel(), 3, 0)))
        return mask.astype(np.uint8)

    def map_b(self, boxes, i, shapes):
        return boxes

    def map_f(self, boxes, i, shapes):
        return boxes

    def map_p(self, boxes, payload, i, shapes):
        return boxes.expand(payload[:, 0]).clip(shapes.inputs[i])


class RepairCosmicRays(CosmicRays):
    """UDF C: pixels flagged in either mask replaced by the 5 x 5 median of the composite.
    Composite lineage: repaired pixels depend on the 5 x 5 neighbourhood of every input."""

    def __init__(self) -> None:
        Operator.__init__(self, "repair_cosmic_rays")

    def run(self, image, mask1, mask2, *, lineage):
        from scipy.ndimage import median_filter

        flagged = (mask1 > 0) | (mask2 > 0)
        repaired = np.where(flagged, median_filter(image, size=5), image)
        if lineage.wants("comp"):
            lineage.lwrite_payload(np.argwhere(flagged), 2)
        elif lineage.wants("full"):
            cells = Boxes.from_cells(_grid(image.shape))
            boxes = cells.expand(np.where(flagged.ravel(), 2, 0))
            lineage.lwrite_clipped(cells, boxes, boxes, boxes)
        return repaired


class DetectStars(Operator):
    """UDF D: sep's segmentation map. A star's pixels depend on the star's box in the input
    (payload); other pixels on their own pixel."""

    supported_modes = ("comp", "full", "blackbox")
    payload_per_cell = False

    def __init__(self) -> None:
        super().__init__("detect_stars")

    def run(self, image, *, lineage):
        import sep

        data = np.ascontiguousarray(image, dtype=np.float64)
        background = sep.Background(data)
        objects, labels = sep.extract(data - background.back(), 5.0, err=background.globalrms,
                                      segmentation_map=True)
        star = labels > 0
        cells = np.argwhere(star)
        index = labels[star] - 1
        payload = np.stack([objects["ymin"][index], objects["xmin"][index],
                            objects["ymax"][index], objects["xmax"][index]], 1)
        if lineage.wants("comp"):
            lineage.lwrite_payload(cells, payload)
        elif lineage.wants("full"):
            rest = np.argwhere(~star)
            lineage.lwrite(np.concatenate([cells, rest]),
                           Boxes(np.concatenate([payload[:, :2], rest]),
                                 np.concatenate([payload[:, 2:], rest])))
        return labels

    def map_b(self, boxes, i, shapes):
        return boxes

    def map_f(self, boxes, i, shapes):
        return boxes

    def map_p(self, boxes, payload, i, shapes):
        return Boxes(payload[:, :2], payload[:, 2:])


class NoLineage:
    """Stands in for an operator call when nothing is captured."""

    def wants(self, mode: str) -> bool:
        return False


def synthetic_images(rng: np.random.Generator, shape=(512, 2000)) -> list[np.ndarray]:
    """Two exposures of one field: the same stars, noise and cosmic rays of their own."""
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]]
    sky = np.full(shape, 100.0)
    for _ in range(60):
        y, x = rng.uniform(10, shape[0] - 10), rng.uniform(10, shape[1] - 10)
        flux = rng.uniform(2000, 20000)
        box = (slice(int(y) - 8, int(y) + 9), slice(int(x) - 8, int(x) + 9))
        sky[box] += flux / (2 * np.pi * 2.25) * np.exp(
            -((yy[box] - y) ** 2 + (xx[box] - x) ** 2) / (2 * 2.25))
    images = []
    for _ in range(2):
        image = sky + rng.normal(0, 5, shape)
        hits = rng.integers(0, shape[0] * shape[1], 300)
        image.flat[hits] += rng.uniform(500, 5000, len(hits))
        images.append(image.astype(np.float32))
    return images


BACKGROUND_BOX = 15


#: Workflow strategies: no capture, the UDFs' mode given explicitly (built-ins: mapping),
#: or no mode given, so that captures follow the stored `RegionStrategy` choices.
WORKFLOW_STRATEGIES = ("none", "blackbox", "full", "comp", "chosen")


def workflow(images: list[np.ndarray], strategy: str) -> dict[str, object]:
    """Run the workflow; strategy ``none`` (no capture), ``comp`` (SubZero: map for
    built-ins, comp for the UDFs), ``full`` (full lineage for the UDFs, backward-optimised),
    ``blackbox`` (map for built-ins, the UDFs re-run at query time) or ``chosen`` (no mode
    given: every call follows the stored choices of the optimiser, else its default).
    Built-ins: a local background (15 x 15 box mean) subtracted, cosmic rays masked, the two
    frames averaged, the composite smoothed (3 x 3)."""
    from scipy.ndimage import uniform_filter

    if strategy not in WORKFLOW_STRATEGIES:
        raise ValueError(f"workflow strategy must be one of {WORKFLOW_STRATEGIES}, got "
                         f"{strategy!r}")
    capture = strategy != "none"
    udf_mode = None if strategy == "chosen" else strategy
    made: dict[str, object] = {}
    raws = []
    for k, image in enumerate(images):
        raw = RawImage(label=f"raw{k}")
        raw.commit()
        ARRAYS[raw.object_id] = image
        raws.append(raw)
    made["raws"] = raws
    cleaned, masks = [], []
    for k, (raw, image) in enumerate(zip(raws, images, strict=True)):
        mask_obj = Product(label=f"crmask{k}")
        if capture:
            with capture_regions(mask_obj) as cap:
                mask = cap.run(CosmicRays(), [cap.array(raw, data=image)], [image],
                               mode=udf_mode)
        else:
            mask = CosmicRays().run(image, lineage=NoLineage())
        mask_obj.commit()
        ARRAYS[mask_obj.object_id] = mask
        clean_obj = Product(label=f"cleaned{k}")
        level = uniform_filter(image, size=BACKGROUND_BOX)
        clean = (image - level) * (1 - mask)
        if capture:
            with capture_regions(clean_obj) as cap:
                r, m = cap.array(raw, data=image), cap.array(mask_obj, data=mask)
                lvl = cap.apply(neighbourhood(BACKGROUND_BOX // 2), [r], name="background")
                sub = cap.apply(elementwise(), [r, lvl], name="subtracted")
                cap.apply(elementwise(), [sub, m])
        clean_obj.commit()
        ARRAYS[clean_obj.object_id] = clean
        cleaned.append(clean_obj)
        masks.append(mask_obj)
    composite_obj = Product(label="composite")
    composite = (ARRAYS[cleaned[0].object_id] + ARRAYS[cleaned[1].object_id]) / 2
    if capture:
        with capture_regions(composite_obj) as cap:
            cube = cap.apply(stack(), [cap.array(c, data=ARRAYS[c.object_id]) for c in cleaned],
                             name="cube")
            cap.apply(reduce(0), [cube])
    composite_obj.commit()
    ARRAYS[composite_obj.object_id] = composite
    repaired_obj = Product(label="repaired")
    mask_arrays = [ARRAYS[m.object_id] for m in masks]
    if capture:
        with capture_regions(repaired_obj) as cap:
            inputs = [cap.array(composite_obj, data=composite),
                      *[cap.array(m, data=a) for m, a in zip(masks, mask_arrays, strict=True)]]
            repaired = cap.run(RepairCosmicRays(), inputs, [composite, *mask_arrays],
                               name="repaired", mode=udf_mode)
            cap.apply(neighbourhood(1), [cap.intermediate("repaired")])
    else:
        repaired = RepairCosmicRays().run(composite, *mask_arrays, lineage=NoLineage())
    smooth = uniform_filter(repaired, size=3)
    repaired_obj.commit()
    ARRAYS[repaired_obj.object_id] = smooth
    stars_obj = Product(label="stars")
    if capture:
        with capture_regions(stars_obj) as cap:
            labels = cap.run(DetectStars(), [cap.array(repaired_obj, data=smooth)], [smooth],
                             mode=udf_mode)
    else:
        labels = DetectStars().run(smooth, lineage=NoLineage())
    stars_obj.commit()
    ARRAYS[stars_obj.object_id] = labels
    made.update(masks=masks, cleaned=cleaned, composite=composite_obj,
                repaired=repaired_obj, stars=stars_obj, labels=labels)
    return made


# -- part 2: the strategies of Figure 5 and the optimiser's ----------------------------------
#: Figure 5's strategies in our names: the workflow strategy (the UDFs' mode; the
#: built-ins record mapping lineage throughout); ``Optimiser`` gives no mode, so that its
#: captures follow the stored choices.
ASTRO_ROWS = {"BlackBox": "blackbox", "FullOne": "full", "SubZero": "comp",
              "Optimiser": "chosen"}
ASTRO_QUERIES = ("BQ0", "BQ1", "BQ2", "BQ3", "BQ4", "FQ0")
ASTRO_QUERY_TEXT = {
    "BQ0": "the largest star -> raw images",
    "BQ1": "a median star -> raw images",
    "BQ2": "a star's box (+-10 px) of the labels -> the repaired image (star detection)",
    "BQ3": "a 64 x 64 box of the composite -> raw images (background, cosmic-ray masks)",
    "BQ4": "32 x 32 px of the repaired image around a cosmic ray -> composite and masks",
    "FQ0": "32 x 32 px of raw image 0 at the largest star -> the labels",
}
#: MaxDISK of the optimiser run, as a multiple of the input per recorded execution.
ASTRO_MAX_DISK = 2.0
PAPER_ASTRO = """\
The paper (seed 000 VIII-A, Figure 5), for comparison (two 512 x 2000 LSST images, 8 MB):
  5(a) disk x input, runtime x: FullOne 66x, 6x; FullMany 53x, 44x; SubZero (the
       optimiser's choice: composite lineage for the three cosmic-ray UDFs, payload for star
       detection, mapping for the 22 built-ins) 1.95x, 1.49x; BlackBox 0, 1x.
  5(b) BlackBox re-runs every operator (up to 100 s a query), BlackBoxOpt only the UDFs;
       backward queries 34x (FullMany) and 45x (FullOne) faster than BlackBox on average,
       SubZero 255x; the forward query uses the entire-array shortcut (83x)."""


@dataclass
class AstroRun:
    """One workflow strategy: its wall and CPU seconds and those of the runs without
    capture interleaved with it (`base_wall`, `base_cpu`), the execution that is queried,
    its lineage bytes and records, and per query (median seconds, answer, strategies the
    hops used)."""

    name: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    base_wall: list[float] = field(default_factory=list)
    base_cpu: list[float] = field(default_factory=list)
    made: dict[str, object] = field(default_factory=dict)
    disk: int = 0
    records: int = 0
    queries: dict[str, tuple[float, dict[str, int], dict[str, int]]] = field(
        default_factory=dict)


def _box(centre: np.ndarray, half: int, shape: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(max(0, int(c) - half), min(n, int(c) + half))
                 for c, n in zip(centre, shape, strict=True))


def astro_queries(made: dict[str, object]) -> dict[str, Callable[[], object]]:
    """The five backward and one forward query of seed 000 II-A on one execution (the same
    cells for every execution of the same images): stars traced to the raw images, and
    regions traced through part of the workflow, backward and forward."""
    from awlineage import forward

    labels = made["labels"]
    sizes = np.bincount(labels.ravel())[1:]
    order = np.argsort(sizes, kind="stable")[::-1]
    big = np.argwhere(labels == order[0] + 1)
    mid = np.argwhere(labels == order[len(order) // 2] + 1)
    shape = labels.shape
    star_box = tuple(slice(max(0, int(a) - 10), min(n, int(b) + 11))
                     for a, b, n in zip(big.min(0), big.max(0), shape, strict=True))
    rays = np.argwhere(ARRAYS[made["masks"][0].object_id])
    ray = rays[len(rays) // 2] if len(rays) else np.array(shape) // 2
    centre = np.array(shape) // 2
    stars, repaired, composite = made["stars"], made["repaired"], made["composite"]
    return {
        "BQ0": lambda: backward(stars, big, to=RawImage),
        "BQ1": lambda: backward(stars, mid, to=RawImage),
        "BQ2": lambda: backward(stars, star_box, to=repaired),
        "BQ3": lambda: backward(composite, _box(centre, 32, shape), to=RawImage),
        "BQ4": lambda: backward(repaired, _box(ray, 16, shape),
                                to=[composite, *made["masks"]]),
        "FQ0": lambda: forward(made["raws"][0], _box((big.min(0) + big.max(0)) // 2, 16,
                                                     shape), to=stars),
    }


def time_astro_queries(run: AstroRun, repeat: int) -> None:
    """Median seconds of each query, lineage decoded afresh each time (as after a restart),
    with the query-time choice on (the default); the answer's cells per array."""
    from awlineage.regions import forget_decoded

    for name, action in astro_queries(run.made).items():
        times = []
        for _ in range(repeat):
            forget_decoded()
            start = time.perf_counter()
            result = action()
            times.append(time.perf_counter() - start)
        answer = {f"{e.obj.label}[{e.hdu}]": e.region.count() for e in result}
        run.queries[name] = (statistics.median(times), answer, dict(result.stats.strategies))


def forget(made: dict[str, object]) -> None:
    """Drop an execution's arrays from the loader's dictionary (it is not queried)."""
    for value in made.values():
        for obj in value if isinstance(value, list) else [value]:
            if isinstance(obj, DBObject):
                ARRAYS.pop(obj.object_id, None)


def run_workflows(images: list[np.ndarray], runs: AstroRun | list[AstroRun], times: int,
                  plain: AstroRun) -> None:
    """Run the workflow `times` times per strategy, interleaved with runs without capture
    (so that load from elsewhere hits all alike); keep the last execution of each."""
    rows = runs if isinstance(runs, list) else [runs]
    for _ in range(times):
        for run in [plain, *rows]:
            strategy = "none" if run is plain else ASTRO_ROWS[run.name]
            start, start_cpu = time.perf_counter(), time.process_time()
            made = workflow(images, strategy)
            run.wall.append(time.perf_counter() - start)
            run.cpu.append(time.process_time() - start_cpu)
            if run.made:
                forget(run.made)
            run.made = made
        for run in rows:
            run.base_wall.append(plain.wall[-1])
            run.base_cpu.append(plain.cpu[-1])


def lineage_size(made: dict[str, object]) -> tuple[int, int]:
    """(bytes of the stored lineage, RegionTable records) of one execution."""
    from awlineage import select
    from awlineage.regions import RegionTable

    products = [*made["masks"], *made["cleaned"], made["composite"], made["repaired"],
                made["stars"]]
    records = [r for p in products for r in select(RegionTable.output == p)]
    return sum(len(r.encoding or b"") for r in records), len(records)


def optimise_astronomy(input_bytes: int) -> tuple[object, str]:
    """The optimiser on this database's statistics and recorded queries (the workload), with
    MaxDISK `ASTRO_MAX_DISK` x the input per recorded execution and runtime unbounded; the
    plan is stored so that captures without a mode follow it. Returns (plan, its table as
    ``awl regions optimise`` prints it)."""
    from awlineage import current_database, select
    from awlineage.regions import RegionTable, gather_inputs, optimise, plan_table, store_plan

    executions = select(RegionTable.operator == "detect_stars").count()
    limit = ASTRO_MAX_DISK * input_bytes * executions
    inputs = gather_inputs(current_database())
    plan = optimise(inputs.candidates, inputs.weights, max_disk=limit, pinned=inputs.pins)
    store_plan(plan)
    text = plan_table(plan, inputs.workload_source)
    return plan, (f"MaxDISK {limit / MB:.1f} MB ({ASTRO_MAX_DISK:g}x the input x "
                  f"{executions} executions recorded), runtime unbounded\n{text}")


def run_part2(repeat: int, database: str | None, quick: bool = False) -> None:
    """Figure 5: disk, runtime and the six queries of BlackBox, FullOne, SubZero and the
    optimiser's choice (from the statistics and queries of the first three)."""
    shape = (64, 256) if quick else (512, 2000)
    repeat = 1 if quick else repeat
    times = 1 if quick else max(3, repeat // 2)
    with tempfile.TemporaryDirectory() as tmp:
        connect(database or f"sqlite:///{tmp}/regions-bench.db")
        register_array_loader(lambda obj, hdu: ARRAYS.get(obj.object_id) if hdu == 0 else None)
        images = synthetic_images(np.random.default_rng(2), shape)
        input_bytes = sum(i.nbytes for i in images)
        plain = AstroRun("none")
        rows = {name: AstroRun(name) for name in ASTRO_ROWS}
        static = [rows[n] for n in ("BlackBox", "FullOne", "SubZero")]
        run_workflows(images, static, times, plain)
        for run in static:   # these queries are also the workload the optimiser reads
            time_astro_queries(run, repeat)
        plan, plan_text = optimise_astronomy(input_bytes)
        run_workflows(images, rows["Optimiser"], times, plain)
        time_astro_queries(rows["Optimiser"], repeat)
        for run in rows.values():
            run.disk, run.records = lineage_size(run.made)
        labels = rows["SubZero"].made["labels"]
        print(f"\nPart 2: SubZero astronomy case (seed 000 VIII-A, Figure 5), two {shape[0]} x "
              f"{shape[1]} float32 images ({input_bytes / MB:.1f} MB); stars found: "
              f"{labels.max()}")
        print_figure5(rows, plain, input_bytes, times)
        print(f"\nThe optimiser's plan (workload: the six queries on BlackBox, FullOne and "
              f"SubZero, {repeat}x each); {plan_text}")
        udfs = ("cosmic_rays", "repair_cosmic_rays", "detect_stars")
        print("chosen per UDF: " + ", ".join(
            f"{op} {'+'.join(plan.operators[op].strategies)}" for op in udfs
            if op in plan.operators))
        print(PAPER_ASTRO)


def print_figure5(rows: dict[str, AstroRun], plain: AstroRun, input_bytes: int,
                  times: int) -> None:
    """Figure 5(a) and 5(b) as tables, with a check that every strategy gave the same
    answers."""
    print(f"\nFigure 5(a): lineage disk and capture runtime (best of {times}; the workflow "
          f"without capture: {min(plain.wall):.2f} s wall, {min(plain.cpu):.2f} s CPU; x: "
          "against the runs without capture interleaved with the strategy's)")
    print(f"{'strategy':<11}{'disk MB':>10}{'x input':>10}{'records':>9}{'runtime s':>11}"
          f"{'x wall':>8}{'x CPU':>8}")
    for run in rows.values():
        print(f"{run.name:<11}{run.disk / MB:>10.4f}{run.disk / input_bytes:>10.4f}"
              f"{run.records:>9}{min(run.wall):>11.2f}"
              f"{min(run.wall) / min(run.base_wall):>8.2f}"
              f"{min(run.cpu) / min(run.base_cpu):>8.2f}")
    box = rows["BlackBox"].queries
    print("\nFigure 5(b): query ms (the query-time choice on), and speed-up over BlackBox")
    print(f"{'strategy':<11}" + "".join(f"{q:>10}{'':>8}" for q in ASTRO_QUERIES)
          + f"{'mean x':>8}")
    for run in rows.values():
        speed = [box[q][0] / run.queries[q][0] for q in ASTRO_QUERIES]
        print(f"{run.name:<11}" + "".join(
            f"{run.queries[q][0] * 1e3:>10.1f}{s:>7.1f}x" for q, s in
            zip(ASTRO_QUERIES, speed, strict=True)) + f"{statistics.fmean(speed):>7.1f}x")
    for q in ASTRO_QUERIES:
        answers = {run.name: run.queries[q][1] for run in rows.values()}
        same = all(a == answers["BlackBox"] for a in answers.values())
        cells = sum(answers["BlackBox"].values())
        print(f"  {q}: {ASTRO_QUERY_TEXT[q]}; {cells:,} cells"
              f"{'' if same else ' -- ANSWERS DIFFER: ' + repr(answers)}")
    print("  UDF hops by strategy: " + "; ".join(
        f"{run.name} " + ",".join(f"{s}:{n}" for s, n in sorted(_udf_hops(run).items()))
        for run in rows.values()))


def _udf_hops(run: AstroRun) -> dict[str, int]:
    """Hops over all queries by strategy, mapping and entire-array shortcuts left out."""
    total: dict[str, int] = {}
    for _, _, used in run.queries.values():
        for strategy, n in used.items():
            if strategy not in ("map", "all"):
                total[strategy] = total.get(strategy, 0) + n
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: tiny arrays, one timed run per measurement")
    parser.add_argument("--repeat", type=int,
                        help="timed runs per measurement (default 5; --quick: 1)")
    parser.add_argument("--database", help="database URL for parts 2 and 3 (default: SQLite "
                        "file)")
    parser.add_argument("--part", type=int, choices=(1, 2, 3),
                        help="run only one part (3: genomics)")
    args = parser.parse_args()
    if args.repeat is None:
        args.repeat = 1 if args.quick else 5
    started = time.perf_counter()
    if args.part in (None, 1):
        run_part1(args.quick, args.repeat)
    if args.part in (None, 2):
        run_part2(args.repeat, args.database, args.quick)
    if args.part in (None, 3):
        from benchmarks import genomics

        genomics.run(args.quick, args.repeat, args.database)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
