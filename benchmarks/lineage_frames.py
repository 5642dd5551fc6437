"""Frame times of the interactive lineage graph (issue 37): 2,000 expanded nodes in Chromium.

Builds, in a temporary SQLite database, one catalogue made from 40 products, each made from 49
frames (2,001 objects), and serves the viewer on loopback with limits that let the graph show
every object ungrouped (``group_siblings`` above any sibling count, ``graph_nodes`` 3,000).
Opens ``/obj/CATALOGUE/lineage?direction=up&depth=2`` in Debian's chromium (Playwright, as the
browser tests do), then pans and zooms the graph one step per animation frame and prints:

- the page's load time: navigation start to the graph laid out and drawn (``data-ready``);
- frame times while panning and while zooming: median and p95 of the intervals between
  ``requestAnimationFrame`` callbacks (16.7 ms is the display's 60 Hz; headless chromium
  draws at most that often);
- the node count with the default limits (siblings grouped), which keeps a large ancestry
  readable.

Timings on a shared machine are noisy: ``uptime`` is printed with them.

Usage: python benchmarks/lineage_frames.py [--quick] [--frames 240] [--products 40]
       [--frames-per-product 49]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# benchmarks/webviewer.py would shadow the webviewer package: import it (and this folder's
# modules, as benchmarks.NAME) from the project
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import uvicorn
from playwright.sync_api import sync_playwright

from awlineage import DBObject, commit, connect, persistent
from awlineage.persistence import set_current_store
from benchmarks.chromium import CHROMIUM, CHROMIUM_ARGS, chromium_env
from webviewer import Limits, create_app


class BenchFrame(DBObject):
    """An input frame."""

    __namespace__ = "lineageframesbench"
    name = persistent("Name", str, "")


class BenchProduct(DBObject):
    """Made from frames."""

    __namespace__ = "lineageframesbench"
    frames = persistent("Frames", BenchFrame, [])


class BenchCatalogue(DBObject):
    """Made from products."""

    __namespace__ = "lineageframesbench"
    products = persistent("Products", BenchProduct, [])


def build(url: str, products: int, per_product: int) -> int:
    """Store the graph; the catalogue's object id."""
    database = connect(url)
    made = [BenchProduct(frames=[BenchFrame(name=f"f{p}-{i}") for i in range(per_product)])
            for p in range(products)]
    catalogue = BenchCatalogue(products=made)
    commit([catalogue])
    database.close()
    set_current_store(None)
    return catalogue.object_id


@contextmanager
def served(app) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The app under uvicorn on a free loopback port (a background thread)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


MEASURE = """async ([frames, mode]) => {
    const cy = window.awlLineage.cy;
    cy.fit(undefined, 20);
    const stamps = [];
    await new Promise(done => {
        let i = 0;
        function step(now) {
            stamps.push(now);
            if (i++ >= frames) { done(); return; }
            if (mode === 'pan') {
                cy.panBy({x: (i % 60 < 30 ? 6 : -6), y: (i % 40 < 20 ? 3 : -3)});
            } else {
                const box = cy.container().getBoundingClientRect();
                cy.zoom({level: cy.zoom() * (i % 60 < 30 ? 1.03 : 1 / 1.03),
                         renderedPosition: {x: box.width / 2, y: box.height / 2}});
            }
            requestAnimationFrame(step);
        }
        requestAnimationFrame(step);
    });
    return stamps.slice(1).map((t, k) => t - stamps[k]);
}"""


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"median {statistics.median(ordered):6.1f} ms   p95 {p95:6.1f} ms   "
            f"max {ordered[-1]:6.1f} ms   ({len(ordered)} frames)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run (~200 nodes)")
    parser.add_argument("--frames", type=int, default=240, help="frames per measurement")
    parser.add_argument("--products", type=int, default=40)
    parser.add_argument("--frames-per-product", type=int, default=49)
    args = parser.parse_args()
    if args.quick:
        args.products, args.frames_per_product, args.frames = 10, 19, 60
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        started = time.perf_counter()
        root = build(url, args.products, args.frames_per_product)
        nodes = 1 + args.products * (1 + args.frames_per_product)
        print(f"stored {nodes} objects in {time.perf_counter() - started:.1f} s")
        wide = Limits(group_siblings=100_000, graph_nodes=nodes + 100,
                      graph_objects=nodes + 100)
        path = f"/obj/{root}/lineage?direction=up&depth=2"
        with served(create_app(url, limits=wide)) as base, \
                served(create_app(url)) as grouped_base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                     env=chromium_env())
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            started = time.perf_counter()
            page.goto(base + path)
            page.wait_for_selector("#lineage-graph[data-ready='1']", timeout=300_000)
            wall = time.perf_counter() - started
            in_page = page.evaluate("performance.now()")
            drawn = page.evaluate("window.awlLineage.cy.nodes().length")
            timing = page.evaluate("""() => {
                const n = performance.getEntriesByType('navigation')[0];
                return [n.responseEnd - n.startTime, n.domContentLoadedEventEnd - n.startTime];
            }""")
            edges = page.evaluate("window.awlLineage.cy.edges().length")
            print(f"graph page: {drawn} nodes, {edges} edges; in the browser: graph built "
                  f"{page.get_attribute('#lineage-graph', 'data-build-ms')} ms, laid out "
                  f"{page.get_attribute('#lineage-graph', 'data-layout-ms')} ms")
            size = len(page.content())
            print(f"load: HTML ({size / 1e6:.1f} MB) received {timing[0]:.0f} ms, "
                  f"DOM ready {timing[1]:.0f} ms, "
                  f"graph laid out and drawn {in_page:.0f} ms after navigation start "
                  f"({wall:.2f} s wall, Python side)")
            for mode in ("pan", "zoom"):
                intervals = page.evaluate(MEASURE, [args.frames, mode])
                print(f"{mode:5s} frame time: {summary(intervals)}")
            page.goto(grouped_base + path)
            page.wait_for_selector("#lineage-graph[data-ready='1']", timeout=300_000)
            print(f"the same ancestry with default limits (siblings grouped): "
                  f"{page.evaluate('window.awlLineage.cy.nodes().length')} nodes")
            browser.close()
            if errors:
                print(f"browser errors: {errors}")
                sys.exit(1)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
