"""``awl demo``: the imaging pipeline on a synthetic night, on the embedded defaults.

It generates a night (deterministic, so run again it is the same night), ingests it, shows the
target processor's plan for every source list, makes what is red (on Spark in local mode when
the ``spark`` extra is installed, else serially), and then shows the lineage tree of a source
list and one star traced back to the raw pixels of every exposure, bias and flat that made it.
Run again, everything is reused; with ``--cosmic-ray-threshold`` changed, only what depends on
it is made again, and the plan says why.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, TextIO, cast

from awlineage import AwlError, TargetProcessor, backward, connect, info, select
from awlineage.config import setting
from awlineage.processing import (
    Settings,
    check_cluster_settings,
    render_plan,
    resolve_executor,
)
from awlineage.storage import current_data_server, shown_data_url
from targets.pipeline import (
    ReducedScienceFrameParameters,
    Source,
    SourceList,
    ingest,
)
from targets.sky import SkyParameters, write_night

SEED = 7


def run_demo(database_url: str | None = None, *, size: str = "small", executor: str = "auto",
             spark_master: str | None = None, cosmic_ray_threshold: float | None = None,
             colour: str = "auto",
             out: TextIO = sys.stdout) -> int:
    """Run the demo; returns the exit status (1 when a target could not be made)."""
    # the data server first: a file named awl-data is said so before the database is made
    if spark_master and executor == "serial":
        raise AwlError(f"--spark-master {spark_master} needs the Spark executor, not "
                       "--executor serial")
    if spark_master and not spark_master.startswith("local"):  # before anything is made
        check_cluster_settings(spark_master, Settings(
            str(setting("database_url", database_url)), None, str(setting("data_url"))))
    server = current_data_server()
    db = connect(database_url)
    executor = "spark" if spark_master else resolve_executor(executor)
    if executor == "spark" and not spark_master and not _java_available():
        print("Java was not found, and Spark needs it: running the serial executor instead "
              "(install Java 17 for Spark)", file=sys.stderr)
        executor = "serial"
    # https://no-color.org: NO_COLOR set means no colour unless asked for by name
    paint = colour == "always" or (colour == "auto" and out.isatty()
                                   and not os.environ.get("NO_COLOR"))
    say = _Printer(out)
    say.title("awlineage demo: an imaging pipeline on a synthetic night")
    say(f"database {db.url.render_as_string(hide_password=True)}, data server "
        f"{shown_data_url(server.url)}, "
        f"executor {executor}" + (f" on {spark_master}" if spark_master else ""))

    parameters = () if cosmic_ray_threshold is None else \
        (ReducedScienceFrameParameters(sigclip=cosmic_ray_threshold),)
    processor = TargetProcessor(executor, database=db, parameters=parameters,
                                spark_master=spark_master)
    processor.start(SourceList)  # Spark starts while the night is ingested and planned

    say.title(f"1. A {size} synthetic night, ingested")
    with tempfile.TemporaryDirectory(prefix="awl-demo-") as scratch:
        night = write_night(SkyParameters.preset(size, seed=SEED), Path(scratch))
        report = ingest(night.paths)
    frames, chips, filters = (len(night.paths), len(night.truth.chips),
                              len(night.truth.parameters.filters))
    del night  # its truth (the true sky of every frame) is not needed again: 53 MB on medium
    say(f"{frames} raw frames (biases, dome flats, dithered exposures of {chips} chips in "
        f"{filters} filters): {len(report.ingested)} ingested now, {len(report.already)} "
        "ingested before")

    plan = processor.plan(SourceList)
    say.title("2. The plan for every SourceList (green: reuse, red: make, and why)")
    first = type(plan)(plan.selected[:1], plan.nodes)
    say(render_plan(first, colour=paint, max_depth=2, group=True))
    if len(plan.selected) > 1:
        say(f"... and {len(plan.selected) - 1} more source list(s); the whole tree: "
            "awl make SourceList --dry-run")
    say(f"why:\n{_causes_by_reason(plan)}")

    say.title("3. Making what is red")
    started = time.perf_counter()
    made = processor.make(SourceList)
    say(made.summary())
    say(f"{made.made} target(s) made, {made.reused} reused, in "
        f"{time.perf_counter() - started:.1f} s")
    if made.note:
        say(f"({made.note})")
    elif made.made_locally == made.made:
        say("(all made in this process while Spark was starting: on a night this small, "
            "Spark's workers were not up before the end)")
    elif made.made_locally:
        say(f"({made.made_locally} made in this process while Spark was starting, the rest "
            "on Spark)")
    for node, result in made.failures():
        say(f"failed: {node.cls.__name__} ({node.identity_text()}): {result.error}")
    lists = sorted(cast(list[SourceList], made.objects),  # made for SourceList
                   key=lambda s: s.filter)
    if not lists:
        return 1
    sources = lists[0]
    say.title(f"4. The lineage of SourceList {sources.object_id} ({sources.object_name}, "
              f"{sources.filter}, {sources.nsources} sources)")
    say(info(sources, depth=4, attributes=False, runs=False, group=True).render())
    say(f"(links only, same-class inputs grouped; the whole tree: awl info {sources.object_id}"
        f" --depth 4 --expand)")

    star = select((Source.sourcelist == sources) & (Source.flags == 0)).order_by("-flux").first()
    if star is not None:
        _trace_star(say, sources, star)
    say.title("6. Look further")
    awl = "awl"
    if database_url is not None:  # the commands must read this database, not the default
        shown = db.url.render_as_string(hide_password=True)
        awl = f"awl --database '{shown}'"
        if db.url.password is not None:
            say("  (put your password back where *** stands, or set AWL_DATABASE_URL and "
                "drop --database)")
    for command in (f"awl trace {sources.coadd.object_id}",
                    "awl select --newest \"SourceList.filter == 'r' and SourceList.nsources > "
                    "50\"",
                    "awl make SourceList --dry-run",
                    "awl demo --cosmic-ray-threshold 6   (remakes only what depends on it)",
                    f"awl serve   (then open http://127.0.0.1:8400/obj/{sources.object_id})"):
        say(f"  {awl}{command.removeprefix('awl')}")
    if star is not None:
        say(f"  {awl} cutout {star.object_id} -o star.fits   (the star out of every image "
            "that made it)")
        say(f"  the same in the viewer: http://127.0.0.1:8400/obj/{star.object_id}/gallery")
    return 0 if not made.failures() else 1


def _trace_star(say: _Printer, sources: SourceList, star: Source) -> None:
    say.title(f"5. The brightest clean star, number {star.number} (RA {star.ra:.5f}, Dec "
              f"{star.dec:.5f}, {star.flux:.0f} e-/s), traced back to its raw pixels")
    started = time.perf_counter()
    found = backward(sources, [[star.number]], hdu=1)
    elapsed = time.perf_counter() - started
    say(f"{'class':24s} {'object_id':>20s} {'cells':>7s}  rows      columns   file")
    rows: dict[tuple, list[Any]] = {}  # frames of one class with one region share a row
    summaries: dict[tuple, int] = {}  # global inputs (background maps): whole small arrays
    for entry in found:
        if entry.region.is_empty():
            continue
        if len(entry.region.shape) != 2:
            key = (type(entry.obj).__name__, entry.hdu)
            summaries[key] = summaries.get(key, 0) + 1
            continue
        boxes = entry.region.to_boxes()
        low, high = boxes.lo.min(axis=0), boxes.hi.max(axis=0)
        key = (type(entry.obj).__name__, entry.region.count(), *low, *high)
        rows.setdefault(key, []).append(entry.obj)
    for (name, cells, row0, col0, row1, col1), objects in rows.items():
        first = objects[0]
        label = name if len(objects) == 1 else f"{len(objects)} x {name}"
        files = getattr(first, "filename", "") + \
            (f" ... {objects[-1].filename}" if len(objects) > 1 else "")
        say(f"{label:24s} {first.object_id:20d} {cells:7d}  {row0:4d}-{row1:<4d} "
            f"{col0:4d}-{col1:<4d} {files}")
    wholes = ", ".join(f"{hdu} of {count} {name}" for (name, hdu), count in summaries.items())
    say(f"({found.stats.hops} hops over the compressed region tables in "
        f"{elapsed * 1000:.0f} ms; a raw frame's larger region is a cosmic ray's "
        "neighbourhood" + (f"; global inputs, whole: {wholes})" if wholes else ")"))


def _causes_by_reason(plan: Any) -> str:
    """The root causes of the plan, a line per reason naming how many of each class it
    concerns: on a first run one line says that nothing is stored yet."""
    by_reason: dict[str, list[str]] = {}
    for (name, reason), count in plan.causes().items():
        by_reason.setdefault(reason, []).append(f"{count} {name}")
    if not by_reason:
        return "  nothing to make: every target is up to date"
    return "\n".join(textwrap.fill(f"{reason}: {', '.join(classes)}", width=100,
                                    initial_indent="  ", subsequent_indent="    ")
                      for reason, classes in by_reason.items())


def _java_available() -> bool:
    """Whether a Java runtime is on the PATH or under JAVA_HOME."""
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or (
        home is not None and (Path(home) / "bin" / "java").exists())


class _Printer:
    """Lines of the demo's report, with numbered section titles."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def title(self, text: str) -> None:
        print(f"\n{text}", file=self.out, flush=True)
