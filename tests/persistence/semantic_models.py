"""Persistent classes for the query-semantics tests: strings that LIKE engines disagree on,
links that are often missing, and attributes named like the query API's own members."""

from __future__ import annotations

from awlineage import DBObject, persistent


class LikeSite(DBObject):
    name = persistent("Site name", str, None)


class LikeOwner(DBObject):
    name = persistent("Owner name", str, None)
    place = persistent("Where the owner is", LikeSite, None)


class LikeFrame(DBObject):
    serial = persistent("A number unique among the test's frames", int, 0)
    name = persistent("A name with case, wildcards and backslashes", str, None)
    tags = persistent("Names kept in a list", str, [])
    nexp = persistent("A number that may be missing", int, None)
    owner = persistent("An owner, often missing", LikeOwner, None)
    earlier = persistent("The frame before, often missing")
    neighbours = persistent("Frames nearby, often none", DBObject, [])


class ApiNamed(DBObject):
    """Every public member of an attribute path, as a persistent attribute."""

    overlaps = persistent("Named like Path.overlaps (a link list, as CameraFrame's)", DBObject,
                          [])
    steps = persistent("Named like Path.steps (a str list, as the pipeline's)", str, [])
    start = persistent("Named like Path.start", str, None)
    index = persistent("Named like Path.index", str, None)
    root = persistent("Named like Path.root", str, None)
    contains = persistent("Named like Path.contains", str, None)
    within = persistent("Named like Path.within", str, None)
    like = persistent("Named like Path.like", str, None)
    ilike = persistent("Named like Path.ilike", str, None)
    asc = persistent("Named like Path.asc", str, None)
    desc = persistent("Named like Path.desc", str, None)
    last = persistent("Named like Path.last", str, None)
    in_ = persistent("Named like Path.in_", str, None)
    attribute = persistent("Named like Path.attribute", str, None)
    check_value = persistent("Named like Path.check_value", str, None)
    counterpart = persistent("Another object of this class")
