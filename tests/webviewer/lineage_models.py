"""Classes for the lineage, diff and plan pages' tests: a hand-built graph of plain objects,
and a small target chain (raw frames calibrated one by one, then stacked per field)."""

from __future__ import annotations

from awlineage import DBObject, OnePer, OnePerGroup, Process, TargetProcessor, commit, persistent

NAMESPACE = "lineageviewertest"


class Base(DBObject):
    """The start of the hand-built graph."""

    __namespace__ = NAMESPACE
    name = persistent("Name", str, "")


class Part(DBObject):
    """Made from a base."""

    __namespace__ = NAMESPACE
    source = persistent("What it was made from", Base, None)


class Leaf(DBObject):
    """Made from parts."""

    __namespace__ = NAMESPACE
    parts = persistent("Parts", Part, [])
    extra = persistent("Another input", Base, None)


class Raw(DBObject):
    """A raw frame: versions of one name are one identity."""

    __namespace__ = NAMESPACE
    identity = ("name",)
    name = persistent("Frame name", str, "")
    field = persistent("Field observed", str, "")
    counts = persistent("Counts", float, 0.0)


class CalParams(DBObject):
    """Parameters of a calibration."""

    __namespace__ = NAMESPACE
    scale = persistent("Scale factor", float, 1.0)


class Calibrated(Process):
    """One per raw frame."""

    __namespace__ = NAMESPACE
    code_version = "1.0"
    targets = OnePer(Raw, link="raw", copy=("name", "field"))
    raw = persistent("Raw frame", Raw, None)
    name = persistent("Frame name", str, "")
    field = persistent("Field observed", str, "")
    value = persistent("Calibrated counts", float, None)
    process_params = persistent("Parameters", CalParams, None)

    def make(self) -> None:
        self.value = self.raw.counts * self.process_params.scale


class Stacked(Process):
    """One per field."""

    __namespace__ = NAMESPACE
    targets = OnePerGroup(Calibrated, link="frames", by=("field",))
    frames = persistent("Frames stacked", Calibrated, [])
    field = persistent("Field observed", str, "")
    total = persistent("Sum", float, None)

    def make(self) -> None:
        self.total = sum(f.value for f in self.frames)


def make_chain(frames: int = 3, field: str = "F1") -> Stacked:
    """Store `frames` raw frames of one field and make their stack (serially)."""
    commit([Raw(name=f"{field}-{i}", field=field, counts=10.0 + i) for i in range(frames)])
    report = TargetProcessor("serial", progress=False).make(Stacked)
    return next(s for s in report.objects if s.field == field)


def hand_built_graph(parts: int = 2) -> tuple[Leaf, list[Part], list[Base]]:
    """bases[i] -> parts[i] -> leaf, and bases[0] -> leaf directly (``extra``)."""
    bases = [Base(name=f"b{i}") for i in range(parts)]
    made = [Part(source=b) for b in bases]
    leaf = Leaf(parts=made, extra=bases[0])
    commit([leaf])
    return leaf, made, bases
