"""SODA's TIME, BAND and POL through pyvo on the demo: TIME keeps the images observed within
it (none: the no-data answer), BAND and POL are refused naming the parameter, and a malformed
interval is a usage error naming the parameter and its value; none is silently ignored."""

from __future__ import annotations

import io

import httpx
import pytest
from astropy import units as u
from astropy.io import fits
from pyvo.dal.adhoc import DatalinkService

from tests.webviewer.test_cutouts import star  # noqa: F401 (the demo's brightest source)

NIGHT = (60383.83, 60383.84)
"""The demo's science exposures: 2024-03-14, 19:55 to 20:10 UTC (MJD)."""


def _cutout(demo_url: str, object_id: int):
    links = DatalinkService(f"{demo_url}/datalink/links").run_sync(str(object_id))
    return next(links.bysemantics("#cutout", include_narrower=False))


def test_pyvo_time_selects_the_images_observed_within_it(demo_url, star) -> None:  # noqa: F811
    source = star[0]
    cutout = _cutout(demo_url, source.object_id)
    circle = (source.ra * u.deg, source.dec * u.deg, 2 * u.arcsec)
    every = fits.open(io.BytesIO(cutout.processed(circle=circle).read()))
    night = fits.open(io.BytesIO(cutout.processed(circle=circle,
                                                  TIME=list(NIGHT) * u.d).read()))
    classes = {h.header["AWLCLASS"].rpartition(".")[2] for h in night[1:]}
    assert "RawScienceFrame" in classes and "CoaddedRegriddedFrame" in classes
    assert not classes & {"BiasFrame", "RawBiasFrame", "DomeFlatFrame"}  # the afternoon's
    assert 1 < len(night) < len(every)
    for hdu in night[1:]:
        assert NIGHT[0] - 0.01 <= hdu.header["MJD-OBS"] <= NIGHT[1]
    sync = f"{demo_url}/soda/sync"
    outside = httpx.get(sync, params={"ID": source.object_id, "TIME": "50000 50001"})
    assert outside.status_code == 204 and outside.content == b""


@pytest.mark.parametrize(("name", "value", "said"), [
    ("TIME", "50000", "'50000'"), ("TIME", "50001 50000", "lower bound is above"),
    ("TIME", "NaN 50000", "NaN"), ("TIME", "a b", "'a b'"),
    ("BAND", "4e-7 5e-7", "BAND is not supported"), ("BAND", "5e-7 4e-7", "BAND '5e-7 4e-7'"),
    ("POL", "I", "POL 'I' is not supported")])
def test_malformed_or_unsupported_axes_are_usage_errors(demo_url, star, name, value,  # noqa: F811
                                                        said) -> None:
    answer = httpx.get(f"{demo_url}/soda/sync",
                       params={"ID": star[0].object_id, name: value})
    assert answer.status_code == 400
    assert answer.text.startswith(f"UsageError: {name}") or (
        answer.text.startswith("UsageError: ") and name in answer.text)
    assert said in answer.text

