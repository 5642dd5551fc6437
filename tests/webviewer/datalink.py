"""The DataLink client calls that several cutout-service tests share."""

from __future__ import annotations

from pyvo.dal.adhoc import DatalinkResults, DatalinkService


def datalink_links(demo_url: str, object_id: int) -> DatalinkResults:
    """The DataLink rows the viewer at `demo_url` gives for one object, read by pyvo."""
    return DatalinkService(f"{demo_url}/datalink/links").run_sync(str(object_id))
