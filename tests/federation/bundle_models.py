"""Classes for the bundle tests: raw files (with an identity, so versions), a step that makes
a product from inputs through a process run, and a product with a file."""

from __future__ import annotations

import datetime

from awlineage import DataObject, DBObject, Process, persistent


class FedRaw(DBObject):
    identity = ("chip",)
    chip = persistent("Chip name", str, "")
    observed = persistent("When it was taken", datetime.datetime, None)
    header = persistent("Header bytes", bytes, None)
    gains = persistent("Gains per amplifier", float, [])


class FedStep(DBObject):
    name = persistent("Step name", str, "")
    inputs = persistent("What it combined", FedRaw, [])
    previous = persistent("The step before it")


class FedProductParameters(DBObject):
    scale = persistent("Factor applied", int, 1)


class FedProduct(Process, DataObject):
    step = persistent("The step it summarises", FedStep, None)
    label = persistent("Label", str, "")
    process_params = persistent("Parameters", FedProductParameters, None)

    def make(self) -> None:
        self.store(f"{self.label}: {self.step.name}\n".encode(),
                   filename=f"fed-{self.label}.txt")


class FedMask(Process):
    """A make() that records region lineage: each cell of a 3 x 4 mask depends on the same
    cell of its raw frame's array."""

    from awlineage import OnePer as _OnePer

    targets = _OnePer(FedRaw, link="raw", copy=("chip",))

    raw = persistent("The frame masked", FedRaw, None)
    chip = persistent("Chip of the frame", str, "")

    def make(self) -> None:
        from awlineage.regions import capture_regions, elementwise

        with capture_regions(self) as cap:
            cap.apply(elementwise(), [cap.array(self.raw, shape=(3, 4))])
