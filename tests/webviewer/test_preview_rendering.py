"""How previews are drawn: NaN-safe binning and scaling, the PNG encoder, the cache's bound."""

from __future__ import annotations

import numpy as np

from tests.webviewer.demo_objects import png_size
from webviewer._png import encode_grey_png
from webviewer._preview import Preview, PreviewCache, bin_image, binning, scale_to_grey


def test_binning_averages_blocks_and_keeps_a_block_of_nans_nan() -> None:
    data = np.arange(20, dtype=np.float32).reshape(4, 5)
    data[0:2, 0:2] = np.nan
    binned = bin_image(data, 2)
    assert binned.shape == (2, 3) and binning((4, 5), 2) == 3
    assert np.isnan(binned[0, 0])
    assert binned[1, 2] == np.mean([14, 19])  # a padded block averages its real pixels


def test_scaling_survives_images_with_no_finite_or_one_value() -> None:
    assert not scale_to_grey(np.full((3, 3), np.nan, dtype=np.float32)).any()
    flat = scale_to_grey(np.ones((3, 3), dtype=np.float32))
    assert flat.dtype == np.uint8 and len(set(flat.ravel())) == 1
    ramp = scale_to_grey(np.linspace(0, 1, 100, dtype=np.float32).reshape(10, 10))
    assert ramp[0, 0] == 0 and ramp[-1, -1] == 255


def test_the_png_encoder_writes_every_row() -> None:
    pixels = np.random.default_rng(1).integers(0, 256, (7, 13), dtype=np.uint8)
    assert png_size(encode_grey_png(pixels)) == (13, 7)


def test_the_cache_drops_the_least_recently_used_past_its_bytes() -> None:
    cache = PreviewCache(max_bytes=25)
    for n in range(3):
        cache.put((n, None, 10, "k"), Preview(b"x" * 10, f'"{n}"', 1, 0, (1, 1)))
        cache.get((0, None, 10, "k"))  # keep the first one in use
    assert cache.get((1, None, 10, "k")) is None and cache.get((0, None, 10, "k")) is not None
    assert cache.size <= 25 and len(cache) == 2
