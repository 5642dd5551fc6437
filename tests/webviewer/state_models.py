"""Classes for the tests of the viewer's kept plans of object states, and a history that gives
every state: exposures reduced one by one and mosaicked per field (with a newer exposure, one
that cannot be reduced and one no longer selected), and notes summarised (all up to date, so
planned on columns)."""

from __future__ import annotations

from typing import Any

from awlineage import DBObject, OnePer, OnePerGroup, Process, TargetProcessor, commit, persistent

NAMESPACE = "viewerstatetest"
BRIGHT = 1000.0
"""Exposures with this many counts or more are not reduced."""


def _negative(target: Any) -> str | None:
    counts = target.raw.counts
    return f"{target.raw.name} has {counts} counts" if counts < 0 else None


class StateExposure(DBObject):
    """A raw exposure: versions of one name are one identity."""

    __namespace__ = NAMESPACE
    identity = ("name",)
    name = persistent("StateExposure name", str, "")
    field = persistent("Field observed", str, "")
    counts = persistent("Counts", float, 0.0)


class StateReduced(Process):
    """One per exposure that is not too bright; blocked by negative counts."""

    __namespace__ = NAMESPACE
    code_version = "1.0"
    identity = ("name",)
    targets = OnePer(StateExposure, link="raw", copy=("name", "field"),
                     where=lambda raw: raw.counts < BRIGHT)
    blocked_when = {"an exposure with negative counts": _negative}
    raw = persistent("Raw exposure", StateExposure, None)
    name = persistent("StateExposure name", str, "")
    field = persistent("Field observed", str, "")
    value = persistent("StateReduced counts", float, None)

    def make(self) -> None:
        self.value = self.raw.counts


class StateMosaic(Process):
    """One per field."""

    __namespace__ = NAMESPACE
    identity = ("field",)
    targets = OnePerGroup(StateReduced, link="frames", by=("field",))
    frames = persistent("Frames mosaicked", StateReduced, [])
    field = persistent("Field observed", str, "")
    total = persistent("Sum", float, None)

    def make(self) -> None:
        self.total = sum(f.value for f in self.frames)


class StateNote(DBObject):
    """A note: versions of one name are one identity."""

    __namespace__ = NAMESPACE
    identity = ("name",)
    name = persistent("StateNote name", str, "")


class StateSummary(Process):
    """One per note, all up to date (planned on columns)."""

    __namespace__ = NAMESPACE
    code_version = "1.0"
    identity = ("name",)
    targets = OnePer(StateNote, link="note", copy=("name",))
    note = persistent("The note", StateNote, None)
    name = persistent("StateNote name", str, "")

    def make(self) -> None:
        pass


def made(frames: int = 2) -> dict[str, DBObject]:
    """Exposures A-0.. of field F1, B-0 of F2 and C-0 of F3, their reductions and mosaics,
    notes and their summaries, all up to date: name -> object (mosaics by field)."""
    commit([*(StateExposure(name=f"A-{i}", field="F1", counts=10.0 + i) for i in range(frames)),
            StateExposure(name="B-0", field="F2", counts=20.0),
            StateExposure(name="C-0", field="F3", counts=30.0),
            StateNote(name="n1"), StateNote(name="n2")])
    processor = TargetProcessor("serial", progress=False)
    found: dict[str, DBObject] = {}
    for obj in processor.make(StateMosaic).objects:
        found[getattr(obj, "field", None) or obj.name] = obj
    for obj in processor.make(StateSummary).objects:
        found[obj.name] = obj
    return found


def every_state() -> None:
    """After `made`: A-0 has a newer version (its old version orange, its reduction and F1's
    mosaic red), B-0 a version with negative counts (its reduction and F2's mosaic blocked),
    C-0 a version too bright to reduce (its reduction red, as made from a superseded
    exposure; F3's mosaic not planned now: unknown)."""
    commit([StateExposure(name="A-0", field="F1", counts=99.0)])
    commit([StateExposure(name="B-0", field="F2", counts=-1.0)])
    commit([StateExposure(name="C-0", field="F3", counts=BRIGHT * 5)])
