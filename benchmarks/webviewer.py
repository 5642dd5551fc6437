"""Response times of the web object viewer: ``awl serve`` under uvicorn, a real HTTP client.

Builds its own data in a temporary folder (SQLite, or a throw-away schema on the PostgreSQL
server named by ``--database``), starts ``awl serve`` on a free loopback port and sends, with
httpx over one keep-alive connection, N requests per case after a few warm-up requests, as
HTML and as JSON (``Accept: application/json``). Prints p50/p95/max in ms, the SQL statements
each answer ran (its ``Server-Timing`` header) and the goals of issue 13:

1. the object page of an object with 1,000 dependencies (a link list of 1,000 plus 3 links)
   (goal: p95 under 100 ms) and its lineage graph at depth 2 (the graphs' goal: under 1 s);
2. the lineage graph of a leaf whose ancestry has 10,000 objects, a survey's shape: raw
   calibration frames -> masters; raw frames -> reduced -> regridded -> coadds -> source
   lists -> one catalogue (goal: p95 under 1 s);
3. a search whose answer is 10,000 objects of one class, first page (goal: p95 under 100 ms);
4. every page of ``awl demo --executor serial``'s database (run in a subfolder): home, an
   object page, the lineage graph of a source list (5 nodes, and depth 3), a plan, a run, a
   search, the class list, the runs page, the object tree, a source list's sources, the
   image page and its pixels, the sky map (issue 37's goal: p95 under 100 ms each); the
   home page's plan summary (loaded after the page) and a pixel query on its coadd (no
   goal); the tree, the run page and the depth-3 lineage again from ``awl serve --public``,
   which rewrites every text answer (same goal);
5. the query count beside a small twin of each (10 dependencies, 100 objects): a count that
   grows with the number of objects shown is a failure;
6. the frame time of the interactive lineage graph at 2,000 expanded nodes in Chromium
   (``benchmarks/lineage_frames.py``, run at the end unless ``--skip-frames``).

The requests of each case are split into alternated rounds (``--rounds``: every case timed in
turn in each round), so that a change of the machine's load falls on every case alike; the
output of ``uptime`` is printed before and after. Then the same cases against
``awl serve --workers 2``, two clients at once. A page the viewer
does not serve yet answers 404 and is reported as "not served".

``--quick`` is a smoke run (well under a minute): small data, 3 requests per case, one worker,
no demo and no frames (as ``--requests 3 --skip-demo --skip-workers --skip-frames``).

Usage: python benchmarks/webviewer.py [--requests 200] [--rounds 5] [--quick]
       [--database URL] [--skip-demo] [--skip-workers] [--skip-frames]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx
from benchmark_support import postgres_schema

from awlineage import (
    Database,
    DBObject,
    Session,
    ancestors,
    commit,
    connect,
    get,
    persistent,
    select,
)
from awlineage.persistence import qualified_name, set_current_store

REPO = Path(__file__).resolve().parents[1]
JSON = "application/json"
HTML = "text/html"
TIMING = re.compile(r'db;desc="(\d+) queries";dur=([\d.]+)')
WARM_UP = 3
ROUNDS = 5
"""Alternated runs: each case is timed in this many rounds, every case in turn each round."""
REQUESTS = 200
"""Timed requests per case (``--requests``)."""
QUICK_REQUESTS = 3
"""Timed requests per case of ``--quick``: a smoke run, not a measurement."""


# The data: plain persistent classes, stored here and shown by the viewer as stand-ins
# (the server cannot import this script), as any user's script-defined classes are.

class ViewerBenchParameters(DBObject):
    """Parameters of a stack."""

    __namespace__ = "viewerbench"
    kappa = persistent("Clipping threshold [sigma]", float, 3.0)


class ViewerBenchFrame(DBObject):
    """One frame of a stack."""

    __namespace__ = "viewerbench"
    name = persistent("Frame name", str, "")
    exptime = persistent("Exposure time [s]", float, 0.0)


class ViewerBenchCalibration(DBObject):
    """A calibration a stack uses."""

    __namespace__ = "viewerbench"
    kind = persistent("bias or flat", str, "")


class ViewerBenchStack(DBObject):
    """An object with many dependencies: a link list and a few links."""

    __namespace__ = "viewerbench"
    frames = persistent("Frames stacked", ViewerBenchFrame, [])
    bias = persistent("Master bias", ViewerBenchCalibration, None)
    flat = persistent("Master flat", ViewerBenchCalibration, None)
    params = persistent("Parameters", ViewerBenchParameters, None)


class SurveyRawBias(DBObject):
    """A raw bias frame."""

    __namespace__ = "viewerbench"
    chip = persistent("Chip", str, "")


class SurveyMasterBias(DBObject):
    """A master bias made from raw biases."""

    __namespace__ = "viewerbench"
    raw_biases = persistent("Raw biases", SurveyRawBias, [])


class SurveyRawFlat(DBObject):
    """A raw dome flat."""

    __namespace__ = "viewerbench"
    chip = persistent("Chip", str, "")


class SurveyMasterFlat(DBObject):
    """A master flat made from raw flats, bias-subtracted."""

    __namespace__ = "viewerbench"
    raw_flats = persistent("Raw flats", SurveyRawFlat, [])
    bias = persistent("Master bias", SurveyMasterBias, None)


class SurveyRawFrame(DBObject):
    """A raw science frame."""

    __namespace__ = "viewerbench"
    original_name = persistent("Name at the telescope", str, "")
    filter = persistent("Filter", str, "")


class SurveyReducedFrame(DBObject):
    """A raw frame debiased and flat-fielded."""

    __namespace__ = "viewerbench"
    raw = persistent("Raw frame", SurveyRawFrame, None)
    bias = persistent("Master bias", SurveyMasterBias, None)
    flat = persistent("Master flat", SurveyMasterFlat, None)


class SurveyRegriddedFrame(DBObject):
    """A reduced frame resampled onto the sky grid."""

    __namespace__ = "viewerbench"
    reduced = persistent("Reduced frame", SurveyReducedFrame, None)


class SurveyCoadd(DBObject):
    """The stack of the regridded frames of one pointing."""

    __namespace__ = "viewerbench"
    regridded_frames = persistent("Frames stacked", SurveyRegriddedFrame, [])


class SurveySourceList(DBObject):
    """The sources found on one coadd."""

    __namespace__ = "viewerbench"
    coadd = persistent("Coadd", SurveyCoadd, None)


class SurveyCatalogue(DBObject):
    """The survey's catalogue: every pointing's source list merged."""

    __namespace__ = "viewerbench"
    source_lists = persistent("Source lists merged", SurveySourceList, [])


class SearchRow(DBObject):
    """One of many objects of a class, for a search."""

    __namespace__ = "viewerbench"
    number = persistent("Number", int, 0)
    flux = persistent("Flux [ADU]", float, 0.0)


class SearchFewRow(DBObject):
    """One of a few objects of a class, for a search of the same shape."""

    __namespace__ = "viewerbench"
    number = persistent("Number", int, 0)
    flux = persistent("Flux [ADU]", float, 0.0)


def build_stack(dependencies: int) -> int:
    """An object linking to `dependencies` frames and 3 more objects; its id."""
    stack = ViewerBenchStack(
        frames=[ViewerBenchFrame(name=f"frame{i:05d}", exptime=30.0)
                for i in range(dependencies)],
        bias=ViewerBenchCalibration(kind="bias"), flat=ViewerBenchCalibration(kind="flat"),
        params=ViewerBenchParameters(kappa=2.5))
    commit([stack])
    return stack.object_id


SURVEY_FRAMES_PER_POINTING = 40
SURVEY_CALIBRATION_RAWS = 10


def build_survey(ancestry: int) -> int:
    """A catalogue whose ancestry has about `ancestry` objects (at least that many): per
    pointing, raw biases and flats -> masters, raw frames -> reduced -> regridded -> a coadd
    -> a source list. Its id."""
    per_pointing = 3 * SURVEY_FRAMES_PER_POINTING + 2 * SURVEY_CALIBRATION_RAWS + 4
    pointings = max(1, -(-ancestry // per_pointing))
    source_lists = []
    for pointing in range(pointings):
        chip = f"ccd{pointing % 32:02d}"
        bias = SurveyMasterBias(raw_biases=[SurveyRawBias(chip=chip)
                                            for _ in range(SURVEY_CALIBRATION_RAWS)])
        flat = SurveyMasterFlat(raw_flats=[SurveyRawFlat(chip=chip)
                                           for _ in range(SURVEY_CALIBRATION_RAWS)], bias=bias)
        regridded = [SurveyRegriddedFrame(reduced=SurveyReducedFrame(
            raw=SurveyRawFrame(original_name=f"OMEGACAM.{pointing:04d}.{i:03d}.fits",
                               filter="r"), bias=bias, flat=flat))
            for i in range(SURVEY_FRAMES_PER_POINTING)]
        source_lists.append(SurveySourceList(coadd=SurveyCoadd(regridded_frames=regridded)))
    catalogue = SurveyCatalogue(source_lists=source_lists)
    commit([catalogue])
    return catalogue.object_id


def build_search(cls: type[DBObject], count: int) -> str:
    """`count` objects of `cls`; the class's name, as a search query."""
    commit([cls(number=i, flux=float(i % 997)) for i in range(count)])
    return cls.__name__


@dataclass
class Case:
    """One URL to time, and the goal its p95 must meet (None: no goal)."""

    name: str
    path: str
    goal_ms: float | None
    server: str = "main"


@dataclass
class Sizes:
    """How much data to build."""

    dependencies: int = 1_000
    ancestry: int = 10_000
    search: int = 10_000
    small_dependencies: int = 10
    small_search: int = 100


QUICK = Sizes(dependencies=50, ancestry=300, search=200, small_dependencies=10,
              small_search=20)


@dataclass
class Built:
    """What `build_all` stored: the cases to time and the pairs of cases whose query counts
    to compare (small twin, big one)."""

    cases: list[Case]
    pairs: list[tuple[str, str]] = field(default_factory=list)


def build_all(sizes: Sizes) -> Built:
    """Store every object the cases need in the connected database."""
    big = build_stack(sizes.dependencies)
    small = build_stack(sizes.small_dependencies)
    leaf = build_survey(sizes.ancestry)
    ancestry = len(ancestors(get(leaf)))
    many = build_search(SearchRow, sizes.search)
    few = build_search(SearchFewRow, sizes.small_search)
    depth = 10
    cases = [
        Case("start page (the dashboard)", "/", 100),
        Case(f"object page, {sizes.dependencies:,} dependencies", f"/obj/{big}", 100),
        Case(f"object page, {sizes.small_dependencies:,} dependencies", f"/obj/{small}", 100),
        Case(f"lineage depth 2, {sizes.dependencies:,} dependencies",
             f"/obj/{big}/lineage?depth=2", 1000),
        Case(f"lineage depth 2, {sizes.small_dependencies:,} dependencies",
             f"/obj/{small}/lineage?depth=2", 1000),
        Case(f"lineage depth {depth}, ancestry of {ancestry:,}",
             f"/obj/{leaf}/lineage?depth={depth}", 1000),
        Case(f"search, {sizes.search:,} results, page 1", f"/search?q={many}", 100),
        Case(f"search, {sizes.small_search:,} results, page 1", f"/search?q={few}", 100),
    ]
    pairs = [(cases[2].name, cases[1].name), (cases[4].name, cases[3].name),
             (cases[7].name, cases[6].name)]
    return Built(cases, pairs)


def build_demo(folder: Path) -> tuple[str, Path, list[Case]]:
    """Run ``awl demo --executor serial`` in `folder`; its database URL, data folder and the
    cases of its pages (issue 37: every page under 100 ms): the home page, a source list's
    object page and its lineage graph (5 nodes; depth 3 too), the plan of its class, the run
    that made it, a search, the class list, and a pixel query on its first coadd's central
    pixel."""
    folder.mkdir()
    result = subprocess.run([sys.executable, "-m", "awlineage.cli", "demo", "--executor",
                             "serial", "--colour", "never"], cwd=folder, env=_env(),
                            capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        raise SystemExit(f"awl demo failed:\n{result.stderr[-3000:]}")
    from targets.science import CoaddedRegriddedFrame
    from targets.source_lists import SourceList

    url, data = f"sqlite:///{folder}/awlineage.db", folder / "awl-data"
    session = Session(Database(url, read_only=True), str(data))
    with session.activate():
        coadd = min(select(CoaddedRegriddedFrame), key=lambda found: found.object_id)
        with coadd.open_fits() as hdus:
            rows, cols = hdus[0].data.shape
        source_list = min(select(SourceList), key=lambda found: found.object_id)
        made_by = getattr(source_list, "process_run", None)
    session.close()
    sl = source_list.object_id
    cases = [Case("demo: home page", "/", 100, server="demo"),
             Case("demo: object page, a source list", f"/obj/{sl}", 100, server="demo"),
             Case("demo: lineage, a source list (5 nodes)", f"/obj/{sl}/lineage", 100,
                  server="demo"),
             Case("demo: lineage depth 3, a source list", f"/obj/{sl}/lineage?depth=3", 100,
                  server="demo"),
             Case("demo: plan of SourceList", f"/plan/{qualified_name(SourceList)}", 100,
                  server="demo"),
             Case("demo: search, Source, page 1", "/search?q=Source", 100, server="demo"),
             Case("demo: class list", "/classes", 100, server="demo"),
             Case("demo: runs page", "/runs", 100, server="demo"),
             Case("demo: plan summary of the home page", "/home/plan", None, server="demo"),
             Case("demo: object tree, a source list, depth 2", f"/obj/{sl}/tree?depth=2",
                  100, server="demo"),
             Case("demo: sources of a source list", f"/obj/{sl}/sources", 100,
                  server="demo"),
             Case("demo: image page, a coadd", f"/obj/{coadd.object_id}/image", 100,
                  server="demo"),
             Case("demo: image pixels, a coadd", f"/obj/{coadd.object_id}/image.f32", 100,
                  server="demo"),
             Case("demo: sky map", "/sky", 100, server="demo")]
    if made_by is not None:
        cases.append(Case("demo: run page", f"/run/{made_by.object_id}", 100, server="demo"))
    # public mode rewrites every text answer; the pages with the most text and paths
    cases += [Case(f"demo, public: {case.name.removeprefix('demo: ')}", case.path, 100,
                   server="demo-public") for case in cases
              if "tree" in case.path or case.path.startswith("/run/")
              or case.path.endswith("lineage?depth=3")]
    cases.append(Case(f"pixels, demo coadd {cols}x{rows}",
                      f"/obj/{coadd.object_id}/pixels?x={cols // 2}&y={rows // 2}", None,
                      server="demo"))
    return url, data, cases


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served(url: str, data: Path, schema: str | None, workers: int, cwd: Path,
           public: bool = False) -> Iterator[str]:
    """``awl serve`` (``--public`` when `public`) on a free loopback port for database
    `url`: its base URL."""
    port = _free_port()
    command = [sys.executable, "-m", "awlineage.cli", "serve", "--port", str(port),
               "--database", url, "--data-url", str(data), "--workers", str(workers),
               *(["--public"] if public else [])]
    if schema:
        command += ["--schema", schema]
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, cwd=cwd, env=_env(), stdout=log, stderr=log)
        try:
            _wait_until_served(base, process, log)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=30)


def _wait_until_served(base: str, process: subprocess.Popen, log: IO[str]) -> None:
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            log.seek(0)
            raise SystemExit(f"awl serve exited:\n{log.read()[-3000:]}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(base + "/", headers={"accept": JSON}).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"awl serve did not answer on {base} in 120 s")
        time.sleep(0.2)


@dataclass
class Timing:
    """What the requests of one case found."""

    status: int
    message: str = ""
    seconds: list[float] = field(default_factory=list)
    queries: set[int] = field(default_factory=set)
    db_ms: list[float] = field(default_factory=list)

    @property
    def served(self) -> bool:
        return self.status == 200 and bool(self.seconds)

    def percentile(self, q: float) -> float:
        return statistics.quantiles(self.seconds, n=100, method="inclusive")[int(q) - 1] \
            if len(self.seconds) > 1 else self.seconds[0]


def _server_timing(response: httpx.Response) -> tuple[int, float] | None:
    """The statements an answer ran and their time in ms, from its Server-Timing header."""
    match = TIMING.search(response.headers.get("server-timing", ""))
    return (int(match[1]), float(match[2])) if match else None


def _message(client: httpx.Client, path: str) -> str:
    """The error message of `path`, asked for as JSON (an HTML error page is for people)."""
    response = client.get(path, headers={"accept": JSON})
    with contextlib.suppress(ValueError, KeyError, TypeError):
        return str(response.json()["error"])
    return " ".join(response.text[:120].split())


def time_case(base: str, path: str, accept: str, requests: int, clients: int) -> Timing:
    """`requests` GETs of `path` after a few warm-up ones, from `clients` clients at once,
    each on its own keep-alive connection."""
    headers = {"accept": accept}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        for _ in range(WARM_UP):
            response = client.get(path)
            if response.status_code != 200:
                return Timing(response.status_code, _message(client, path))
    timing = Timing(200)
    lock = threading.Lock()

    def one_client(count: int) -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            client.get(path)
            for _ in range(count):
                started = time.perf_counter()
                response = client.get(path)
                elapsed = time.perf_counter() - started
                with lock:
                    if response.status_code != 200:
                        timing.status = response.status_code
                    timing.seconds.append(elapsed)
                    database = _server_timing(response)
                    if database is not None:
                        timing.queries.add(database[0])
                        timing.db_ms.append(database[1])

    threads = [threading.Thread(target=one_client, args=(requests // clients,))
               for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return timing


def _merged(before: Timing | None, timing: Timing) -> Timing:
    """The requests of one more round added to those of the rounds before."""
    if before is None or not timing.served:
        return timing
    before.seconds.extend(timing.seconds)
    before.queries |= timing.queries
    before.db_ms.extend(timing.db_ms)
    if timing.status != 200:
        before.status = timing.status
    return before


def _count_text(timing: Timing | None) -> str:
    if timing is None or not timing.served:
        return "-"
    if not timing.queries:
        return "?"
    return "-".join(str(n) for n in sorted({min(timing.queries), max(timing.queries)}))


def _load() -> str:
    """The machine's load: figures taken on a busy machine are not the viewer's alone."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} on {os.cpu_count()} CPUs"


def report(case: Case, accept: str, timing: Timing) -> None:
    kind = "json" if accept == JSON else "html"
    label = f"  {case.name:42s} {kind:4s}"
    if timing.status == 404 and not timing.seconds:
        print(f"{label}  not served (404: {timing.message})")
        return
    if not timing.served:
        print(f"{label}  failed ({timing.status}: {timing.message})")
        return
    p50, p95 = timing.percentile(50) * 1e3, timing.percentile(95) * 1e3
    top = max(timing.seconds) * 1e3
    goal = "" if case.goal_ms is None else (
        f"goal p95 < {case.goal_ms:,.0f} ms: {'met' if p95 < case.goal_ms else 'MISSED'}")
    warn = "" if timing.status == 200 else f"  (some answers {timing.status})"
    db = f"{statistics.median(timing.db_ms):6.1f}" if timing.db_ms else "     ?"
    print(f"{label}  p50 {p50:7.1f}  p95 {p95:7.1f}  max {top:7.1f} ms  "
          f"{_count_text(timing):>5s} queries, db p50 {db} ms  {goal}{warn}")


def _uptime() -> str:
    """What ``uptime`` says (the load, which figures taken on a busy machine depend on)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    return _load()


def run_configuration(title: str, servers: dict[str, str], cases: list[Case],
                      pairs: list[tuple[str, str]], requests: int, clients: int,
                      rounds: int = ROUNDS) -> None:
    """Time every case, as HTML and as JSON, in `rounds` alternated runs (each round times
    a share of the requests of every case in turn, so that a change of the machine's load
    falls on every case alike), then print each case's figures over all rounds."""
    rounds = max(1, min(rounds, requests // clients))
    print(f"\n{title}: {requests} requests per case from {clients} client(s) in {rounds} "
          f"alternated rounds, keep-alive, after {WARM_UP} warm-up requests")
    print(f"  uptime before: {_uptime()}")
    found: dict[tuple[str, str], Timing] = {}
    for number in range(rounds):
        share = requests // rounds + (1 if number < requests % rounds else 0)
        for case in cases:
            for accept in (HTML, JSON):
                if found.get((case.name, accept)) is not None and \
                        not found[case.name, accept].served:
                    continue
                timing = time_case(servers[case.server], case.path, accept, share, clients)
                found[case.name, accept] = _merged(found.get((case.name, accept)), timing)
    for case in cases:
        for accept in (HTML, JSON):
            report(case, accept, found[case.name, accept])
    print(f"  uptime after: {_uptime()}")
    print("  does the query count grow with the objects shown? (it must not)")
    for small, big in pairs:
        for accept in (HTML, JSON):
            few, many = found[small, accept], found[big, accept]
            kind = "json" if accept == JSON else "html"
            label = f"    count, {big} vs {small.split(', ')[1]} ({kind}):"
            if not (few.served and many.served):
                print(f"{label} not served")
                continue
            verdict = ("does not grow" if few.queries and many.queries
                       and max(many.queries) <= max(few.queries) else "GROWS")
            print(f"{label} {_count_text(many)} vs {_count_text(few)} queries: {verdict}")


def run(args: argparse.Namespace, folder: Path, url: str, schema: str | None) -> None:
    sizes = QUICK if args.quick else Sizes()
    started = time.perf_counter()
    database = connect(url, schema=schema)
    built = build_all(sizes)
    backend = database.engine.dialect.name
    database.close()
    set_current_store(None)
    print(f"data built in {time.perf_counter() - started:.1f} s on {backend}")
    cases = list(built.cases)
    demo: tuple[str, Path, list[Case]] | None = None
    if not args.skip_demo:
        started = time.perf_counter()
        demo = build_demo(folder / "demo")
        cases.extend(demo[2])
        print(f"awl demo --executor serial ran in {time.perf_counter() - started:.1f} s")
    data = folder / "awl-data"
    data.mkdir(exist_ok=True)
    workers = [1] if args.skip_workers else [1, 2]
    for count in workers:
        with contextlib.ExitStack() as stack:
            servers = {"main": stack.enter_context(served(url, data, schema, count, folder))}
            if demo is not None:
                servers["demo"] = stack.enter_context(
                    served(demo[0], demo[1], None, count, folder / "demo"))
                servers["demo-public"] = stack.enter_context(
                    served(demo[0], demo[1], None, count, folder / "demo", public=True))
            run_configuration(f"awl serve --workers {count}", servers, cases, built.pairs,
                              args.requests, clients=count, rounds=args.rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int,
                        help=f"timed requests per case (default {REQUESTS}; --quick: "
                        f"{QUICK_REQUESTS})")
    parser.add_argument("--quick", action="store_true",
                        help=f"a smoke run: small data, {QUICK_REQUESTS} requests per case, one "
                        "worker, no demo, no frames")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help="alternated runs: the requests of each case are split into this "
                        "many rounds, every case timed in turn in each")
    parser.add_argument("--database", help="a PostgreSQL URL (a throw-away schema is made "
                        "there); default a temporary SQLite file")
    parser.add_argument("--skip-demo", action="store_true",
                        help="no awl demo, no pixel query")
    parser.add_argument("--skip-workers", action="store_true",
                        help="only awl serve with one worker")
    parser.add_argument("--skip-frames", action="store_true",
                        help="no frame times of the 2,000-node lineage graph in Chromium")
    args = parser.parse_args()
    if args.requests is None:
        args.requests = QUICK_REQUESTS if args.quick else REQUESTS
    if args.quick:
        args.skip_demo = args.skip_workers = args.skip_frames = True
    if args.database and not args.database.startswith("postgresql"):
        parser.error("--database takes a PostgreSQL URL; SQLite is the default")
    print("awlineage web viewer benchmark: awl serve under uvicorn, httpx")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.database:
            with postgres_schema(args.database) as schema:
                run(args, folder, args.database, schema)
        else:
            run(args, folder, f"sqlite:///{folder}/bench.db", None)
    if not args.skip_frames:  # the interactive graph: frame times in Chromium
        frames = [sys.executable, str(Path(__file__).with_name("lineage_frames.py"))]
        subprocess.run(frames + (["--quick"] if args.quick else []), env=_env(), check=True)


if __name__ == "__main__":
    main()
