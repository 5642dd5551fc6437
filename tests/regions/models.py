"""Persistent classes of the region lineage tests (names unique across the suite)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from awlineage import DataObject, DBObject, persistent
from awlineage.regions import register_array_loader, unregister_array_loader


class RegionTestFrame(DBObject):
    label = persistent("What the frame is", str, "")


class RegionTestRaw(RegionTestFrame):
    pass


class RegionTestCalib(RegionTestFrame):
    pass


class RegionTestReduced(RegionTestFrame):
    pass


class RegionTestSources(RegionTestFrame):
    pass


class RegionTestImage(DataObject):
    label = persistent("What the image is", str, "")


@contextmanager
def raw_frames_load(image: np.ndarray) -> Iterator[None]:
    """Raw frames give `image` as HDU 0 while this lasts: black-box calls need inputs that
    can be loaded again."""
    def loader(obj: object, hdu: int) -> np.ndarray | None:
        return image if isinstance(obj, RegionTestRaw) and hdu == 0 else None

    register_array_loader(loader)
    try:
        yield
    finally:
        unregister_array_loader(loader)
