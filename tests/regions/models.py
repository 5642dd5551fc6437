"""Persistent classes of the region lineage tests (names unique across the suite)."""

from __future__ import annotations

from awlineage import DataObject, DBObject, persistent


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
