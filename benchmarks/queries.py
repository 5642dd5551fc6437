"""The queries an astronomer runs, written for awlineage and for Rubin's Data Butler
(lsst-daf-butler), on the same data, timed in one run on SQLite and on PostgreSQL.

The data: D detectors x E exposures (one visit per exposure), each visit with an exposure
time and a timespan, a dataset per visit x detector with a sky region (a 0.1 degree square
per detector, from the same WCS for both tools), F small files put one at a time, and S
sources with a sky position for cone searches (awlineage only: see below).

Operations (each tool's own API; queries return materialised objects / DatasetRefs):

- put: F files stored and committed one at a time (`DataObject.store` + `commit`;
  `Butler.put`);
- bulk insert: the visits and the D x E datasets in one call (`commit(list)`;
  `insertDimensionData` for visits and visit-detector regions, then `insertDatasets`);
- equality, IN, join through a link (the visit's exposure time), spatial overlap (region
  OVERLAPS POINT / CIRCLE), time overlap (timespan OVERLAPS an interval);
- first read of F files: find them, then read each file's bytes (`retrieve()`;
  `Butler.get_many_uris(refs)`, then each URI's ``read()``: its fastest public way, as
  ``Butler.get`` adds its formatter's parsing), in a process that has read none of them
  (the Butler checks nothing: its file datastore keeps no checksums by default); awlineage also
  with the copy into the file cache it made before (`FileCache.fetch`, "before"); and the
  same read again in the same process (awlineage then checks each file with one ``stat``);
- the row counts are printed when the tools disagree: the Butler's ``OVERLAPS CIRCLE``
  answers more regions than overlap the circle (apparently its HTM pre-selection without
  an exact test: with the full sizes 36 where sphgeom's own ``ConvexPolygon.relate`` and a
  dense sampling of the edges both find 26, as awlineage does);
- cone search over S sources (awlineage only: the Butler does not index catalogue rows;
  sources live inside catalogue files, which a Butler user finds by a spatial query on their
  visit/detector regions and then reads and filters in memory, or queries through a TAP
  service/Qserv outside the Butler, so there is no equivalent to time).

Times are the median of --repeat rounds, the tools alternated (awlineage, Butler, Butler,
awlineage, ...), wall clock with the CPU time of this process beside it (the PostgreSQL
server's CPU is not counted). The ratio is Butler time / awlineage time, above 1 awlineage is
faster: the median of the rounds' paired ratios with their spread (min-max). The load is
printed at the start and the end.

Usage: python benchmarks/queries.py [--quick] [--detectors D] [--exposures E] [--files F]
           [--sources S] [--repeat R] [--postgres URL] [--skip-postgres] [--skip-sqlite]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sqlalchemy as sa
from benchmark_support import POSTGRES_URL, load_average, postgres_schema, ratio_spread

import awlineage
from awlineage import DataObject, DBObject, commit, connect, persistent, select
from awlineage.persistence import set_current_store

SPACETIME_NAMES = ("Footprint", "Interval", "Circle", "footprint_from_wcs")
SPACETIME = all(hasattr(awlineage, name) for name in SPACETIME_NAMES)
"""awlineage's sky and time types (issue 17) are there: the spatial and time rows run."""
if SPACETIME:
    from astropy.coordinates import SkyCoord

    from awlineage import Circle, Footprint, Interval, footprint_from_wcs

NOT_YET = "not available yet"
INSTRUMENT = "BenchCam"
RUN = "bench/run"
START = datetime.datetime(2024, 1, 3, tzinfo=datetime.UTC)
VISIT_CADENCE = datetime.timedelta(minutes=5)
DETECTOR_DEG = 0.1
"""Side of a detector's square on the sky."""
PIXELS = 100


# -- awlineage's classes --------------------------------------------------------------------
class QVisit(DBObject):
    number = persistent("Visit number", int, 0, index=True)
    exposure_time = persistent("Exposure time [s]", float, 0.0)
    if SPACETIME:
        timespan = persistent("When the shutter was open (UTC)", Interval, None)


class QCalexp(DBObject):
    detector = persistent("Detector number", int, 0, index=True)
    visit = persistent("The visit", QVisit, None)
    if SPACETIME:
        footprint = persistent("Sky footprint", Footprint, None)


class QFile(DataObject):
    detector = persistent("Detector number", int, 0, index=True)
    visit = persistent("Visit number", int, 0, index=True)


class QSource(DBObject):
    if SPACETIME:
        position = persistent("Sky position", SkyCoord, None)
    flux = persistent("Flux", float, 0.0)


# -- the shared data -----------------------------------------------------------------------
@dataclass
class Data:
    """What both tools store: visits, per visit x detector the corners of a sky square,
    and the queries' arguments."""

    detectors: int
    exposures: int
    files: int
    sources: int
    side: int = 0
    corners: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.side = math.ceil(math.sqrt(self.detectors))

    def pointing(self, visit: int) -> tuple[float, float]:
        """Dithered pointings, so a point on the sky lies in several visits."""
        return 150.0 + 0.25 * (visit % 10), 2.0 + 0.25 * (visit // 10 % 10)

    def exposure_time(self, visit: int) -> float:
        return 10.0 + 5.0 * (visit % 10)

    def timespan(self, visit: int) -> tuple[datetime.datetime, datetime.datetime]:
        begin = START + visit * VISIT_CADENCE
        return begin, begin + datetime.timedelta(seconds=self.exposure_time(visit))

    def wcs(self, visit: int, detector: int):
        """The WCS of one detector of one visit: a TAN projection, PIXELS square."""
        from astropy.wcs import WCS

        ra0, dec0 = self.pointing(visit)
        i, j = detector % self.side, detector // self.side
        wcs = WCS(naxis=2)
        wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
        wcs.wcs.crpix = [(PIXELS + 1) / 2, (PIXELS + 1) / 2]
        wcs.wcs.cdelt = [-DETECTOR_DEG / PIXELS, DETECTOR_DEG / PIXELS]
        wcs.wcs.crval = [ra0 + (i + 0.5) * DETECTOR_DEG, dec0 + (j + 0.5) * DETECTOR_DEG]
        return wcs

    def corner(self, visit: int, detector: int) -> np.ndarray:
        """The four corners (RA, Dec in degrees) of the detector's pixel grid."""
        key = (visit, detector)
        if key not in self.corners:
            self.corners[key] = self.wcs(visit, detector).calc_footprint(
                axes=(PIXELS, PIXELS), center=False)
        return self.corners[key]

    # the queries' arguments
    equal_detector = property(lambda self: 42 % self.detectors)
    in_detectors = property(lambda self: list(range(min(10, self.detectors))))
    min_exposure_time = 50.0
    point = (150.63, 2.61)
    circle = (150.63, 2.61, 0.03)

    @property
    def window(self) -> tuple[datetime.datetime, datetime.datetime]:
        """Half an hour that overlaps six visits, a fifth of the way through."""
        begin = START + (self.exposures // 5) * VISIT_CADENCE - datetime.timedelta(minutes=2)
        return begin, begin + datetime.timedelta(minutes=30)

    def source_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Sources spread uniformly over the area the visits cover."""
        rng = np.random.default_rng(17)
        span = 2.25 + self.side * DETECTOR_DEG
        return (150.0 + span * rng.random(self.sources), 2.0 + span * rng.random(self.sources))


def file_payload(visit: int, detector: int) -> bytes:
    return json.dumps({"visit": visit, "detector": detector, "zeropoint": 27.1}).encode()


# -- timing -----------------------------------------------------------------------------------
@dataclass
class Timing:
    """Every round's wall-clock and CPU time of one side, and the rows it answered."""

    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rows: int | None = None

    def keep(self, wall: float, cpu: float, rows: int | None) -> None:
        self.walls.append(wall)
        self.cpus.append(cpu)
        self.rows = rows

    @property
    def wall(self) -> float:
        """The median wall-clock time."""
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        """The median CPU time of this process."""
        return statistics.median(self.cpus)


def timed(work: Callable[[], object]) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return time.perf_counter() - wall, time.process_time() - cpu, result


@dataclass
class Row:
    """One operation on one database: both tools' times and row counts."""

    ours: Timing | str
    theirs: Timing | str | None


def compare(ours: Callable[[], int | None] | None, theirs: Callable[[], int | None] | None,
            repeat: int, prepare: Callable[[], None] | None = None, name: str = "") -> Row:
    """`repeat` rounds of each, alternated (ours, theirs, theirs, ours, ...) so that each
    round's pair meets the same moments of load and neither always goes first; None stands
    for 'not available'."""
    mine, other = Timing(), Timing()
    for round_ in range(repeat):
        pair = ((ours, mine), (theirs, other))
        for work, timing in (pair if round_ % 2 == 0 else pair[::-1]):
            if work is None:
                continue
            if prepare is not None:
                prepare()
            wall, cpu, rows = timed(work)
            timing.keep(wall, cpu, rows)  # type: ignore[arg-type]
    if ours is not None and theirs is not None and mine.rows != other.rows:
        print(f"  {name}: awlineage found {mine.rows} rows, the Butler {other.rows}",
              file=sys.stderr)
    return Row(mine if ours is not None else NOT_YET, other if theirs is not None else None)


# -- the Butler side --------------------------------------------------------------------------
class ButlerSide:
    """A fresh Butler repository (its registry on `url`, in `schema` on PostgreSQL), and the
    operations in its API."""

    def __init__(self, root: Path, url: str | None, schema: str | None, data: Data) -> None:
        from lsst.daf.butler import Butler, Config, DatasetType

        self.data = data
        config = None
        if url is not None:
            config = Config()
            config["registry", "db"] = url
            config["registry", "namespace"] = schema
        Butler.makeRepo(str(root), config=config)
        self.butler = Butler.from_config(str(root), writeable=True, run=RUN)
        registry = self.butler.registry
        registry.insertDimensionData("instrument", {
            "name": INSTRUMENT, "detector_max": data.detectors, "visit_max": 10 * data.exposures,
            "exposure_max": 10 * data.exposures})
        registry.insertDimensionData("physical_filter",
                                     {"instrument": INSTRUMENT, "name": "r", "band": "r"})
        registry.insertDimensionData("day_obs", {"instrument": INSTRUMENT, "id": 20240103})
        registry.insertDimensionData("detector", *[
            {"instrument": INSTRUMENT, "id": d, "full_name": f"ccd{d}"}
            for d in range(data.detectors)])
        for name in ("bench_calexp", "bench_file"):
            registry.registerDatasetType(DatasetType(
                name, ("instrument", "visit", "detector"), "StructuredDataDict",
                universe=self.butler.dimensions))
        self.refs: list = []

    def close(self) -> None:
        with contextlib.suppress(AttributeError):
            self.butler.close()

    # records, prepared outside the timed part (as awlineage's footprints are)
    def visit_records(self, visits: range) -> tuple[list[dict], list[dict]]:
        import lsst.sphgeom as sg
        from astropy.time import Time
        from lsst.daf.butler import Timespan

        def polygon(corners: np.ndarray) -> sg.ConvexPolygon:
            return sg.ConvexPolygon([sg.UnitVector3d(sg.LonLat.fromDegrees(ra, dec))
                                     for ra, dec in corners])

        data = self.data
        visit_rows, region_rows = [], []
        for v in visits:
            begin, end = data.timespan(v)
            regions = {d: polygon(data.corner(v, d)) for d in range(data.detectors)}
            every_corner = np.concatenate([data.corner(v, d) for d in range(data.detectors)])
            hull = sg.ConvexPolygon.convexHull([sg.UnitVector3d(sg.LonLat.fromDegrees(ra, dec))
                                                for ra, dec in every_corner])
            visit_rows.append({
                "instrument": INSTRUMENT, "id": v, "name": f"v{v}", "physical_filter": "r",
                "day_obs": 20240103, "exposure_time": data.exposure_time(v),
                "timespan": Timespan(Time(begin, scale="utc"), Time(end, scale="utc")),
                "region": hull})
            region_rows.extend({"instrument": INSTRUMENT, "visit": v, "detector": d,
                                "region": region} for d, region in regions.items())
        return visit_rows, region_rows

    def bulk_insert(self, visit_rows: list[dict], region_rows: list[dict]) -> int:
        registry = self.butler.registry
        registry.insertDimensionData("visit", *visit_rows)
        registry.insertDimensionData("visit_detector_region", *region_rows)
        data_ids = [{"instrument": INSTRUMENT, "visit": r["visit"], "detector": r["detector"]}
                    for r in region_rows]
        return len(registry.insertDatasets("bench_calexp", data_ids, run=RUN))

    def put(self, keys: list[tuple[int, int]]) -> int:
        for v, d in keys:
            payload = json.loads(file_payload(v, d))
            self.butler.put(payload, "bench_file", instrument=INSTRUMENT, visit=v, detector=d)
        return len(keys)

    def query(self, where: str, dataset_type: str = "bench_calexp", **bind) -> int:
        refs = self.butler.query_datasets(dataset_type, RUN, where=where, bind=bind,
                                          instrument=INSTRUMENT, explain=False, limit=None)
        return len(refs)

    def first_read(self) -> int:
        refs = self.butler.query_datasets("bench_file", RUN, instrument=INSTRUMENT,
                                          explain=False, limit=None)
        uris = self.butler.get_many_uris(refs)  # one look-up for all (its fastest way)
        return sum(len(uris[ref].primaryURI.read()) > 0 for ref in refs)

    def operations(self) -> dict[str, Callable[[], int]]:
        from astropy.time import Time
        from lsst.daf.butler import Timespan

        data = self.data
        begin, end = data.window
        window = Timespan(Time(begin, scale="utc"), Time(end, scale="utc"))
        return {
            "equality (detector = d)": lambda: self.query("detector = d", d=data.equal_detector),
            "IN (detector IN (0..9))": lambda: self.query("detector IN (ds)",
                                                          ds=data.in_detectors),
            "join through a link (visit.exposure_time > t)":
                lambda: self.query("visit.exposure_time > t", t=data.min_exposure_time),
            "spatial: region OVERLAPS POINT":
                lambda: self.query("visit_detector_region.region OVERLAPS POINT({}, {})"
                                   .format(*data.point)),
            "spatial: region OVERLAPS CIRCLE":
                lambda: self.query("visit_detector_region.region OVERLAPS CIRCLE({}, {}, {})"
                                   .format(*data.circle)),
            "time: timespan OVERLAPS interval":
                lambda: self.query("visit.timespan OVERLAPS w", w=window),
        }


# -- the awlineage side ------------------------------------------------------------------------
class AwlSide:
    """A fresh awlineage database and local data server, and the operations in its API."""

    def __init__(self, root: Path, url: str, schema: str | None, data: Data) -> None:
        from awlineage import use_data_server

        self.data = data
        os.environ["AWL_CACHE_DIR"] = str(root / "cache")
        self.db = connect(url, schema=schema)
        self.server = use_data_server(str(root / "data"))
        self.cache = root / "cache"

    def close(self) -> None:
        from awlineage.storage import forget_data_server

        self.db.close()
        set_current_store(None)
        forget_data_server()

    def footprints(self, visits: range) -> dict[tuple[int, int], object]:
        if not SPACETIME:
            return {}
        data = self.data
        return {(v, d): footprint_from_wcs(data.wcs(v, d), (PIXELS, PIXELS))
                for v in visits for d in range(data.detectors)}

    def bulk_insert(self, visits: range, footprints: dict) -> int:
        data = self.data
        objects: list[DBObject] = []
        for v in visits:
            extra = {"timespan": Interval(*data.timespan(v))} if SPACETIME else {}
            visit = QVisit(number=v, exposure_time=data.exposure_time(v), **extra)
            for d in range(data.detectors):
                extra = {"footprint": footprints[v, d]} if SPACETIME else {}
                objects.append(QCalexp(detector=d, visit=visit, **extra))
        commit(objects)
        return len(objects)

    def put(self, keys: list[tuple[int, int]]) -> int:
        for v, d in keys:
            obj = QFile(detector=d, visit=v)
            obj.store(file_payload(v, d))
            obj.commit()
        return len(keys)

    def forget_reads(self) -> None:
        """As in a process that has read none of the files: no verified hashes remembered,
        an empty cache."""
        with contextlib.suppress(ImportError):  # awlineage before files were read in place
            from awlineage.storage import verified_files

            verified_files.forget()
        shutil.rmtree(self.cache, ignore_errors=True)
        self.db.identity_map.sweep()

    def first_read(self) -> int:
        return sum(len(obj.retrieve().read_bytes()) > 0
                   for obj in select(QFile, database=self.db).all())

    def first_read_copying(self) -> int:
        """What retrieve() did before files were read in place: a copy into the cache,
        hashed."""
        from awlineage.storage import file_cache

        cache = file_cache()
        return sum(len(cache.fetch(self.server, obj.filename, obj.content_hash)
                       .read_bytes()) > 0
                   for obj in select(QFile, database=self.db).all())

    def count(self, condition) -> int:
        found = len(select(condition, database=self.db).all())
        self.db.identity_map.sweep()
        return found

    def operations(self) -> dict[str, Callable[[], int] | None]:
        data = self.data
        ops: dict[str, Callable[[], int] | None] = {
            "equality (detector = d)": lambda: self.count(QCalexp.detector == data.equal_detector),
            "IN (detector IN (0..9))": lambda: self.count(QCalexp.detector.in_(data.in_detectors)),
            "join through a link (visit.exposure_time > t)":
                lambda: self.count(QCalexp.visit.exposure_time > data.min_exposure_time),
            "spatial: region OVERLAPS POINT": None,
            "spatial: region OVERLAPS CIRCLE": None,
            "time: timespan OVERLAPS interval": None,
        }
        if SPACETIME:
            import astropy.units as u

            point = SkyCoord(*data.point, unit="deg")
            ra, dec, radius = data.circle
            circle = Circle(SkyCoord(ra, dec, unit="deg"), radius * u.deg)
            window = Interval(*data.window)
            ops["spatial: region OVERLAPS POINT"] = \
                lambda: self.count(QCalexp.footprint.contains(point))
            ops["spatial: region OVERLAPS CIRCLE"] = \
                lambda: self.count(QCalexp.footprint.overlaps(circle))
            ops["time: timespan OVERLAPS interval"] = \
                lambda: self.count(QCalexp.visit.timespan.overlaps(window))
        return ops

    def add_sources(self) -> None:
        """Commit the sources, 100,000 per transaction."""
        ras, decs = self.data.source_positions()
        chunk = 100_000
        for first in range(0, len(ras), chunk):
            # (ra, dec) pairs in ICRS degrees, which a SkyCoord property takes as it takes
            # a scalar SkyCoord; a million of those would take minutes to build
            commit([QSource(position=(float(ra), float(dec)), flux=float(i))
                    for i, (ra, dec) in enumerate(zip(ras[first:first + chunk],
                                                      decs[first:first + chunk],
                                                      strict=True))])

    def cone_searches(self) -> dict[str, Callable[[], int]]:
        import astropy.units as u

        ras, decs = self.data.source_positions()
        center = SkyCoord(ras[0], decs[0], unit="deg")  # on a source: never an empty answer
        return {f"cone search, radius {r}": (
                    lambda r=r: self.count(QSource.position.within(Circle(center, r))))
                for r in (5 * u.arcsec, 1 * u.arcmin)}


# -- one database ------------------------------------------------------------------------------
@contextlib.contextmanager
def schemas(url: str | None) -> Iterator[tuple[str | None, str | None]]:
    """A schema for each tool on PostgreSQL (dropped afterwards), none on SQLite."""
    if url is None:
        yield None, None
        return
    with postgres_schema(url) as ours, postgres_schema(url) as theirs:
        yield ours, theirs


def ensure_btree_gist(url: str) -> None:
    """The Butler's PostgreSQL registry needs the btree_gist extension (trusted: the
    database's owner may create it)."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS btree_gist")
    finally:
        engine.dispose()


def run_backend(label: str, postgres: str | None, data: Data, repeat: int,
                ) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    with tempfile.TemporaryDirectory(prefix="awl-queries-") as tmp, schemas(postgres) as (
            our_schema, their_schema):
        root = Path(tmp)
        our_url = postgres or f"sqlite:///{root / 'awl.db'}"
        if postgres is not None:
            ensure_btree_gist(postgres)
        ours = AwlSide(root / "awl", our_url, our_schema, data)
        theirs = ButlerSide(root / "butler", postgres, their_schema, data)
        try:
            print(f"{label}: bulk insert", file=sys.stderr)
            visits = range(data.exposures)
            footprints = ours.footprints(visits)
            visit_rows, region_rows = theirs.visit_records(visits)
            rows["bulk insert (visits, datasets)"] = compare(
                lambda: ours.bulk_insert(visits, footprints),
                lambda: theirs.bulk_insert(visit_rows, region_rows), 1)
            print(f"{label}: put", file=sys.stderr)
            keys = [(v, d) for v in visits for d in range(data.detectors)][:data.files]
            rows[f"put, one at a time (per file, x{len(keys)})"] = per_item(compare(
                lambda: ours.put(keys), lambda: theirs.put(keys), 1), len(keys))
            if postgres is not None:
                with sa.create_engine(postgres).begin() as conn:
                    conn.exec_driver_sql("ANALYZE")
            print(f"{label}: queries", file=sys.stderr)
            butler_ops = theirs.operations()
            for name, work in ours.operations().items():
                rows[name] = compare(work, butler_ops[name], repeat, name=name)
            print(f"{label}: first reads", file=sys.stderr)
            rows[f"first read of {len(keys)} files"] = compare(
                ours.first_read, theirs.first_read, repeat, prepare=ours.forget_reads)
            rows[f"read again, same {len(keys)} files"] = compare(
                ours.first_read, theirs.first_read, repeat)
            rows[f"first read of {len(keys)} files, copied to cache (before)"] = compare(
                ours.first_read_copying, theirs.first_read, repeat, prepare=ours.forget_reads)
            if SPACETIME and data.sources:
                print(f"{label}: {data.sources:,} sources", file=sys.stderr)
                wall, cpu, _ = timed(ours.add_sources)
                rows["insert sources with positions (awlineage only, commits of 100,000)"] = \
                    Row(Timing([wall], [cpu], data.sources), None)
                for name, work in ours.cone_searches().items():
                    rows[f"{name} ({data.sources:,} sources)"] = compare(work, None, repeat)
            elif data.sources:
                rows["cone search (sources)"] = Row(NOT_YET, None)
        finally:
            ours.close()
            theirs.close()
    return rows


def per_item(row: Row, count: int) -> Row:
    for timing in (row.ours, row.theirs):
        if isinstance(timing, Timing):
            timing.walls = [wall / count for wall in timing.walls]
            timing.cpus = [cpu / count for cpu in timing.cpus]
            timing.rows = None
    return row


# -- the table ---------------------------------------------------------------------------------
def cell(timing: Timing | str | None) -> str:
    if timing is None:
        return "none"
    if isinstance(timing, str):
        return timing
    return f"{timing.wall * 1e3:.1f} ({timing.cpu * 1e3:.1f})"


def ratio(row: Row) -> str:
    if isinstance(row.ours, Timing) and isinstance(row.theirs, Timing):
        return ratio_spread(row.theirs.walls, row.ours.walls)
    return "-"


def rows_of(row: Row) -> str:
    for timing in (row.ours, row.theirs):
        if isinstance(timing, Timing) and timing.rows is not None:
            return f"{timing.rows:,}"
    return ""


def table(results: dict[str, dict[str, Row]]) -> str:
    labels = list(results)
    head = ["operation", "rows"]
    for label in labels:
        head += [f"{label} awlineage ms", f"{label} Butler ms", f"{label} ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    names = list(dict.fromkeys(name for rows in results.values() for name in rows))
    for name in names:
        first = next(rows[name] for rows in results.values() if name in rows)
        line = [name, rows_of(first)]
        for label in labels:
            row = results[label].get(name)
            line += ["", "", ""] if row is None else [cell(row.ours), cell(row.theirs),
                                                      ratio(row)]
        lines.append("| " + " | ".join(line) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: tiny sizes (5 x 5, 10 files, 1,000 sources), one round")
    parser.add_argument("--detectors", type=int)
    parser.add_argument("--exposures", type=int)
    parser.add_argument("--files", type=int)
    parser.add_argument("--sources", type=int)
    parser.add_argument("--repeat", type=int, help="rounds (default 3; --quick: 1)")
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-sqlite", action="store_true")
    args = parser.parse_args()
    quick = args.quick
    data = Data(detectors=args.detectors or (5 if quick else 100),
                exposures=args.exposures or (5 if quick else 100),
                files=args.files or (10 if quick else 1000),
                sources=args.sources if args.sources is not None else
                (1_000 if quick else 1_000_000))
    if args.repeat is None:
        args.repeat = 1 if quick else 3
    warnings.filterwarnings("ignore", module="astropy")
    print(load_average())
    results: dict[str, dict[str, Row]] = {}
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    if not args.skip_sqlite:
        results["SQLite"] = run_backend("SQLite", None, data, args.repeat)
    if not args.skip_postgres:
        results["PostgreSQL"] = run_backend("PostgreSQL", args.postgres, data, args.repeat)
    print(f"\n{data.detectors} detectors x {data.exposures} exposures "
          f"({data.detectors * data.exposures:,} datasets), {data.files:,} files, "
          f"{data.sources:,} sources; median of {args.repeat} alternated rounds (bulk insert "
          "and put: one). Times in ms: wall (CPU of this process). ratio = Butler time / "
          "awlineage time, median (min-max) of the rounds' pairs: above 1, awlineage is "
          "faster. "
          "\"none\": the Butler has no equivalent (it does not index catalogue rows).")
    if not SPACETIME:
        print(f"awlineage's sky and time types ({', '.join(SPACETIME_NAMES)}) are "
              f"{NOT_YET} on this branch: those rows are not run.")
    print()
    print(table(results))
    print(f"\nwhole run: {time.perf_counter() - start_wall:.0f} s wall, "
          f"{time.process_time() - start_cpu:.0f} s CPU; {load_average()}")


if __name__ == "__main__":
    main()
