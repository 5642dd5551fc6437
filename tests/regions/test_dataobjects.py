"""End to end with real DataObjects stored on a local data directory: a black-box operator
is re-run on the FITS files its inputs were stored as."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.io import fits

from awlineage import backward, forward
from awlineage.regions import capture_regions, elementwise
from awlineage.storage import forget_data_server, use_data_server
from tests.regions.models import RegionTestImage
from tests.regions.test_queries import BrightMask


@pytest.fixture
def data_server(tmp_path, monkeypatch):
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    yield use_data_server(str(tmp_path / "data"))
    forget_data_server()


def _stored(label: str, data: np.ndarray) -> RegionTestImage:
    image = RegionTestImage(label=label)
    image.store(fits.HDUList([fits.PrimaryHDU(data)]))
    return image


def test_black_box_re_run_reads_the_stored_fits_files(db, data_server) -> None:
    rng = np.random.default_rng(11)
    raw_data, flat_data = rng.random((10, 12)), rng.random((10, 12)) + 0.5
    raw, flat = _stored("raw", raw_data), _stored("flat", flat_data)
    raw.commit()
    flat.commit()
    reduced_data = raw_data / flat_data
    reduced = RegionTestImage(label="reduced")
    with capture_regions(reduced) as cap:
        cap.apply(elementwise(), [cap.array(raw, data=raw_data), cap.array(flat, data=flat_data)])
    reduced.store(fits.HDUList([fits.PrimaryHDU(reduced_data)]))
    reduced.commit()
    masks = {}
    for mode in ("blackbox", "full"):
        mask = RegionTestImage(label=mode)
        with capture_regions(mask) as cap:
            result = cap.run(BrightMask(0.8), [cap.array(reduced, data=reduced_data)],
                             [reduced_data], mode=mode)
        mask.store(fits.HDUList([fits.PrimaryHDU(result.astype(np.uint8))]))
        mask.commit()
        masks[mode] = mask
    cells = np.argwhere(reduced_data > 0.8)[:4]
    BrightMask.runs = 0
    boxed = backward(masks["blackbox"], cells)
    traced = backward(masks["full"], cells)
    assert BrightMask.runs == 1 and boxed.stats.reruns == 1
    for obj in (reduced, raw, flat):
        assert boxed[obj] == traced[obj]
        assert not boxed[obj].is_empty()
    onward = forward(raw, cells)
    assert onward[masks["blackbox"]] == onward[masks["full"]]
