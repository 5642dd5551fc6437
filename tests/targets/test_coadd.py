"""Coaddition: an exact weighted mean, and on the synthetic night a noise that falls as
1/sqrt(N) with the number of frames."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.stats import sigma_clipped_stats

from targets.coadd import coadd
from targets.errors import GridError, NoInputError
from targets.regrid import RegriddedImage, SkyGrid

GRID = SkyGrid(150.0, 2.2, 0.3, 10, 12)


def _image(value: float, weight: float, origin: tuple[int, int], shape=(4, 5),
           grid: SkyGrid = GRID) -> RegriddedImage:
    return RegriddedImage(np.full(shape, value, np.float32), np.full(shape, weight, np.float32),
                          origin, grid)


def test_overlap_gets_the_weighted_mean_and_the_summed_weight():
    result = coadd([_image(10.0, 1.0, (2, 2)), _image(40.0, 3.0, (4, 4))],
                   parameters=None)
    grid_row, grid_col = 5, 5  # covered by both
    row, col = grid_row - result.origin[0], grid_col - result.origin[1]
    assert result.data[row, col] == pytest.approx((10 * 1 + 40 * 3) / 4)
    assert result.weight[row, col] == pytest.approx(4.0)
    assert result.count[row, col] == 2
    only_first = (2 - result.origin[0], 2 - result.origin[1])
    assert result.data[only_first] == pytest.approx(10.0) and result.count[only_first] == 1


def test_coadd_is_cropped_to_the_covered_part_of_the_grid():
    result = coadd([_image(1.0, 1.0, (2, 2)), _image(1.0, 1.0, (4, 4))])
    assert result.origin == (2, 2) and result.data.shape == (6, 7)
    assert result.wcs.wcs.crpix == pytest.approx(GRID.wcs((2, 2)).wcs.crpix)


def test_scales_convert_units_and_weights():
    result = coadd([_image(60.0, 1.0, (0, 0)), _image(240.0, 1.0, (0, 0))],
                   scales=[1 / 60, 1 / 120])
    # 1 and 2 per second, weights 60**2 and 120**2: mean (3600 * 1 + 14400 * 2) / 18000
    assert result.data[0, 0] == pytest.approx(1.8)
    assert result.weight[0, 0] == pytest.approx(3600 + 14400)


def test_frames_on_different_grids_are_refused():
    other = SkyGrid(150.1, 2.2, 0.3, 10, 12)
    with pytest.raises(GridError, match="frame 1 is on grid"):
        coadd([_image(1.0, 1.0, (0, 0)), _image(1.0, 1.0, (0, 0), grid=other)])


def test_nothing_to_stack_is_an_error():
    with pytest.raises(NoInputError, match="no frames"):
        coadd([])


@pytest.mark.parametrize("scales", [[1.0, 0.0], [1.0]])
def test_bad_scales_are_refused(scales):
    with pytest.raises(ValueError, match="scale"):
        coadd([_image(1.0, 1.0, (0, 0)), _image(1.0, 1.0, (0, 0))], scales=scales)


def test_coadd_noise_falls_as_one_over_root_n(direct_run):
    # the coadd is in electrons per second
    scales = {raw.name: raw.values.gain / raw.values.exptime for raw in direct_run.raws
              if raw.values.exptime}
    for (pointing, filter_name), result in direct_run.coadds.items():
        full_rows, full_cols = np.nonzero(result.count == result.count.max())
        n = int(result.count.max())
        assert n >= 3 and len(full_rows) > 5000
        _, _, coadd_noise = sigma_clipped_stats(result.data[full_rows, full_cols], sigma=3.0)
        variances = []
        for raw in direct_run.raws:
            if (raw.name not in direct_run.regridded or raw.values.object != pointing
                    or raw.values.filter != filter_name):
                continue
            image = direct_run.regridded[raw.name]
            # this frame's own values, in the coadd's units, on the fully covered pixels
            rows = full_rows + result.origin[0] - image.origin[0]
            cols = full_cols + result.origin[1] - image.origin[1]
            inside = ((rows >= 0) & (rows < image.data.shape[0]) & (cols >= 0)
                      & (cols < image.data.shape[1]))
            if inside.sum() < 2000:
                continue
            values = image.data[rows[inside], cols[inside]] * scales[raw.name]
            variances.append(sigma_clipped_stats(values, sigma=3.0)[2] ** 2)
        assert len(variances) >= n
        single_noise = np.sqrt(np.mean(variances))
        assert coadd_noise == pytest.approx(single_noise / np.sqrt(n), rel=0.15)


def test_coadd_header_counts_frames_and_keeps_the_raw_keywords(direct_run):
    result = next(iter(direct_run.coadds.values()))
    assert result.header["NCOMBINE"] == result.nframes == 6  # 3 dithers x 2 chips
    assert result.header["BUNIT"] == "electron/s" and result.header["INSTRUME"] == "SYNCAM"
