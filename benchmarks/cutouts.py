"""Dependency cutouts through HTTP: the demo's sources cut out of every image that made them,
served by ``awl serve`` (a real server process on a free loopback port), against astropy's
`Cutout2D` called directly on the same files.

Prints:

1. one source (the demo's brightest clean star) with LINEAGE=backward, SODA sync over a
   keep-alive connection: the first request, then p50/p95 of N warm requests, bytes and
   extensions (goal: under 0.5 s warm for the full set);
2. the next 100 sources in a row (each asked for once): total, per-source p50/p95, bytes;
3. the source's gallery page (JSON) and its thumbnails, when the server has the gallery.

Under 1 and 2, the baseline, in this process: for each source, `Cutout2D` on each file the
service cut, at the position the source's RA/Dec has in that file's WCS, the same size as the
service's cut, written as one FITS file. It cannot place a cutout on an image without a
celestial WCS (bias, flat), so it reaches fewer images: both counts are printed.

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

import httpx
import numpy as np
from astropy.io import fits
from astropy.nddata import Cutout2D
from astropy.wcs import WCS, FITSFixedWarning

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


@dataclass
class Answer:
    seconds: float
    size: int
    files: list[tuple[str, int, tuple[int, int]]] = field(default_factory=list)
    """(file name, HDU, cut shape) of each extension."""


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
    return Answer(seconds, len(answer.content), files)


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


def timed_many(work: Callable[[], float], count: int) -> list[float]:
    return [work() for _ in range(count)]


def one_source(client: httpx.Client, url: str, folder: Path, star: Star, requests: int
               ) -> float:
    first = soda(client, url, star)
    if not first.files:
        sys.exit(f"SODA answered no cutouts for source {star.object_id}")
    warm = [soda(client, url, star) for _ in range(requests)]
    p50, p95 = percentiles([a.seconds for a in warm])
    print(f"  1. one source ({star.object_id}), SODA sync LINEAGE=backward, "
          f"{len(first.files)} extensions, {first.size:,} bytes")
    print(f"     first request {ms(first.seconds)}; warm over {requests} requests: "
          f"p50 {ms(p50)}, p95 {ms(p95)}")
    base = [baseline(folder, star, first.files) for _ in range(requests)]
    b50, b95 = percentiles([b[0] for b in base])
    print(f"     baseline Cutout2D on the same files by WCS: p50 {ms(b50)}, p95 {ms(b95)}, "
          f"{base[0][1]:,} bytes; reaches {base[0][2]} of {len(first.files)} images "
          f"(the service: {len(first.files)})")
    return p95


def many_sources(client: httpx.Client, url: str, folder: Path, stars: list[Star]) -> None:
    start = time.perf_counter()
    answers = [soda(client, url, s) for s in stars]
    total = time.perf_counter() - start
    served_ = [a for a in answers if a.files]
    p50, p95 = percentiles([a.seconds for a in served_])
    images = sum(len(a.files) for a in served_)
    size = sum(a.size for a in served_)
    print(f"  2. {len(stars)} sources in a row: {total:6.2f} s in all; per source p50 "
          f"{ms(p50)}, p95 {ms(p95)}; {images} cutouts, {size:,} bytes "
          f"({len(stars) - len(served_)} sources answered no cutout)")
    start = time.perf_counter()
    base = [baseline(folder, s, a.files) for s, a in zip(stars, answers, strict=True)
            if a.files]
    base_total = time.perf_counter() - start
    b50, b95 = percentiles([b[0] for b in base])
    print(f"     baseline: {base_total:6.2f} s in all; per source p50 {ms(b50)}, p95 "
          f"{ms(b95)}; {sum(b[2] for b in base)} of {images} images reached, "
          f"{sum(b[1] for b in base):,} bytes")


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    print("awlineage cutout benchmark: SODA through HTTP against Cutout2D by WCS")
    if args.folder is not None:
        run(args.folder.resolve(), requests, count)
        return
    with tempfile.TemporaryDirectory() as tmp:
        print(f"  (awl demo --executor serial: {make_demo(Path(tmp)):.1f} s)")
        run(Path(tmp), requests, count)


if __name__ == "__main__":
    main()
