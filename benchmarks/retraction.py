"""Blast radius of a retracted calibration (issue 38): `affected` coarse (every descendant) and
fine (region lineage down to catalogue rows) against a brute-force forward walk, for a master
bias used by many frames.

The lineage is the imaging pipeline's shape, synthesised with real region captures (not run):
one bias; --frames raw frames, each reduced with the bias (pixel by pixel); groups of
--frames-per-coadd reduced frames coadded, each placed with its own dither (a crop of the
reduced frame) and stacked; one catalogue per coadd whose rows depend on their source's pixel
box (payload lineage), and one Source object per row (--sources-per-coadd). At full size,
1,000 frames and 100,000 sources. The retraction is one column of the bias.

Measured, on SQLite (and PostgreSQL unless --skip-postgres), each --repeat times: wall and CPU
time of this process (median and min-max), and the SQL statements of one run, for

- ``coarse``: ``affected(db, bias)``, every descendant (the lineage walk), counted per class;
- ``fine``: ``affected(db, bias, RetractedCells.parse("C:C,*"))``, the arrays, cells and source
  rows region lineage reaches;
- ``brute``: a forward walk written here: every descendant visited (``descendants``), each
  array's reached cells computed densely by hand from the known operators, and every row of
  every catalogue tested against its coadd's reached cells (its payload table decoded).

The queries run in a new session (the build's objects are not in its identity map); the
repeats after the first find them there. The fine answer is checked equal to the brute
force's. The sizes printed: objects, region
records and their stored bytes, and how many objects each answer names (what a remake would
redo after a whole-object retraction against a region retraction).

Usage: python benchmarks/retraction.py [--quick] [--frames 1000] [--frames-per-coadd 10]
       [--sources-per-coadd 1000] [--size 256] [--repeat 3] [--brute-repeat 1] [--postgres URL]
       [--skip-postgres]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from benchmark_support import POSTGRES_URL, count_queries, postgres_schema

from awlineage import DBObject, capture_regions, commit, connect, persistent, select
from awlineage.blast_radius import affected
from awlineage.database import Database
from awlineage.lineage import descendants
from awlineage.persistence import set_current_store
from awlineage.regions import RegionTable, crop, decode_record, elementwise, payload_boxes
from awlineage.retraction import RetractedCells

DITHER = 8
"""Largest dither, in pixels: reduced frames are this much larger than the coadd."""


class BlastBias(DBObject):
    chip = persistent("CCD", str, "ccd1")


class BlastRaw(DBObject):
    number = persistent("Exposure number", int, 0)


class BlastReduced(DBObject):
    raw = persistent("Raw frame", BlastRaw, None)
    bias = persistent("Master bias", BlastBias, None)
    dither = persistent("Dither (rows, columns) in the coadd", int, [])


class BlastCoadd(DBObject):
    frames = persistent("Reduced frames stacked", BlastReduced, [])


class BlastCatalogue(DBObject):
    coadd = persistent("Coadd searched", BlastCoadd, None)
    nsources = persistent("Rows", int, 0)


class BlastSource(DBObject):
    catalogue = persistent("Catalogue", BlastCatalogue, None)
    number = persistent("Row in the catalogue", int, 0)


@dataclass
class Night:
    bias: BlastBias
    column: int
    shape: tuple[int, int]


def build(args: argparse.Namespace) -> Night:
    """Store the synthetic lineage; returns the bias and the column retracted."""
    rng = np.random.default_rng(38)
    size = args.size
    big = (size + DITHER, size + DITHER)
    bias = BlastBias()
    bias.commit()
    raws = [BlastRaw(number=n) for n in range(args.frames)]
    commit(raws)
    reduced_all = []
    for raw in raws:
        reduced = BlastReduced(raw=raw, bias=bias,
                               dither=[int(v) for v in rng.integers(0, DITHER + 1, 2)])
        with capture_regions(reduced) as cap:
            cap.apply(elementwise(), [cap.array(raw, shape=big), cap.array(bias, shape=big)])
        reduced_all.append(reduced)
    commit(reduced_all)
    coadds, catalogues, sources = [], [], []
    for first in range(0, len(reduced_all), args.frames_per_coadd):
        frames = reduced_all[first:first + args.frames_per_coadd]
        coadd = BlastCoadd(frames=frames)
        with capture_regions(coadd) as cap:
            placed = [cap.apply(crop(np.s_[f.dither[0]:f.dither[0] + size,
                                           f.dither[1]:f.dither[1] + size]),
                                [cap.array(f, shape=big)], name=f"placed{i}")
                      for i, f in enumerate(frames)]
            cap.apply(elementwise(), placed)
        coadds.append(coadd)
    commit(coadds)
    for coadd in coadds:
        count = args.sources_per_coadd
        catalogue = BlastCatalogue(coadd=coadd, nsources=count)
        low = rng.integers(0, size - 4, (count, 2))
        boxes = np.concatenate([low, low + rng.integers(2, 9, (count, 2))], axis=1)
        boxes[:, 2:] = np.minimum(boxes[:, 2:], size - 1)
        with capture_regions(catalogue) as cap:
            call = cap.operator(payload_boxes(), [cap.array(coadd, shape=(size, size))],
                                hdu=1, shape=(count,))
            call.lwrite_payload(np.arange(count)[:, None], boxes)
            call.close()
        catalogues.append(catalogue)
        sources += [BlastSource(catalogue=catalogue, number=n) for n in range(count)]
    commit(catalogues)
    for first in range(0, len(sources), 20_000):
        commit(sources[first:first + 20_000])
    return Night(bias, size // 2, big)


def brute_force(db: Database, night: Night) -> dict[str, set[int]]:
    """Object ids per class the column reaches: every descendant visited (one batched walk),
    each array's cells computed densely by hand, every row of every catalogue tested."""
    found: dict[str, set[int]] = {}
    reduced_masks: dict[int, np.ndarray] = {}
    coadd_masks: dict[int, np.ndarray] = {}
    _rows_of.clear()
    everything = descendants(night.bias, database=db)
    order = (BlastReduced, BlastCoadd, BlastCatalogue, BlastSource)  # parents first
    for cls in order:
        for child in everything:
            if type(child) is cls and _reach(db, child, night, reduced_masks, coadd_masks):
                found.setdefault(cls.__name__, set()).add(child.object_id)
    return found


def _reach(db: Database, obj: DBObject, night: Night, reduced_masks: dict[int, np.ndarray],
           coadd_masks: dict[int, np.ndarray]) -> bool:
    if isinstance(obj, BlastReduced):
        mask = np.zeros(night.shape, dtype=bool)
        mask[:, night.column] = True
        reduced_masks[obj.object_id] = mask
        return True
    if isinstance(obj, BlastCoadd):
        size = night.shape[0] - DITHER
        mask = np.zeros((size, size), dtype=bool)
        for frame in obj.frames:
            dy, dx = frame.dither
            mask |= reduced_masks[frame.object_id][dy:dy + size, dx:dx + size]
        coadd_masks[obj.object_id] = mask
        return bool(mask.any())
    if isinstance(obj, BlastCatalogue):
        (record,) = select(RegionTable.output == obj, database=db).all()
        table = decode_record(record).payload
        assert table is not None
        mask = coadd_masks[obj.coadd.object_id]
        rows = [int(r) for lo, hi in zip(table.lo, table.hi, strict=True)
                for r in range(lo[0], hi[0] + 1)
                if mask[lo[1]:lo[3] + 1, lo[2]:lo[4] + 1].any()]
        _rows_of[obj.object_id] = rows
        return bool(rows)
    if isinstance(obj, BlastSource):
        return obj.number in _rows_of.get(obj.catalogue.object_id, ())
    return False


_rows_of: dict[int, list[int]] = {}


def measure(work: Callable[[], object], repeat: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return walls, cpus


def spread(values: list[float]) -> str:
    return (f"{statistics.median(values):8.3f} s ({min(values):.3f}-{max(values):.3f})")


def run(opened: Database, reopen: Callable[[], Database], name: str,
        args: argparse.Namespace) -> None:
    started = time.perf_counter()
    night = build(args)
    built = time.perf_counter() - started
    opened.close()  # the queries start from a new session, as a command would
    set_current_store(None)
    db = reopen()
    night.bias = db.get(night.bias.object_id)
    records = select(RegionTable, database=db).all()
    stored = sum(len(r.encoding or b"") for r in records)
    cells = RetractedCells.parse(f"{night.column + 1}:{night.column + 1},*")
    print(f"\n{name}: {args.frames} frames, {args.frames // args.frames_per_coadd} coadds, "
          f"{args.frames // args.frames_per_coadd * args.sources_per_coadd} sources; "
          f"{len(records)} region records, {stored} bytes of tables; built in {built:.1f} s")
    cold = time.perf_counter(), time.process_time()
    coarse = affected(db, night.bias)
    cold_coarse = time.perf_counter() - cold[0], time.process_time() - cold[1]
    cold = time.perf_counter(), time.process_time()
    fine = affected(db, night.bias, cells)
    cold_fine = time.perf_counter() - cold[0], time.process_time() - cold[1]
    brute = brute_force(db, night)
    mine = {name: set(ids) for name, ids in
            ((n, fine.ids(n)) for n in fine.counts())}
    if mine != brute:
        raise SystemExit(f"fine answer differs from the brute force: {fine.counts()} vs "
                         f"{ {k: len(v) for k, v in brute.items()} }")
    print(f"  coarse names {len(coarse)} objects {coarse.counts()}")
    print(f"  fine names   {len(fine)} objects {fine.counts()} (= brute force)")
    print(f"  a remake after a region retraction redoes {len(fine) / len(coarse):.1%} of "
          "the objects a whole-object retraction reaches")
    print(f"  first run in the new session: coarse {cold_coarse[0]:.3f} s wall "
          f"{cold_coarse[1]:.3f} s CPU, fine {cold_fine[0]:.3f} s wall {cold_fine[1]:.3f} s CPU")
    print(f"  {'query':8s} {'wall median (min-max)':>28s} {'CPU median (min-max)':>28s} "
          f"{'SQL':>6s}")
    for label, work in (("coarse", lambda: affected(db, night.bias)),
                        ("fine", lambda: affected(db, night.bias, cells)),
                        ("brute", lambda: brute_force(db, night))):
        walls, cpus = measure(work, args.repeat if label != "brute" else args.brute_repeat)
        statements = count_queries(db, work)
        print(f"  {label:8s} {spread(walls):>28s} {spread(cpus):>28s} {statements:6d}")
    # closing commits the region query statistics the queries kept back (they would otherwise
    # be committed at exit, after main() dropped the PostgreSQL schema they belong in)
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tiny smoke run")
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--frames-per-coadd", type=int, default=10)
    parser.add_argument("--sources-per-coadd", type=int, default=1000)
    parser.add_argument("--size", type=int, default=256, help="coadd side, pixels")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--brute-repeat", type=int, default=1,
                        help="runs of the brute force (slow at full size)")
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.frames, args.frames_per_coadd, args.sources_per_coadd = 12, 4, 40
        args.size, args.repeat, args.brute_repeat = 48, 2, 2
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder)}/retraction.db"
        run(connect(url), lambda: connect(url), "SQLite", args)
        set_current_store(None)
    _rows_of.clear()
    if not args.skip_postgres:
        with postgres_schema(args.postgres) as schema:
            run(connect(args.postgres, schema=schema),
                lambda: connect(args.postgres, schema=schema), "PostgreSQL", args)
            set_current_store(None)


if __name__ == "__main__":
    sys.exit(main())
