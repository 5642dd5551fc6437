"""Dependency cutouts through HTTP: the demo's sources cut out of every image that made them,
served by ``awl serve`` (a real server process on a free loopback port), against the same boxes
sliced out of the same files in this process (equal work) and astropy's `Cutout2D` called
directly on the same files by WCS (not equal work), each alternated with the requests.

Prints:

1. one source (the demo's brightest clean star) with LINEAGE=backward, SODA sync over a
   keep-alive connection: the first request, then p50/p95 of N warm requests, bytes and
   extensions (goal: under 0.5 s warm for the full set);
2. the next 100 sources in a row (each asked for once): total, per-source p50/p95, bytes;
3. the source's gallery page (JSON) and its thumbnails, when the server has the gallery.

Under 1 and 2, two baselines in this process, each call alternated with the service's
requests (the order of the three reversed every other request under 1; under 2 the request
first, as the baselines need its answer, then the two baselines in turn):

- equal work: the boxes the service cut (its answer's ``AWLX0..AWLY1``), sliced out of the
  same files, the WCS moved to the cut, written as one FITS file: the same images and pixels
  without HTTP and without the lineage query; printed with the ratio service / slices taken
  request by request, median (min-max);
- not equal work, labelled so: `Cutout2D` on each file the service cut, at the position the
  source's RA/Dec has in that file's WCS, the same size as the service's cut, written as one
  FITS file (what one does without lineage). It cannot place a cutout on an image without a
  celestial WCS (bias, flat), so it reaches fewer images: both counts are printed.

The load average is printed before and after.

Usage: python benchmarks/cutouts.py [--requests N] [--sources N] [--folder DIR] [--quick]
The server runs with this repository on PYTHONPATH, or with PYTHONPATH as given.
"""

from __future__ import annotations

import argparse
import io
import os
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from astropy.io import fits
from astropy.nddata import Cutout2D
from astropy.wcs import WCS, FITSFixedWarning
from benchmark_support import load_average, ratio_spread

REPO = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 0.5
"""One source's full set of cutouts, warm, through HTTP."""


def awl(*args: str, cwd: Path, env: dict[str, str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "awlineage.cli", *args], cwd=cwd, env=env,
                            **kwargs)


def server_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH") or str(REPO))


def make_demo(folder: Path) -> float:
    start = time.perf_counter()
    done = awl("demo", "--executor", "serial", "--colour", "never", cwd=folder,
               env=server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = done.communicate(timeout=900)
    if done.returncode != 0:
        sys.exit(f"awl demo failed:\n{err.decode()[-2000:]}")
    return time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """``awl serve`` on the demo folder: its base URL while it runs."""
    port = free_port()
    process = awl("serve", "--port", str(port), cwd=folder, env=server_env(),
                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                sys.exit(f"awl serve stopped:\n{process.stderr.read().decode()[-2000:]}")
            try:
                if httpx.get(f"{url}/classes", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                sys.exit("awl serve did not answer within 60 s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@dataclass
class Star:
    object_id: int
    ra: float
    dec: float


def demo_sources(folder: Path, count: int) -> list[Star]:
    """The brightest clean source first, then the next `count` by flux."""
    sys.path.insert(0, str(REPO))
    import targets.pipeline  # noqa: F401  the demo's classes
    from awlineage import Database, Session, select
    from targets.source_lists import Source

    session = Session(Database(f"sqlite:///{folder}/awlineage.db", read_only=True),
                      str(folder / "awl-data"))
    with session:
        first = select(Source.flags == 0).order_by(Source.flux.desc()).first()
        rest = select(Source.object_id != first.object_id).order_by(Source.flux.desc())
        found = [first, *rest.all()[:count]]
        stars = [Star(s.object_id, s.ra, s.dec) for s in found]
    session.close()
    return stars


Box = tuple[int, int, int, int]
"""First and last row, first and last column of a cut (0-based, inclusive)."""


@dataclass
class Answer:
    seconds: float
    size: int
    files: list[tuple[str, int, tuple[int, int]]] = field(default_factory=list)
    """(file name, HDU, cut shape) of each extension."""
    boxes: list[tuple[str, int, Box]] = field(default_factory=list)
    """(file name, HDU, box cut) of each extension."""


def soda(client: httpx.Client, url: str, star: Star) -> Answer:
    start = time.perf_counter()
    answer = client.get(f"{url}/soda/sync", params={"ID": star.object_id,
                                                     "LINEAGE": "backward"})
    seconds = time.perf_counter() - start
    if answer.status_code != 200:
        return Answer(seconds, 0)
    with fits.open(io.BytesIO(answer.content)) as hdul:
        files = [(h.header["AWLFILE"], int(h.header["AWLHDU"]), h.data.shape)
                 for h in hdul[1:]]
        boxes = [(h.header["AWLFILE"], int(h.header["AWLHDU"]),
                  (h.header["AWLY0"] - 1, h.header["AWLY1"] - 1, h.header["AWLX0"] - 1,
                   h.header["AWLX1"] - 1)) for h in hdul[1:]]
    return Answer(seconds, len(answer.content), files, boxes)


def same_boxes(folder: Path, boxes: list[tuple[str, int, Box]]) -> tuple[float, int, int]:
    """(seconds, bytes, images cut): the service's boxes sliced out of the same files, each
    with its header and its WCS moved to the cut, written as one FITS file (the service's
    work without HTTP and without the lineage query)."""
    start = time.perf_counter()
    hdus: list[fits.PrimaryHDU | fits.ImageHDU] = [fits.PrimaryHDU()]
    for name, hdu, (r0, r1, c0, c1) in boxes:
        with fits.open(folder / "awl-data" / name) as hdul:
            header = hdul[hdu].header.copy()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FITSFixedWarning)
                wcs = WCS(header)
            if wcs.has_celestial:
                header.update(wcs.slice((slice(r0, r1 + 1), slice(c0, c1 + 1))).to_header())
            hdus.append(fits.ImageHDU(np.asarray(hdul[hdu].data[r0:r1 + 1, c0:c1 + 1]),
                                      header=header))
    out = io.BytesIO()
    fits.HDUList(hdus).writeto(out)
    return time.perf_counter() - start, len(out.getvalue()), len(hdus) - 1


def baseline(folder: Path, star: Star, files: list[tuple[str, int, tuple[int, int]]]
             ) -> tuple[float, int, int]:
    """(seconds, bytes, images reached): Cutout2D at the star's WCS position in each file."""
    start = time.perf_counter()
    hdus: list[fits.PrimaryHDU | fits.ImageHDU] = [fits.PrimaryHDU()]
    for name, hdu, shape in files:
        with fits.open(folder / "awl-data" / name) as hdul:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FITSFixedWarning)
                wcs = WCS(hdul[hdu].header)
            if not wcs.has_celestial:
                continue  # a bias or a flat: no sky position to cut at
            x, y = wcs.celestial.world_to_pixel_values(star.ra, star.dec)
            rows, columns = hdul[hdu].shape
            if not (0 <= x < columns and 0 <= y < rows):
                continue
            cut = Cutout2D(hdul[hdu].data, (float(x), float(y)), shape, wcs=wcs, mode="trim")
            header = hdul[hdu].header.copy()
            header.update(cut.wcs.to_header())
            hdus.append(fits.ImageHDU(cut.data, header=header))
    out = io.BytesIO()
    fits.HDUList(hdus).writeto(out)
    return time.perf_counter() - start, len(out.getvalue()), len(hdus) - 1


def percentiles(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:7.1f} ms"


def alternated(sides: dict[str, Callable[[], Any]], index: int) -> dict[str, Any]:
    """Each of `sides` called once, in the order given when `index` is even, else reversed."""
    names = list(sides) if index % 2 == 0 else list(sides)[::-1]
    return {name: sides[name]() for name in names}


def print_baselines(service: list[float], boxes: list[tuple[float, int, int]],
                    wcs: list[tuple[float, int, int]], images: int, repeated: bool) -> None:
    """The two baselines' lines under a row of the service's figures: `boxes` and `wcs` are
    (seconds, bytes, images) of the calls alternated with the service's `service` seconds;
    bytes and images of one call when the calls repeat the same cut (`repeated`), else their
    sums."""
    def size(calls: list[tuple[float, int, int]]) -> tuple[int, int]:
        if repeated:
            return calls[0][1], calls[0][2]
        return sum(c[1] for c in calls), sum(c[2] for c in calls)

    s50, s95 = percentiles([b[0] for b in boxes])
    cut, cut_images = size(boxes)
    print(f"     equal work, the service's boxes of the same {cut_images} images sliced in "
          f"this process (no HTTP, no lineage query), alternated: p50 {ms(s50)}, p95 "
          f"{ms(s95)}, {cut:,} bytes; service / slices "
          f"{ratio_spread(service, [b[0] for b in boxes])}x (median (min-max) of the pairs)")
    b50, b95 = percentiles([b[0] for b in wcs])
    cut, reached = size(wcs)
    print(f"     baseline Cutout2D on the same files by WCS, in this process, alternated "
          f"(not equal work: no HTTP, no lineage, images without a sky WCS left out): p50 "
          f"{ms(b50)}, p95 {ms(b95)}, {cut:,} bytes; reaches {reached} of {images} images "
          f"(the service: {images})")


def one_source(client: httpx.Client, url: str, folder: Path, star: Star, requests: int
               ) -> float:
    first = soda(client, url, star)
    if not first.files:
        sys.exit(f"SODA answered no cutouts for source {star.object_id}")
    warm: list[Answer] = []
    boxes: list[tuple[float, int, int]] = []
    wcs: list[tuple[float, int, int]] = []
    for index in range(requests):
        done = alternated({"service": lambda: soda(client, url, star),
                           "boxes": lambda: same_boxes(folder, first.boxes),
                           "wcs": lambda: baseline(folder, star, first.files)}, index)
        warm.append(done["service"])
        boxes.append(done["boxes"])
        wcs.append(done["wcs"])
    p50, p95 = percentiles([a.seconds for a in warm])
    print(f"  1. one source ({star.object_id}), SODA sync LINEAGE=backward, "
          f"{len(first.files)} extensions, {first.size:,} bytes")
    print(f"     first request {ms(first.seconds)}; warm over {requests} requests: "
          f"p50 {ms(p50)}, p95 {ms(p95)}")
    print_baselines([a.seconds for a in warm], boxes, wcs, len(first.files), repeated=True)
    return p95


def many_sources(client: httpx.Client, url: str, folder: Path, stars: list[Star]) -> None:
    answers: list[Answer] = []
    boxes: list[tuple[float, int, int]] = []
    wcs: list[tuple[float, int, int]] = []
    for index, star in enumerate(stars):
        answer = soda(client, url, star)
        answers.append(answer)
        if answer.files:
            done = alternated({"boxes": lambda a=answer: same_boxes(folder, a.boxes),
                               "wcs": lambda a=answer, s=star: baseline(folder, s, a.files)},
                              index)
            boxes.append(done["boxes"])
            wcs.append(done["wcs"])
    served_ = [a for a in answers if a.files]
    p50, p95 = percentiles([a.seconds for a in served_])
    images = sum(len(a.files) for a in served_)
    size = sum(a.size for a in served_)
    print(f"  2. {len(stars)} sources in a row: {sum(a.seconds for a in answers):6.2f} s in "
          f"all (the requests' times); per source p50 {ms(p50)}, p95 {ms(p95)}; {images} "
          f"cutouts, {size:,} bytes ({len(stars) - len(served_)} sources answered no cutout)")
    print(f"     baselines in all: equal work {sum(b[0] for b in boxes):6.2f} s, by WCS "
          f"{sum(b[0] for b in wcs):6.2f} s")
    print_baselines([a.seconds for a in served_], boxes, wcs, images, repeated=False)


def gallery(client: httpx.Client, url: str, star: Star, requests: int) -> None:
    page = client.get(f"{url}/obj/{star.object_id}/gallery", params={"format": "json"})
    if page.status_code != 200:
        print(f"  3. gallery: not served by this version ({page.status_code})")
        return
    pages, thumbs, size = [], [], 0
    for _ in range(max(3, requests // 3)):
        start = time.perf_counter()
        data = client.get(f"{url}/obj/{star.object_id}/gallery",
                          params={"format": "json"}).json()
        pages.append(time.perf_counter() - start)
        start = time.perf_counter()
        size = sum(len(client.get(url + i["thumbnail_url"]).content) for i in data["images"])
        thumbs.append(time.perf_counter() - start)
    p50, _ = percentiles(pages)
    t50, _ = percentiles(thumbs)
    print(f"  3. gallery of that source: page (JSON) p50 {ms(p50)}; its "
          f"{len(data['images'])} thumbnails one after another p50 {ms(t50)}, {size:,} bytes")


def run(folder: Path, requests: int, count: int) -> None:
    stars = demo_sources(folder, count)
    with served(folder) as url, httpx.Client(timeout=60) as client:
        p95 = one_source(client, url, folder, stars[0], requests)
        many_sources(client, url, folder, stars[1:])
        gallery(client, url, stars[0], requests)
    verdict = "met" if p95 < GOAL_SECONDS else "NOT met"
    print(f"\n  goal: one source's full set of cutouts in under {GOAL_SECONDS} s warm "
          f"(p95 {p95:.3f} s): {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30,
                        help="warm requests for one source (default 30)")
    parser.add_argument("--sources", type=int, default=100,
                        help="sources asked for in a row (default 100)")
    parser.add_argument("--folder", type=Path,
                        help="a folder where `awl demo` has run (default: run it in a temp)")
    parser.add_argument("--quick", action="store_true",
                        help="5 warm requests and 10 sources")
    args = parser.parse_args()
    requests, count = (5, 10) if args.quick else (args.requests, args.sources)
    print("awlineage cutout benchmark: SODA through HTTP against the same boxes sliced in "
          "process, and Cutout2D by WCS")
    print(f"  before: {load_average()}")
    if args.folder is not None:
        run(args.folder.resolve(), requests, count)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"  (awl demo --executor serial: {make_demo(Path(tmp)):.1f} s)")
            run(Path(tmp), requests, count)
    print(f"  after: {load_average()}")


if __name__ == "__main__":
    main()
