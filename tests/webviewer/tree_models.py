"""Classes the object tree tests store (their own namespace): knots that link to each other
(cycles included) and strands in link lists."""

from __future__ import annotations

from awlineage import DBObject, persistent


class Strand(DBObject):
    """A piece of rope."""

    __namespace__ = "viewertree"
    colour = persistent("Colour of the strand", str, "")


class Knot(DBObject):
    """A knot tied to another knot (perhaps itself), with strands; versioned by name."""

    __namespace__ = "viewertree"
    identity = ("name",)
    name = persistent("Name of the knot", str, "")
    length = persistent("Length of rope [m]", float, None)
    other = persistent("The knot it is tied to")
    strands = persistent("Strands woven in", Strand, [])


def chain(names: list[str], strands: int = 0) -> list[Knot]:
    """Committed knots, each tied to the next (the last to none), the first with `strands`
    strands."""
    knots: list[Knot] = []
    following = None
    for name in reversed(names):
        following = Knot(name=name, length=float(len(name)), other=following)
        knots.insert(0, following)
    knots[0].strands = [Strand(colour=f"c{i}") for i in range(strands)]
    knots[0].commit()
    return knots
