"""Classes for the session tests: counts to tally, a process whose make() queries, takes
default parameters and stores a file, all through whatever session it runs in."""

from __future__ import annotations

from awlineage import DataObject, DBObject, OnePer, Process, persistent, select


class SessCount(DBObject):
    label = persistent("Which thread or database made it", str, "")
    n = persistent("A number", int, 0)


class SessTallyParameters(DBObject):
    scale = persistent("Factor applied to the tally", int, 1)


class SessTally(Process, DataObject):
    targets = OnePer(SessCount, link="count", copy=("label",))

    count = persistent("The count this tally is for", SessCount, None)
    label = persistent("Label of the count", str, "")
    seen = persistent("How many counts select() found while making", int, None)
    process_params = persistent("Parameters", SessTallyParameters, None)

    def make(self) -> None:
        self.seen = len(select(SessCount).all()) * self.process_params.scale
        self.store(f"{self.label}: {self.seen}\n".encode(), filename=f"tally-{self.label}.txt")


class SessMask(Process):
    targets = OnePer(SessCount, link="count", copy=("label",))

    count = persistent("The count masked", SessCount, None)
    label = persistent("Label of the count", str, "")

    def make(self) -> None:
        from awlineage.regions import capture_regions, elementwise

        with capture_regions(self) as cap:
            cap.apply(elementwise(), [cap.array(self.count, shape=(3, 4))])
