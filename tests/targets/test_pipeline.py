"""The imaging pipeline through the framework, on both databases: the target processor pulls
every SourceList from ingested raw frames; the results match the synthetic night's truth; a
star traces back to the raw pixels of every exposure, bias and flat that made it; a changed
parameter remakes only what depends on it; a frame with no calibrations still gives sources."""

from __future__ import annotations

import numpy as np
import pytest
import sep
from astropy import units as u
from astropy.stats import sigma_clipped_stats
from astropy.wcs import WCS

from awlineage import TargetProcessor, backward, select
from awlineage.processing import State
from targets.images import read_hdu
from targets.pipeline import (
    BiasFrame,
    CoaddedRegriddedFrame,
    DomeFlatFrame,
    RawBiasFrame,
    RawDomeFlatFrame,
    RawScienceFrame,
    ReducedScienceFrame,
    ReducedScienceFrameParameters,
    RegriddedFrame,
    Source,
    SourceList,
    ingest,
)
from targets.science import read_regridded
from targets.source_lists import read_sources
from tests.targets.truth import isolated, match_to_stars

TRUNCATED = sep.OBJ_TRUNC | sep.APER_TRUNC  # cut by the coadd's edge: no fair position


def serial(**options) -> TargetProcessor:
    return TargetProcessor("serial", progress=False, **options)


def pull(night) -> object:
    ingest(night.paths)
    report = serial().make(SourceList)
    assert report.made == 35 and not report.failures(), report.summary()
    return report


def source_table(sources: SourceList) -> np.ndarray:
    found = select(Source.sourcelist == sources).order_by("number").all()
    table = np.zeros(len(found), [("x", "f8"), ("y", "f8"), ("flags", "i4"), ("flux", "f8")])
    for row, source in zip(table, found, strict=True):
        row["x"], row["y"], row["flags"], row["flux"] = source.x, source.y, source.flags, \
            source.flux
    return table


def check_positions(night, sources: SourceList) -> None:
    stars = night.truth.stars
    wcs = WCS(read_hdu(sources.coadd)[1])
    table = source_table(sources)
    index, star, distance = match_to_stars(table, wcs, stars.ra, stars.dec)
    flux = stars.flux[sources.filter]
    alone = isolated(stars.ra, stars.dec, flux, wcs, 8.0)
    bright = (flux[star] > 300) & alone[star] & ((table["flags"][index] & TRUNCATED) == 0)
    assert bright.sum() >= 20
    assert distance[bright].max() < 0.5


def check_cosmic_rays(night) -> None:
    hit = masked = 0
    for reduced in select(ReducedScienceFrame):
        mask = read_hdu(reduced, "MASK", np.uint8)[0].astype(bool)
        truth = night.truth.exposures[reduced.raw.original_name].cosmic_rays
        hit += len(truth.rows)
        masked += mask[truth.rows, truth.cols].sum()
    assert hit > 100 and masked / hit >= 0.9


def check_coadd_noise(coadd: CoaddedRegriddedFrame) -> None:
    data, count = read_hdu(coadd)[0], read_hdu(coadd, "COUNT", np.int16)[0]
    rows, cols = np.nonzero(count == count.max())
    n = int(count.max())
    coadd_noise = sigma_clipped_stats(data[rows, cols], sigma=3.0)[2]
    variances = []
    for frame in coadd.regridded_frames:
        image = read_hdu(frame)[0]
        r = rows + coadd.origin_row - frame.origin_row
        c = cols + coadd.origin_col - frame.origin_col
        inside = (r >= 0) & (r < image.shape[0]) & (c >= 0) & (c < image.shape[1])
        values = image[r[inside], c[inside]] * frame.scale
        variances.append(sigma_clipped_stats(values, sigma=3.0)[2] ** 2)
    assert n >= 3
    assert coadd_noise == pytest.approx(np.sqrt(np.mean(variances)) / np.sqrt(n), rel=0.15)


def test_source_lists_are_pulled_and_match_the_truth(db, data_server, night) -> None:
    pull(night)
    lists = select(SourceList).all()
    assert sorted(s.filter for s in lists) == ["g", "r"]
    for sources in lists:
        assert sources.nsources == select(Source.sourcelist == sources).count() > 50
        check_positions(night, sources)
        check_coadd_noise(sources.coadd)
    for bias in select(BiasFrame):
        truth = night.truth.chips[bias.chip]
        assert bias.level == pytest.approx(float(truth.bias.mean()), abs=0.1)
        assert bias.nframes == 5
    check_cosmic_rays(night)
    assert all(f.bias is not None for f in select(DomeFlatFrame))
    assert select(Source.flux > 1000).count() > 10
    plan = serial().plan(SourceList)
    assert plan.red() == [] and plan.count(State.GREEN) == 35


def _inside(raw: RawScienceFrame, star: Source, margin: float = 3.0) -> tuple[int, int] | None:
    """The star's true pixel (row, column) in a raw frame, if well inside it."""
    x, y = raw.wcs.world_to_pixel_values(star.ra, star.dec)
    rows, cols = raw.shape
    if margin <= y < rows - margin and margin <= x < cols - margin:
        return round(float(y)), round(float(x))
    return None


def test_a_star_traces_back_to_every_raw_pixel_that_made_it(db, data_server, night) -> None:
    pull(night)
    sources = select(SourceList.filter == "r").first()
    exposures = select(RawScienceFrame.filter == "r").all()
    clean = select((Source.sourcelist == sources) & (Source.flags == 0)).order_by("-flux")
    star = next(s for s in clean if sum(_inside(r, s) is not None for r in exposures) >= 3)
    found = backward(sources, [[star.number]], hdu=1)
    reached = {type(e.obj) for e in found if not e.region.is_empty()}
    assert {CoaddedRegriddedFrame, RegriddedFrame, ReducedScienceFrame, RawScienceFrame,
            BiasFrame, DomeFlatFrame, RawBiasFrame, RawDomeFlatFrame} <= reached
    for raw in exposures:  # every exposure showing the star: its true pixel is reached
        pixel = _inside(raw, star)
        if pixel is not None:
            region = found[raw]
            assert region.contains(np.array([pixel]))[0], raw.original_name
            assert region.count() < 0.1 * np.prod(raw.shape)


def test_a_coadd_reads_each_frame_only_when_it_stacks_it(db, data_server, night) -> None:
    pull(night)
    coadd = select(CoaddedRegriddedFrame).first()
    frames = sorted(coadd.regridded_frames, key=lambda f: f.raw.original_name)
    placements: list = []
    images = read_regridded(frames, frames[0].grid.sky_grid(), placements)
    first = next(images)
    assert len(placements) == 1 < len(frames)  # the stack is not read ahead
    assert placements[0] == ((frames[0].origin_row, frames[0].origin_col), first.data.shape)
    assert sum(1 for _ in images) == len(frames) - 1 and len(placements) == len(frames)


def test_a_changed_cosmic_ray_threshold_remakes_only_what_depends_on_it(db, data_server,
                                                                       night) -> None:
    pull(night)
    stricter = serial(parameters=(ReducedScienceFrameParameters(sigclip=6.0),))
    plan = stricter.plan(SourceList)
    assert {n.cls.__name__ for n in plan.red()} == {
        "ReducedScienceFrame", "RegriddedFrame", "CoaddedRegriddedFrame", "SourceList"}
    assert plan.causes() == {("ReducedScienceFrame", "sigclip 4.5 -> 6.0"): 12}
    report = stricter.make(SourceList)
    assert report.made == 28 and report.reused == 7


def test_a_frame_without_calibrations_still_becomes_a_source_list(db, data_server,
                                                                  night) -> None:
    science = [p for p in night.paths if p.name.startswith("sci_") and "ccd1" in p.name]
    ingest(science[:1])
    report = serial().make(SourceList)
    assert report.made == 5 and not report.failures(), report.summary()
    reduced = select(ReducedScienceFrame).first()
    assert reduced.bias is None and reduced.flat is None and reduced.steps == ["cosmic_rays"]
    assert any("bias" in note for note in reduced.notes)
    assert report.objects[0].nsources > 10
    table = read_sources(report.objects[0])  # a QTable with the units of TUNITn
    assert len(table) == report.objects[0].nsources
    assert table["x"].unit == u.pix and table["ra"].unit == u.deg
    assert table["flux"].unit == u.electron / u.s and table["theta"].unit == u.rad
    assert table["xmin"].dtype.kind == "i" and table["flags"].dtype.kind == "i"
    stored = select(Source.sourcelist == report.objects[0]).order_by("number").all()
    np.testing.assert_allclose(table["flux"].to_value(u.electron / u.s),
                               [s.flux for s in stored])
    demanding = serial(parameters=(ReducedScienceFrameParameters(require_bias=True),),
                       keep_going=True)
    refused = demanding.make(SourceList)  # blocked at plan time, not a failed make
    assert not refused.failures() and refused.made == 0
    (node,) = [n for n in refused.plan.nodes if n.cls is ReducedScienceFrame]
    assert node.state is State.BLOCKED
    assert [str(r) for r in node.reasons if r.kind == "blocked"] == [
        f"no master bias covers raw frame {science[0].name} (chip {reduced.chip!r}, filter "
        f"{reduced.filter!r}, taken {reduced.obs_date}), and the parameters require one "
        "(require_bias=True)"]
    assert refused.count("blocked") == 4  # the frame, regridded, coadd, source list
