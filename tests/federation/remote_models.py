"""Persistent classes of the multi-site tests (names unique across the suite)."""

from __future__ import annotations

from awlineage import DBObject, persistent


class FedRemoteStep(DBObject):
    """One step of a chain: what it is and what it was made from."""

    label = persistent("What the step is", str, "")
    made_from = persistent("The step it was made from")


class FedRemoteFrame(DBObject):
    """An object with arrays, for region lineage across sites."""

    label = persistent("What the frame is", str, "")
