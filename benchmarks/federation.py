"""Lineage between sites (seed 001): how big a lineage tree is when it travels, how Bonsai
pruning shrinks it, and how many remote queries a pruned tree costs to reconstruct.

The workload is the seed's synthetic one: every file is made by one primitive operation from
`fan-in` files, each of which was made the same way, `levels` deep; the files at the bottom
are originals. A made file (`Product`) holds its operation (a process id and a 160-bit
signature, as in the seed) and links its inputs, so a link of ancestry is one operation and
the export depth lambda counts operations, as Bonsai's does.

Part 1 (Table 3): the lineage of the tree's top file against levels and fan-in: the seed's
kilobytes (hard-coded from the paper), its minimal representation by its own formula (a 24-byte
operation record, 32-bit pid + 160-bit signature, and a 12-byte id for each input and for the
output), our bundle (`export_bundle(root).to_bytes()`, deflated JSON in a ZIP) and the JSON
inside it, with the export and import times.

Part 2 (Fig. 2, Bonsai): the same trees exported with depth lambda = 1..4 and all: bundle size,
records and pointers.

Part 3 (section 6's trade-off): two sites as two databases in this process. The receiver gets
the top file's bundle of depth lambda (what it stores with the file), then reconstructs the
whole tree: each round asks the origin for the objects behind its remaining pointers (a bundle
of depth lambda of the pointed ids, exported at the origin, imported at the receiver), until no
pointer is left. Requests per tree, one per pointer and one batched per round, and the bytes
transferred; storage at the receiver grows with lambda while the requests fall.

Usage: python benchmarks/federation.py [--quick] [--database POSTGRES_URL] [--part 1|2|3|4]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_support import load_average, postgres_schema

from awlineage import Database, DBObject, RemotePointer, persistent, select
from awlineage.federation import export_bundle, import_bundle, set_local_site

KB = 1000
#: The seed's Table 3 (kilobytes), by (levels, fan-in): the paper's figures, not ours.
PAPER_TABLE3 = {
    (2, 1): 0.09, (2, 2): 0.14, (2, 3): 0.19, (2, 4): 0.24,
    (3, 1): 0.14, (3, 2): 0.34, (3, 3): 0.65, (3, 4): 1.05,
    (4, 1): 0.19, (4, 2): 0.75, (4, 3): 2.02, (4, 4): 4.30,
    (5, 1): 0.24, (5, 2): 1.56, (5, 3): 6.13, (5, 4): 17.30,
}
OPERATION_BYTES = 4 + 20
"""The seed's operation record: a 32-bit process id and a 160-bit signature."""
ID_BYTES = 4 + 4 + 4
"""The seed's file id: 32-bit IP address, 32-bit filesystem id (inode), 32-bit timestamp."""


class File(DBObject):
    """An original file (a leaf of the lineage tree)."""

    name = persistent("File name", str, "")


class Product(File):
    """A file made by one primitive operation from its inputs."""

    pid = persistent("Process id of the operation that made it", int, 0)
    signature = persistent("The owner's 160-bit signature of the operation (hex)", str, "")
    inputs = persistent("The files the operation read", File, [])


# -- the workload ------------------------------------------------------------------------
def operations(levels: int, fan_in: int) -> int:
    """Operations in a tree `levels` deep: 1 + f + f**2 + ... + f**(levels - 1)."""
    return sum(fan_in ** k for k in range(levels))


def tree_files(levels: int, fan_in: int) -> int:
    """Files in a tree `levels` deep, the originals at the bottom included."""
    return operations(levels + 1, fan_in)


def seed_formula_bytes(levels: int, fan_in: int) -> int:
    """The seed's minimal representation: per operation, its record and the ids of its
    inputs and its output."""
    return operations(levels, fan_in) * (OPERATION_BYTES + ID_BYTES * (fan_in + 1))


def build_tree(db: Database, levels: int, fan_in: int, tag: str) -> Product:
    """Commit a lineage tree to `db`; returns its top file."""
    count = 0

    def make(depth: int) -> File:
        nonlocal count
        count += 1
        name = f"{tag}/file{count}"
        if depth == 0:
            return File(name=name)
        inputs = [make(depth - 1) for _ in range(fan_in)]
        return Product(name=name, pid=count, inputs=inputs,
                       signature=hashlib.sha1(name.encode()).hexdigest())

    top = make(levels)
    db.commit([top])
    assert isinstance(top, Product)
    return top


def json_size(data: bytes) -> int:
    """Uncompressed size of the JSON manifest inside a bundle's bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(info.file_size for info in archive.infolist())


def timed(action: Callable[[], object]) -> tuple[float, object]:
    """Wall time in milliseconds of one run, and its result."""
    start = time.perf_counter()
    result = action()
    return (time.perf_counter() - start) * 1e3, result


# -- sites -------------------------------------------------------------------------------
class Sites:
    """Databases standing for sites: SQLite files in a temporary directory, or fresh schemas
    on a PostgreSQL server."""

    def __init__(self, stack: ExitStack, postgres: str | None) -> None:
        self._stack = stack
        self._postgres = postgres
        self._dir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        self._count = 0

    def new(self, name: str) -> Database:
        """A fresh, empty site database named `name`, with its site URL recorded, kept until
        the end of the run."""
        return self._open(name, self._stack)

    @contextmanager
    def receiver(self, name: str) -> Iterator[Database]:
        """A fresh site database for one reconstruction, closed (and its schema dropped)
        afterwards."""
        with ExitStack() as stack:
            yield self._open(name, stack)

    def _open(self, name: str, stack: ExitStack) -> Database:
        self._count += 1
        if self._postgres:
            db = Database(self._postgres,
                          schema=stack.enter_context(postgres_schema(self._postgres)))
        else:
            db = Database(f"sqlite:///{self._dir}/{self._count}-{name}.db")
        stack.callback(db.close)
        set_local_site(db, url=f"http://{name}.example.org/awl", name=name)
        return db


# -- part 1 ------------------------------------------------------------------------------
def run_part1(sites: Sites, origin: Database, levels: list[int], fans: list[int]) -> None:
    receiver = sites.new("table3-receiver")
    print("\nPart 1: lineage size against levels and fan-in (seed 001 Table 3), kilobytes "
          "(1 KB = 1000 bytes)")
    print("  paper: the seed's Table 3; formula: the seed's minimal representation by its "
          "formula, ops x (24 + 12 x (fan-in + 1)) bytes;\n  bundle: our .awlb (deflated "
          "JSON in a ZIP); json: the JSON inside it")
    print(f"{'levels':>6}{'fan-in':>7}{'ops':>6}{'objects':>8}{'paper':>8}{'formula':>9}"
          f"{'bundle':>9}{'json':>9}{'bundle/paper':>13}{'json/obj B':>11}"
          f"{'export ms':>10}{'import ms':>10}")
    for level in levels:
        for fan in fans:
            top = build_tree(origin, level, fan, f"t3-{level}-{fan}")
            export_ms, bundle = timed(lambda top=top: export_bundle(top, database=origin))
            data = bundle.to_bytes()
            import_ms, report = timed(lambda data=data: import_bundle(data, database=receiver))
            objects = len(report.added)
            paper = PAPER_TABLE3.get((level, fan))
            ratio = f"{len(data) / KB / paper:13.1f}" if paper else f"{'':>13}"
            paper_text = f"{paper:8.2f}" if paper else f"{'n/a':>8}"
            print(f"{level:>6}{fan:>7}{operations(level, fan):>6}{objects:>8}{paper_text}"
                  f"{seed_formula_bytes(level, fan) / KB:9.2f}{len(data) / KB:9.2f}"
                  f"{json_size(data) / KB:9.2f}{ratio}{json_size(data) / objects:11.0f}"
                  f"{export_ms:10.1f}{import_ms:10.1f}")


def formula_check() -> None:
    """Say how the seed's figures compare with its stated formula, and with 48 bytes per
    operation (a record with one input id, whatever the fan-in), which fits them better."""

    def matching(bytes_of: Callable[[int, int], int]) -> list[str]:
        found = []
        for (level, fan), paper in sorted(PAPER_TABLE3.items()):
            kb = bytes_of(level, fan) / KB
            if paper in (round(kb, 2), int(kb * 100) / 100):
                found.append(f"L{level}f{fan}")
        return found

    stated = matching(seed_formula_bytes)
    flat = matching(lambda level, fan: 48 * operations(level, fan))
    print(f"  check: the seed's stated formula gives {len(stated)} of its "
          f"{len(PAPER_TABLE3)} cells (to 0.01 KB, rounded or truncated): {' '.join(stated)};\n"
          f"  with fan-in > 1 its figures are smaller. 48 bytes per operation (one input id, "
          f"whatever the fan-in) gives {len(flat)}: {' '.join(flat)},\n"
          "  and the other cells within 6%. Either way a level multiplies the lineage by about "
          "the fan-in, and so it does in ours.")


# -- part 2 ------------------------------------------------------------------------------
def run_part2(origin: Database, levels: list[int], fans: list[int], depths: list[int]) -> None:
    print("\nPart 2: Bonsai pruning (seed 001 Fig. 2): the top file's bundle with ancestry "
          "to depth lambda, pointers beyond")
    print(f"{'levels':>6}{'fan-in':>7}{'lambda':>7}{'records':>8}{'pointers':>9}"
          f"{'bundle KB':>10}{'json KB':>9}{'of all':>8}{'export ms':>10}")
    for level in levels:
        for fan in fans:
            top = build_tree(origin, level, fan, f"bonsai-{level}-{fan}")
            full = len(export_bundle(top, database=origin).to_bytes())
            for depth in [*depths, None]:
                export_ms, bundle = timed(lambda top=top, depth=depth:
                                          export_bundle(top, depth, database=origin))
                data = bundle.to_bytes()
                print(f"{level:>6}{fan:>7}{'all' if depth is None else depth:>7}"
                      f"{len(bundle.records):>8}{len(bundle.pointers):>9}{len(data) / KB:10.2f}"
                      f"{json_size(data) / KB:9.2f}{len(data) / full:8.0%}{export_ms:10.1f}")


# -- part 3 ------------------------------------------------------------------------------
@dataclass
class Reconstruction:
    """What rebuilding one tree at the receiver cost."""

    stored_records: int
    stored_bytes: int
    rounds: int = 0
    requests: int = 0
    fetched_bytes: int = 0
    export_ms: float = 0.0
    import_ms: float = 0.0
    complete: bool = False


def reconstruct(origin: Database, receiver: Database, top: Product, depth: int | None,
                shape: tuple[int, int], *, batched: bool) -> Reconstruction:
    """Send `top` with its lineage to depth lambda, then resolve every pointer at the
    receiver, round by round, with bundles of the same depth: one request per pointer, or
    one per round for all of its pointers (`batched`)."""
    first = export_bundle(top, depth, database=origin).to_bytes()
    report = import_bundle(first, database=receiver, via="bundle")
    outstanding = set(report.pointers)
    result = Reconstruction(len(report.added), len(first))
    while outstanding:
        result.rounds += 1
        requests = [sorted(outstanding)] if batched else [[oid] for oid in sorted(outstanding)]
        for ids in requests:
            result.requests += 1
            export_ms, bundle = timed(lambda ids=ids: export_bundle(ids, depth,
                                                                    database=origin))
            data = bundle.to_bytes()
            import_ms, report = timed(lambda data=data:
                                      import_bundle(data, database=receiver, via="resolved"))
            result.fetched_bytes += len(data)
            result.export_ms += export_ms
            result.import_ms += import_ms
            outstanding = (outstanding - set(report.filled)) | set(report.pointers)
    left = select(RemotePointer, database=receiver).count()
    held = select(File, database=receiver).count()
    result.complete = left == 0 and held == tree_files(*shape)
    return result


def run_part3(sites: Sites, origin: Database, shapes: list[tuple[int, int]],
              depths: list[int | None]) -> None:
    print("\nPart 3: remote queries to reconstruct a tree at another site, against lambda "
          "(seed 001 sections 5.2 and 6)")
    print("  stored: what the receiver holds with the file (its bundle of depth lambda); "
          "then every pointer is resolved with bundles of depth lambda,\n  one request per "
          "pointer, or one batched request per round; KB fetched and ms (export + import) "
          "over the whole reconstruction")
    print(f"{'levels':>6}{'fan-in':>7}{'lambda':>7}{'stored':>7}{'stored KB':>10}"
          f"{'rounds':>7}{'requests':>9}{'KB':>8}{'ms':>8}{'batched KB':>11}{'ms':>8}"
          "  complete")
    for level, fan in shapes:
        top = build_tree(origin, level, fan, f"remote-{level}-{fan}")
        for depth in depths:
            runs = []
            for batched in (False, True):
                name = f"receiver-{level}-{fan}-{depth}-{'batched' if batched else 'each'}"
                with sites.receiver(name) as receiver:
                    runs.append(reconstruct(origin, receiver, top, depth, (level, fan),
                                            batched=batched))
            each, batch = runs
            assert batch.rounds == each.rounds == batch.requests
            ok = each.complete and batch.complete
            print(f"{level:>6}{fan:>7}{'all' if depth is None else depth:>7}"
                  f"{each.stored_records:>7}{each.stored_bytes / KB:10.2f}{each.rounds:>7}"
                  f"{each.requests:>9}{each.fetched_bytes / KB:8.1f}"
                  f"{each.export_ms + each.import_ms:8.0f}{batch.fetched_bytes / KB:11.1f}"
                  f"{batch.export_ms + batch.import_ms:8.0f}"
                  f"  {'yes' if ok else 'NO: pointers left'}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shallow trees (a smoke run)")
    parser.add_argument("--database", help="a PostgreSQL URL: each site a fresh schema there "
                        "(default: SQLite files in a temporary directory)")
    parser.add_argument("--part", type=int, choices=(1, 2, 3, 4), help="run one part only "
                        "(4: the replication plan, benchmarks/federation_replication.py)")
    args = parser.parse_args(argv)
    print(load_average())
    table_levels = [2, 3] if args.quick else [2, 3, 4, 5]
    deep = [4] if args.quick else [5, 6]
    depths = [1, 2] if args.quick else [1, 2, 3, 4]
    with ExitStack() as stack:
        sites = Sites(stack, args.database)
        origin = sites.new("origin")
        print(f"Sites: {'PostgreSQL schemas' if args.database else 'SQLite files'}; "
              f"{'quick' if args.quick else 'full'} run")
        if args.part in (None, 1):
            run_part1(sites, origin, table_levels, [1, 2, 3, 4])
            formula_check()
        if args.part in (None, 2):
            run_part2(origin, deep, [2, 3], depths)
        if args.part in (None, 3):
            shapes = [(4, 2), (4, 3)] if args.quick else [(5, 2), (5, 3), (8, 2), (6, 3)]
            run_part3(sites, origin, shapes, [*depths, None])
    if args.part in (None, 4):
        import federation_replication

        print("\nPart 4: the replication plan (seed 001 section 6) on synthetic workloads")
        federation_replication.main(["--sites", "6,10" if args.quick else "6,8,10,12,20,40",
                                     "--workloads", "2" if args.quick else "10"])


if __name__ == "__main__":
    main()
    print(load_average())
