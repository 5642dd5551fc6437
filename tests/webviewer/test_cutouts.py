"""The dependency cutout service against the demo, through a real VO client: pyvo reads the
DataLink links of the brightest star, calls the SODA service they describe, and the FITS it
gets holds the star on every image that made it."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import httpx
import numpy as np
import pytest
from astropy import units as u
from astropy.io import fits
from astropy.wcs import WCS
from pyvo.dal.adhoc import DatalinkResults, DatalinkService

from awlineage import Database, Session, get_dependencies, select
from tests.commands import run_awl
from tests.webviewer.datalink import datalink_links


@pytest.fixture(scope="module")
def star(demo_folder: Path):
    """The demo's brightest clean source (loaded, with its source list's id)."""
    from targets.source_lists import Source

    db = Database(f"sqlite:///{demo_folder}/awlineage.db", read_only=True)
    session = Session(db, str(demo_folder / "awl-data"))
    with session.activate():
        found = max(select(Source.flags == 0).all(), key=lambda s: s.flux)
        reduced = {}
        from targets.science import ReducedScienceFrame
        for frame in select(ReducedScienceFrame.object_id > 0).all():
            deps = get_dependencies(frame)
            reduced[deps["raw"].object_id] = {deps["bias"].object_id, deps["flat"].object_id}
        yield found, found.sourcelist.object_id, reduced
    session.close()


def test_pyvo_cuts_the_star_out_of_every_image_that_made_it(demo_url, star) -> None:
    source, _, used_calibrations = star
    links = datalink_links(demo_url, source.object_id)
    cutout = next(links.bysemantics("#cutout", include_narrower=False))
    stream = cutout.processed(circle=(source.ra * u.deg, source.dec * u.deg, 2 * u.arcsec))
    hdul = fits.open(io.BytesIO(stream.read()))
    cuts = hdul[1:]
    classes = [h.header["AWLCLASS"].rpartition(".")[2] for h in cuts]
    assert classes[0] == "CoaddedRegriddedFrame"
    for name in ("RegriddedFrame", "ReducedScienceFrame", "RawScienceFrame", "BiasFrame",
                 "DomeFlatFrame", "RawBiasFrame", "RawDomeFlatFrame"):
        assert name in classes
    keys = [(h.header["AWLOBJID"], h.header["AWLHDU"]) for h in cuts]
    assert len(set(keys)) == len(keys)  # one extension per ancestor image array
    science = [h for h in cuts if WCS(h.header).has_celestial]
    assert {h.header["AWLCLASS"].rpartition(".")[2] for h in science} == {
        "CoaddedRegriddedFrame", "RegriddedFrame", "ReducedScienceFrame", "RawScienceFrame"}
    for h in science:  # the star's peak is in the cutout, where the WCS puts the source
        x, y = WCS(h.header).celestial.world_to_pixel_values(source.ra, source.dec)
        data = h.data.astype(float)
        row, column = np.unravel_index(np.argmax(_near(data, x, y, 4)), data.shape)
        assert abs(column - x) <= 1.0 and abs(row - y) <= 1.0, h.header["AWLCLASS"]
        assert data[row, column] > np.median(data) + 10 * _mad(data)
    boxes = {h.header["AWLOBJID"]: _box(h) for h in cuts}
    raw = [h.header["AWLOBJID"] for h in science
           if h.header["AWLCLASS"].endswith("RawScienceFrame")]
    for h in cuts:
        if h.header["AWLCLASS"].rpartition(".")[2] in ("BiasFrame", "DomeFlatFrame"):
            users = [r for r in raw if h.header["AWLOBJID"] in used_calibrations[r]]
            assert users and boxes[h.header["AWLOBJID"]] == _union([boxes[r] for r in users])


def _near(data: np.ndarray, x: float, y: float, reach: int) -> np.ndarray:
    """`data` with everything farther than `reach` pixels from (x, y) set to -inf: a raw
    cutout also holds the cosmic rays around the star that reduction removed."""
    rows, columns = np.indices(data.shape)
    return np.where((abs(rows - y) <= reach) & (abs(columns - x) <= reach), data, -np.inf)


def _mad(data: np.ndarray) -> float:
    return float(np.median(abs(data - np.median(data))))


def _box(hdu: fits.ImageHDU) -> tuple[int, int, int, int]:
    return tuple(hdu.header[k] for k in ("AWLX0", "AWLX1", "AWLY0", "AWLY1"))


def _union(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    return (min(b[0] for b in boxes), max(b[1] for b in boxes), min(b[2] for b in boxes),
            max(b[3] for b in boxes))


def test_progenitor_links_walk_from_a_source_list_down_to_raw_frames(demo_url, star) -> None:
    _, sourcelist_id, _ = star
    seen: dict[str, str] = {}
    frontier = [f"{demo_url}/datalink/links?ID={sourcelist_id}"]
    raw_files = []
    while frontier:
        url = frontier.pop()
        links = DatalinkResults.from_result_url(url)
        for row in links.bysemantics("#progenitor", include_narrower=False):
            name = row.description.rpartition(": ")[2]
            if "Parameters" in name or row.access_url in seen:
                continue
            seen[row.access_url] = name
            if name.startswith("RawScienceFrame"):
                this = next(DatalinkResults.from_result_url(row.access_url).bysemantics(
                    "#this", include_narrower=False))
                raw_files.append(this.access_url)
            else:
                frontier.append(row.access_url)
    names = {name.split()[0] for name in seen.values()}
    assert {"CoaddedRegriddedFrame", "RegriddedFrame", "ReducedScienceFrame",
            "RawScienceFrame", "BiasFrame", "DomeFlatFrame"} <= names
    assert raw_files and all(u_.startswith(f"{demo_url}/obj/") and u_.endswith("/file")
                             for u_ in raw_files)


def test_links_of_unknown_and_malformed_ids_are_fault_rows(demo_url) -> None:
    answer = httpx.get(f"{demo_url}/datalink/links", params=[("ID", "42"), ("ID", "x<1>")])
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/x-votable+xml")
    links = datalink_links(demo_url, 42)
    assert next(iter(links)).error_message.startswith("NotFoundFault: ")
    bad = DatalinkService(f"{demo_url}/datalink/links").run_sync("x<1>")
    row = next(iter(bad))
    assert row.error_message.startswith("UsageFault: ") and row.semantics == "#this"
    assert bad.votable.resources[0].infos[0].value == "ivo://ivoa.net/std/DataLink#links-1.1"


def test_soda_errors_are_text_and_no_overlap_is_204(demo_url, star) -> None:
    source, sourcelist_id, _ = star
    sync = f"{demo_url}/soda/sync"
    missing = httpx.get(sync, params={"CIRCLE": "1 2 3"})
    assert missing.status_code == 400 and missing.text.startswith("UsageError: ")
    assert "ID" in missing.text
    bad = httpx.get(sync, params={"ID": source.object_id, "CIRCLE": "1 2"})
    assert bad.status_code == 400 and bad.text.startswith("UsageError: CIRCLE")
    assert bad.headers["content-type"].startswith("text/plain")
    two = httpx.post(sync, data={"ID": str(source.object_id), "POS": "CIRCLE 1 2 0.1",
                                 "PIXEL": "1 2 1 2"})
    assert two.status_code == 400 and "one region" in two.text
    unknown = httpx.get(sync, params={"ID": "42"})
    assert unknown.status_code == 404 and unknown.text.startswith("UsageError: ")
    far = httpx.get(sync, params={"ID": source.object_id, "POS": "CIRCLE 10 -40 0.001"})
    assert far.status_code == 204 and far.content == b""
    table = httpx.get(sync, params={"ID": sourcelist_id})
    assert table.status_code == 400 and "2-d image" in table.text



@pytest.mark.parametrize("pos", ["CIRCLE {ra} {dec} 120", "RANGE 0 360 -90 90",
                                 "RANGE -Inf +Inf -Inf +Inf"])
def test_a_shape_larger_than_a_hemisphere_cuts_the_whole_coadd(demo_url, demo_folder, star,
                                                               pos) -> None:
    from astropy.nddata import Cutout2D

    source, _, _ = star
    coadd = source.sourcelist.coadd
    links = datalink_links(demo_url, coadd.object_id)
    cutout = next(links.bysemantics("#cutout", include_narrower=False))
    stream = cutout.processed(pos=pos.format(ra=source.ra, dec=source.dec), lineage="none")
    cut = fits.open(io.BytesIO(stream.read()))[1]
    with fits.open(demo_folder / "awl-data" / coadd.filename) as stored:
        whole = Cutout2D(stored[0].data, (stored[0].data.shape[1] / 2 - 0.5,
                                          stored[0].data.shape[0] / 2 - 0.5),
                         stored[0].data.shape, mode="strict")
        assert np.array_equal(cut.data, whole.data, equal_nan=True)


def test_soda_limits_are_usage_errors(demo_folder, star) -> None:
    from starlette.testclient import TestClient

    from webviewer import Limits, create_app

    source, _, _ = star
    app = create_app(f"sqlite:///{demo_folder}/awlineage.db",
                     data_url=str(demo_folder / "awl-data"), limits=Limits(cutout_images=3))
    with TestClient(app) as client:
        answer = client.get("/soda/sync", params={"ID": source.object_id})
    assert answer.status_code == 400 and answer.text.startswith("UsageError: ")
    assert "limit is 3" in answer.text


def test_awl_cutout_writes_the_same_cutouts_without_a_server(demo_folder, star,
                                                             tmp_path) -> None:
    source, _, _ = star
    out = tmp_path / "star.fits"
    done = run_awl(None, "cutout", str(source.object_id), "--radius", "2arcsec", "-o",
                   str(out), cwd=demo_folder)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr  # astropy truncated the request card's comment
    with fits.open(out) as hdul:
        assert hdul[1].header["AWLCLASS"].endswith("CoaddedRegriddedFrame")
        assert len(hdul) > 10
        assert hdul[0].header["AWLREQ"].endswith(" 0.0005556 LINEAGE=backward")
    wrong = run_awl(None, "cutout", str(source.object_id), "--radius", "2", "-o",
                    str(tmp_path / "x.fits"), cwd=demo_folder)
    assert wrong.returncode == 2
    assert wrong.stderr.count("\n") == 1 and "not an angle with a unit" in wrong.stderr
    before = out.read_bytes()
    again = run_awl(None, "cutout", str(source.object_id), "--radius", "2arcsec", "-o",
                    str(out), cwd=demo_folder)
    assert again.returncode == 2
    assert again.stderr.strip().endswith(f"{out} exists: pass --overwrite to replace it")
    assert out.read_bytes() == before
    replaced = run_awl(None, "cutout", str(source.object_id), "--radius", "2arcsec", "-o",
                       str(out), "--overwrite", cwd=demo_folder)
    assert replaced.returncode == 0, replaced.stderr


def test_awl_cutout_says_a_negative_radius_is_not_a_radius(demo_folder, star,
                                                           tmp_path) -> None:
    source, _, _ = star
    for given in (["--radius", "-3arcsec"], ["--radius=-3arcsec"]):
        done = run_awl(None, "cutout", str(source.object_id), *given, "-o",
                       str(tmp_path / "x.fits"), cwd=demo_folder)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, given
        assert "--radius '-3arcsec': a radius must be positive" in done.stderr, given
    alone = run_awl(None, "cutout", str(source.object_id), "--pixels", "1", "5", "1", "5",
                    "--center", "150 2", "-o", str(tmp_path / "x.fits"), cwd=demo_folder)
    assert alone.returncode == 2 and "--center is the centre of --radius" in alone.stderr
    assert not (tmp_path / "x.fits").exists()


def test_awl_cutout_lineage_none_keeps_a_source_to_its_coadd(demo_folder, star,
                                                              tmp_path) -> None:
    source, _, _ = star
    out = tmp_path / "coadd.fits"
    done = run_awl(None, "cutout", str(source.object_id), "--lineage", "none", "-o", str(out),
                   cwd=demo_folder)
    assert done.returncode == 0, done.stderr
    with fits.open(out) as hdul:
        assert [h.header["AWLCLASS"].rpartition(".")[2] for h in hdul[1:]] == [
            "CoaddedRegriddedFrame"]


def test_the_cli_reference_shows_every_option_of_awl_cutout() -> None:
    usage = run_awl(None, "cutout", "--help").stdout.split("\n\n")[0]
    reference = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    lines = reference.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("awl cutout "))
    synopsis = " ".join([lines[first], *itertools.takewhile(
        lambda line: line.startswith(" "), lines[first + 1:])])

    def options(text: str) -> set[str]:
        words = (word.strip("[]|{}(),") for word in text.split())
        return {word for word in words if word.startswith("-") and word != "-h"}

    assert options(synopsis) == options(usage)
