"""The pipeline's products found on the sky and in time, on both databases: after the synthetic
night is processed, "which frames cover this position?" gives exactly the raw, reduced,
regridded and coadded frames whose pixels (by the WCS and shape in their own files) hold it; a
star's source is found in a cone around it; the master calibrations whose validity contains a
frame's date are those the processor could choose. Real files get footprints at ingest, one per
extension, and a WCS that gives none does not stop ingest."""

from __future__ import annotations

import datetime
import warnings
from pathlib import Path

import numpy as np
from astropy import units as u
from astropy.coordinates import SkyCoord
from astropy.io import fits
from astropy.wcs import WCS, FITSFixedWarning

from awlineage import Circle, Interval, TargetProcessor, select
from targets.pipeline import (
    BiasFrame,
    CoaddedRegriddedFrame,
    DomeFlatFrame,
    RawScienceFrame,
    ReducedScienceFrame,
    RegriddedFrame,
    Source,
    SourceList,
    ingest,
)
from targets.real_files import REAL_FILES
from tests.targets.test_overscan import (
    ORIGIN,
    OVERSCAN_COLUMNS,
    ROWS,
    TRIMMED,
    synthetic_chip,
)

EDGE = 1e-3
"""Pixels this close to a frame's edge are left out: which side of it they fall is rounding."""


def pixel_area_holds(obj, position: SkyCoord) -> bool | None:
    """Whether the pixels of `obj`'s file (primary HDU) hold `position`, by its header's WCS
    and its shape; None when it is within `EDGE` of the edge."""
    with obj.open_fits(memmap=False) as hdul:
        header, (rows, cols) = hdul[0].header, hdul[0].data.shape
    with warnings.catch_warnings():  # old-style dates in real headers
        warnings.simplefilter("ignore", FITSFixedWarning)
        wcs = WCS(header).celestial
    x, y = wcs.world_to_pixel(position)
    x, y = float(x), float(y)
    distance = min(x + 0.5, cols - 0.5 - x, y + 0.5, rows - 0.5 - y)
    if abs(distance) < EDGE:
        return None
    return distance > 0


def ids(objects) -> set[int]:
    return {o.object_id for o in objects}


def check_frames_covering(night, classes: list[type]) -> int:
    """For stars of the truth (and points beside the field), every class's footprint query
    gives exactly the frames whose pixels hold the position. Returns the positions checked
    that some frame covers."""
    stars = night.truth.stars
    rng = np.random.default_rng(5)
    chosen = rng.choice(len(stars.ra), size=min(12, len(stars.ra)), replace=False)
    positions = [SkyCoord(stars.ra[i], stars.dec[i], unit="deg") for i in chosen]
    positions.append(SkyCoord(float(stars.ra.mean()) + 2.0, float(stars.dec.mean()),
                              unit="deg"))  # off the field: nothing covers it
    covered = 0
    for cls in classes:
        frames = select(cls).all()
        assert frames and all(f.footprint is not None for f in frames), cls.__name__
        for position in positions:
            holds = {f.object_id: pixel_area_holds(f, position) for f in frames}
            if None in holds.values():
                continue
            expected = {i for i, inside in holds.items() if inside}
            assert ids(select(cls.footprint.contains(position))) == expected, \
                (cls.__name__, position)
            covered += bool(expected)
    return covered


def check_cone_finds_sources(night) -> None:
    """A cone of 2 arcsec around a bright star holds its source, and exactly the sources
    whose ra and dec are within 2 arcsec of it."""
    stars = night.truth.stars
    brightest = int(np.argmax(stars.flux["r"]))
    star = SkyCoord(stars.ra[brightest], stars.dec[brightest], unit="deg")
    found = select(Source.position.within(Circle(star, 2 * u.arcsec))).all()
    every = select(Source).all()
    where = SkyCoord([s.ra for s in every], [s.dec for s in every], unit="deg")
    near = {s.object_id for s, d in zip(every, star.separation(where), strict=True)
            if d < 2 * u.arcsec}
    assert near and ids(found) == near
    assert {s.sourcelist.filter for s in found} == {"g", "r"}  # the star in both coadds
    for source in found:
        assert source.position.separation(SkyCoord(source.ra, source.dec, unit="deg")) \
            < 1e-6 * u.arcsec


def check_validity_of_masters() -> None:
    """The masters whose validity contains a reduced frame's date are those of its night
    (the night widened by a day each side) and include the ones the processor chose; none
    is valid a week later."""
    for reduced in select(ReducedScienceFrame):
        when = reduced.obs_date
        for cls, chosen, same in ((BiasFrame, reduced.bias, ("chip",)),
                                  (DomeFlatFrame, reduced.flat, ("chip", "filter"))):
            valid = select(cls.validity.contains(when)).all()
            expected = {m.object_id for m in select(cls) if m.night - datetime.timedelta(
                days=1) <= when < m.night + datetime.timedelta(days=2)}
            assert ids(valid) == expected
            usable = [m for m in valid if all(getattr(m, k) == getattr(reduced, k)
                                              for k in same)]
            assert chosen is not None and [m.object_id for m in usable] == [chosen.object_id]
            assert not select(cls.validity.contains(when + datetime.timedelta(days=7))
                              ).exists()
            assert select(cls.validity.overlaps(
                Interval(when, when + datetime.timedelta(seconds=1)))).count() == len(valid)


def test_frames_sources_and_calibrations_are_found_on_the_sky_and_in_time(db, data_server,
                                                                        night) -> None:
    ingest(night.paths)
    report = TargetProcessor("serial", progress=False).make(SourceList)
    assert not report.failures(), report.summary()
    covered = check_frames_covering(night, [RawScienceFrame, ReducedScienceFrame,
                                            RegriddedFrame, CoaddedRegriddedFrame])
    assert covered >= 20
    check_cone_finds_sources(night)
    check_validity_of_masters()


def test_a_real_frame_with_a_sip_wcs_covers_its_reference_position(db, data_server) -> None:
    report = ingest([REAL_FILES["sip_apogee"].path()], kind="science")
    frame = report.ingested[0]
    reference = SkyCoord(*frame.wcs.wcs.crval, unit="deg")
    assert frame.footprint.contains(reference)
    assert ids(select(RawScienceFrame.footprint.contains(reference))) == {frame.object_id}
    assert pixel_area_holds(frame, reference)


def test_each_extension_of_a_mosaic_has_its_own_footprint(db, data_server) -> None:
    report = ingest([REAL_FILES["wfpc2_four_chips"].path()], kind="science")
    frames = [f for f in report.ingested if f.footprint is not None]
    assert len(frames) >= 3 and len({f.footprint.to_text() for f in frames}) == len(frames)
    for frame in frames:  # the centre of each chip: in the chips whose pixels hold it
        rows, cols = frame.shape
        centre = frame.wcs.pixel_to_world((cols - 1) / 2, (rows - 1) / 2)
        holding = {f.object_id for f in frames if pixel_area_holds(f, centre)}
        assert frame.object_id in holding
        assert ids(select(RawScienceFrame.footprint.contains(centre))) == holding
    for frame in report.ingested:
        assert (frame.footprint is None) == (frame.wcs is None)


def test_a_wcs_that_gives_no_footprint_does_not_stop_ingest(db, data_server,
                                                            tmp_path: Path) -> None:
    header = fits.Header({"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRPIX1": 50.5,
                          "CRPIX2": 50.5, "CRVAL1": 150.0, "CRVAL2": 2.0, "CDELT1": -2.0,
                          "CDELT2": 2.0, "DATE-OBS": "2024-01-03T02:00:00",
                          "EXPTIME": 10.0})  # corners 100 deg away: beyond the projection
    path = tmp_path / "wide.fits"
    fits.PrimaryHDU(np.zeros((100, 100), np.uint16), header).writeto(path)
    report = ingest([path], kind="science")
    frame = report.ingested[0]
    assert frame.wcs is not None and frame.footprint is None
    assert any(note.startswith("footprint: no footprint") for note in frame.defaults_used)
    assert any("footprint" in note for note in report.defaults)
    assert not select(RawScienceFrame.footprint.contains((150.0, 2.0))).exists()



def test_a_reduced_frame_covers_only_its_trimmed_pixels(db, data_server, tmp_path: Path
                                                        ) -> None:
    raw_pixels, header, _, _ = synthetic_chip(3, signal_level=200.0, wcs=True)
    header.update({"DATE-OBS": "2024-01-03T02:00:00", "EXPTIME": 10.0})
    path = tmp_path / "overscan.fits"
    fits.PrimaryHDU(raw_pixels, header).writeto(path)
    raw = ingest([path], kind="science").ingested[0]
    report = TargetProcessor("serial", progress=False).make(ReducedScienceFrame)
    assert report.made == 1 and not report.failures(), report.summary()
    reduced = select(ReducedScienceFrame).first()
    assert reduced.trim_origin == list(ORIGIN)
    row = ROWS // 2
    cut = [raw.wcs.pixel_to_world(column, row)  # raw pixels only: prescan and overscan
           for column in (ORIGIN[1] - 2, OVERSCAN_COLUMNS[3])]
    kept = [raw.wcs.pixel_to_world(column, row)  # the first and last columns kept
            for column in (ORIGIN[1], ORIGIN[1] + TRIMMED[1] - 1)]
    for position in cut:
        assert pixel_area_holds(raw, position) and not pixel_area_holds(reduced, position)
        assert ids(select(RawScienceFrame.footprint.contains(position))) == {raw.object_id}
        assert not select(ReducedScienceFrame.footprint.contains(position)).exists()
    for position in kept:
        assert pixel_area_holds(reduced, position)
        assert ids(select(ReducedScienceFrame.footprint.contains(position))) == \
            {reduced.object_id}
