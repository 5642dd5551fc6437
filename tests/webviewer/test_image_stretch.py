"""Preview stretches and limits drawn as astropy.visualization draws them, on a real image
(the DSS plate scan of M13 from astropy's test data)."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.io import fits
from astropy.visualization import (
    AsinhStretch,
    ImageNormalize,
    LinearStretch,
    LogStretch,
    MinMaxInterval,
    PercentileInterval,
    SqrtStretch,
    ZScaleInterval,
)

from targets.real_files import REAL_FILES
from webviewer._errors import BadRequest
from webviewer._image_stretch import Rendering, parse_limits, to_grey


@pytest.fixture(scope="module")
def m13() -> np.ndarray:
    with fits.open(REAL_FILES["dss_m13"].path()) as hdus:
        data = np.asarray(hdus[0].data, dtype=np.float32)
    data[:3, :3] = np.nan  # a few bad pixels: black, and left out of the limits
    return data


ASTROPY = {"linear": LinearStretch(), "asinh": AsinhStretch(), "log": LogStretch(),
           "sqrt": SqrtStretch()}
INTERVALS = {"zscale": ZScaleInterval(), "minmax": MinMaxInterval(),
             "99.5": PercentileInterval(99.5)}


@pytest.mark.parametrize("limits", list(INTERVALS))
@pytest.mark.parametrize("stretch", list(ASTROPY))
def test_every_stretch_and_limits_match_astropys_image_normalize(m13, stretch, limits) -> None:
    finite = m13[np.isfinite(m13)]
    norm = ImageNormalize(finite, interval=INTERVALS[limits], stretch=ASTROPY[stretch],
                          clip=True)
    expected = np.round(np.asarray(norm(finite)) * 255)
    grey = to_grey(m13, Rendering(stretch, limits))
    assert not grey[:3, :3].any()
    assert np.abs(grey[np.isfinite(m13)].astype(int) - expected).max() <= 1


def test_asinh_keeps_the_cluster_core_unsaturated_where_zscale_linear_clips_it(m13) -> None:
    old = to_grey(m13, Rendering())
    new = to_grey(m13, Rendering("asinh", "minmax"))
    assert (old == 255).sum() > 10 * max(1, (new == 255).sum())


@pytest.mark.parametrize("text", ["0", "100.5", "-3", "nan", "inf", "zs", ""])
def test_limits_outside_the_allowed_values_are_refused_naming_the_parameter(text) -> None:
    with pytest.raises(BadRequest, match=r"parameter limits must be zscale, minmax or a "
                                         r"percentile"):
        parse_limits(text)


def test_percentiles_have_one_spelling() -> None:
    assert parse_limits("99.50") == "99.5" and parse_limits("100") == "100"
