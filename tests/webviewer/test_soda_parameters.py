"""What the SODA service does with each parameter it is given, through pyvo on the demo: a
parameter it does not take is refused by name, and LINEAGE does what the DataLink #cutout
descriptor says (a source is cut backward by default, LINEAGE=none keeps its coadd alone)."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest
from astropy.io import fits
from pyvo.dal import DALServiceError
from pyvo.dal.adhoc import DatalinkResults, DatalinkService

from awlineage import Database, Session, select


@pytest.fixture(scope="module")
def source(demo_folder: Path) -> tuple[int, int]:
    """The demo's brightest clean source: its id and its coadd's."""
    from targets.source_lists import Source

    db = Database(f"sqlite:///{demo_folder}/awlineage.db", read_only=True)
    session = Session(db, str(demo_folder / "awl-data"))
    with session.activate():
        found = max(select(Source.flags == 0).all(), key=lambda s: s.flux)
        ids = found.object_id, found.sourcelist.coadd.object_id
    session.close()
    return ids


def _cutout(demo_url: str, object_id: int):
    links = DatalinkService(f"{demo_url}/datalink/links").run_sync(str(object_id))
    return links, next(links.bysemantics("#cutout", include_narrower=False))


def _fits(stream) -> fits.HDUList:
    return fits.open(io.BytesIO(stream.read()))


def _classes(hdul: fits.HDUList) -> list[str]:
    return [h.header["AWLCLASS"].rpartition(".")[2] for h in hdul[1:]]


def test_a_parameter_the_service_does_not_take_is_refused_by_name(demo_url, source) -> None:
    _, coadd = source
    _, cutout = _cutout(demo_url, coadd)
    with pytest.raises(DALServiceError, match="UsageError: parameter FOO is not taken"):
        cutout.processed(pixel=[10, 20, 10, 20], foo="1")
    two = httpx.post(f"{demo_url}/soda/sync", data={"ID": str(coadd), "PIXEL": "10 20 10 20",
                                                    "circel": "1 2 3", "Lineag": "none"})
    assert two.status_code == 400 and two.text.startswith("UsageError: parameters ")
    assert "CIRCEL" in two.text and "LINEAG" in two.text


def test_dalis_runid_is_taken_and_bounded(demo_url, source) -> None:
    _, coadd = source
    _, cutout = _cutout(demo_url, coadd)
    assert len(_fits(cutout.processed(pixel=[10, 20, 10, 20], runid="job-7"))) == 2
    long = httpx.get(f"{demo_url}/soda/sync", params={"ID": coadd, "RUNID": "x" * 65})
    assert long.status_code == 400 and long.text.startswith("UsageError: RUNID")


def test_lineage_none_cuts_a_source_out_of_its_coadd_alone(demo_url, source) -> None:
    star, coadd = source
    _, cutout = _cutout(demo_url, star)
    alone = _fits(cutout.processed(lineage="none"))
    assert _classes(alone) == ["CoaddedRegriddedFrame"]
    assert alone[1].header["AWLOBJID"] == coadd
    assert alone[0].header["AWLREQ"].endswith("LINEAGE=none")
    boxed = _fits(cutout.processed(pixel=[60, 70, 260, 270], lineage="none"))
    assert _classes(boxed) == ["CoaddedRegriddedFrame"]


def test_a_source_is_cut_backward_by_default_and_the_file_says_so(demo_url, source) -> None:
    star, _ = source
    _, cutout = _cutout(demo_url, star)
    for asked in ({}, {"pixel": [60, 70, 260, 270]}):
        hdul = _fits(cutout.processed(**asked))
        assert hdul[0].header["AWLREQ"].endswith("LINEAGE=backward"), asked
        assert {"RegriddedFrame", "RawScienceFrame", "BiasFrame"} <= set(_classes(hdul))
    corner = _fits(cutout.processed(pixel=[1, 5, 1, 5]))  # coadd pixels no frame reaches
    assert _classes(corner) == ["CoaddedRegriddedFrame"]
    assert corner[0].header["AWLREQ"] == "PIXEL=1 5 1 5 LINEAGE=backward"
    assert "places this region on no ancestor image" in str(corner[0].header["COMMENT"])


def test_the_cutout_descriptor_describes_lineage_as_the_service_does_it(demo_url,
                                                                        source) -> None:
    star, _ = source
    links, cutout = _cutout(demo_url, star)
    lineage = next(" ".join(p.description.split())
                   for p in links.get_adhocservice_by_id("soda").groups[0].entries
                   if p.name == "LINEAGE")
    assert "default for a source" in lineage
    assert "none: the image alone, or a source's coadd alone" in lineage
    assert "LINEAGE=none" in cutout.description and "always" not in cutout.description
    assert isinstance(links, DatalinkResults)


def test_an_hdu_is_refused_alike_for_a_source_and_for_an_image_without_it(demo_url,
                                                                         source) -> None:
    star, coadd = source
    _, star_cutout = _cutout(demo_url, star)
    with pytest.raises(DALServiceError, match=rf"UsageError: HDU 7: Source {star} is not an "
                       rf"image; it stands for cells of HDU .* of SourceList \d+, which are cut"):
        star_cutout.processed(hdu=7)
    with pytest.raises(DALServiceError, match="UsageError: HDU 0: Source"):
        star_cutout.processed(hdu=0, lineage="none")
    _, coadd_cutout = _cutout(demo_url, coadd)
    with pytest.raises(DALServiceError, match=r"UsageError: .*HDU 7"):
        coadd_cutout.processed(hdu=7)
    assert len(_fits(coadd_cutout.processed(hdu=0, pixel=[10, 20, 10, 20]))) == 2


def test_the_primary_header_names_the_object_asked_for_as_the_extensions_name_theirs(
        demo_url, source) -> None:
    star, coadd = source
    _, cutout = _cutout(demo_url, star)
    hdul = _fits(cutout.processed(lineage="none"))
    primary, cut = hdul[0].header, hdul[1].header
    assert (primary["AWLOBJID"], primary["AWLCLASS"]) == (star, "targets.Source")
    assert (cut["AWLOBJID"], cut["AWLCLASS"]) == (coadd, "targets.CoaddedRegriddedFrame")
    assert f"Cutouts for targets.Source {star}: each extension is a cut of the " \
           "image its own AWLOBJID and AWLCLASS name" in "".join(primary["COMMENT"])
