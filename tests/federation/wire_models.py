"""Classes for the tests of files that carry their lineage: a chain raw -> calibration ->
step -> product (a DataObject with a file), and a note that links to a step."""

from __future__ import annotations

from awlineage import DataObject, DBObject, persistent


class WireRaw(DBObject):
    label = persistent("Which raw frame", str, "")


class WireCal(DBObject):
    raw = persistent("The raw frame calibrated", WireRaw, None)
    gain = persistent("Gain applied", float, 1.0)


class WireStep(DBObject):
    cal = persistent("The calibration stepped on", WireCal, None)
    name = persistent("Name of the step", str, "")


class WireProduct(DataObject):
    step = persistent("The step that made it", WireStep, None)


class WireNote(DBObject):
    step = persistent("The step noted", WireStep, None)
    text = persistent("The note", str, "")
