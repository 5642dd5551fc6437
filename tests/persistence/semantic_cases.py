"""Random well-typed queries with a known answer: the differential test and
`benchmarks/query_fuzz.py --semantics` draw from here.

`seed_world()` commits a small world whose strings are those LIKE engines disagree on (case,
``%``, ``_``, backslashes, GLOB's ``*?[``, non-ASCII letters) and whose links are often
missing. `random_case(rng)` gives one query in both forms (text and expression API) and
`expected(world, case)` evaluates it in plain Python on a snapshot of the same rows, by the
rules the README states: ``like`` is case-sensitive with ``%``, ``_`` and a backslash escape,
``ilike`` ignores the case of A-Z only, a missing value (or any path through a missing link)
meets ``== None`` and ``!=`` a value and nothing else, a link list matches when any member
does, and ``not`` is two-valued. The oracle shares no code with awlineage.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from awlineage import commit, select
from tests.persistence.semantic_models import LikeFrame, LikeOwner, LikeSite

STRINGS = ("CCD1", "ccd1", "Ccd12", "a_b", "aXb", "a\\b", "a\\_b", "a%b", "a%%b", "ab", "AB",
           "Äb", "äb", "", "x*y", "x?y", "[a]", "é", "É", "straße", "a\nb")
PATTERN_PIECES = ("%", "_", "\\%", "\\_", "\\\\", "a", "A", "b", "B", "c", "C", "D", "1", "2",
                  "*", "?", "[", "]", "ä", "Ä", "\\a", "x", "é", "\n")
FRAMES = 40


@dataclass
class Record:
    """A plain copy of one stored object: what the oracle reads."""

    serial: int | None = None
    name: str | None = None
    tags: list[str] | None = None
    nexp: int | None = None
    owner: Record | None = None
    place: Record | None = None
    earlier: Record | None = None
    neighbours: list[Record] | None = None


def seed_world(seed: int = 7) -> dict[int, Record]:
    """Commit the world to the current database; return its frames as records by serial."""
    rng = random.Random(seed)
    sites = [LikeSite(name=rng.choice((*STRINGS, None))) for _ in range(3)]
    owners = [LikeOwner(name=rng.choice((*STRINGS, None)),
                        place=rng.choice([*sites, None])) for _ in range(5)]
    frames: list[LikeFrame] = []
    for serial in range(FRAMES):
        frames.append(LikeFrame(
            serial=serial, name=rng.choice((*STRINGS, None)),
            tags=rng.sample(STRINGS, rng.randint(0, 2)),
            nexp=rng.choice((None, 0, 1, 2, 3)),
            owner=rng.choice([*owners, None, None]),
            earlier=rng.choice([*frames[-3:], None, None]) if frames else None,
            neighbours=rng.sample(frames, min(len(frames), rng.randint(0, 2)))))
    commit([*sites, *owners, *frames])
    return _records(sites, owners, frames)


def _records(sites: list[LikeSite], owners: list[LikeOwner], frames: list[LikeFrame]
             ) -> dict[int, Record]:
    site_records = {id(s): Record(name=s.name) for s in sites}
    owner_records = {id(o): Record(name=o.name, place=site_records.get(id(o.place)))
                     for o in owners}
    by_label: dict[int, Record] = {}
    for frame in frames:
        by_label[frame.serial] = Record(
            serial=frame.serial, name=frame.name, tags=list(frame.tags), nexp=frame.nexp,
            owner=owner_records.get(id(frame.owner)),
            earlier=by_label[frame.earlier.serial] if frame.earlier is not None else None,
            neighbours=[by_label[n.serial] for n in frame.neighbours])
    return by_label


# -- one query in two forms ------------------------------------------------------------------
@dataclass(frozen=True)
class PathSpec:
    """An attribute path: its text, its steps, a list index and the type it ends in."""

    text: str
    steps: tuple[str, ...]
    index: int | None
    kind: str  # "str", "int" or "link"


PATHS = (
    PathSpec("name", ("name",), None, "str"),
    PathSpec("tags[0]", ("tags",), 0, "str"),
    PathSpec("tags[-1]", ("tags",), -1, "str"),
    PathSpec("owner.name", ("owner", "name"), None, "str"),
    PathSpec("owner.place.name", ("owner", "place", "name"), None, "str"),
    PathSpec("earlier.name", ("earlier", "name"), None, "str"),
    PathSpec("earlier.earlier.name", ("earlier", "earlier", "name"), None, "str"),
    PathSpec("earlier.owner.name", ("earlier", "owner", "name"), None, "str"),
    PathSpec("neighbours.name", ("neighbours", "name"), None, "str"),
    PathSpec("neighbours.owner.name", ("neighbours", "owner", "name"), None, "str"),
    PathSpec("nexp", ("nexp",), None, "int"),
    PathSpec("earlier.nexp", ("earlier", "nexp"), None, "int"),
    PathSpec("earlier.earlier.nexp", ("earlier", "earlier", "nexp"), None, "int"),
    PathSpec("neighbours.nexp", ("neighbours", "nexp"), None, "int"),
    PathSpec("owner", ("owner",), None, "link"),
    PathSpec("earlier.owner", ("earlier", "owner"), None, "link"),
    PathSpec("owner.place", ("owner", "place"), None, "link"),
)
_LINK_LISTS = ("neighbours",)


@dataclass(frozen=True)
class Leaf:
    """``path op value``."""

    path: PathSpec
    op: str  # == != < <= > >= like ilike in
    value: Any


@dataclass(frozen=True)
class Node:
    """``and`` / ``or`` of parts, or ``not`` of one."""

    op: str
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class Case:
    """One query: its tree, its text and a builder of its expression-API form."""

    tree: Leaf | Node
    text: str
    build: Callable[[], Any]


def _pattern(rng: random.Random) -> str:
    return "".join(rng.choice(PATTERN_PIECES) for _ in range(rng.randint(0, 4)))


def _leaf(rng: random.Random) -> Leaf:
    path = rng.choice(PATHS)
    if path.kind == "link":
        return Leaf(path, rng.choice(("==", "!=")), None)
    if path.kind == "int":
        op = rng.choice(("==", "!=", "<", "<=", ">", ">=", "in"))
        if op == "in":
            return Leaf(path, op, tuple(rng.choice((None, 0, 1, 2, 5))
                                        for _ in range(rng.randint(1, 3))))
        return Leaf(path, op, None if op in ("==", "!=") and rng.random() < 0.3
                    else rng.randint(-1, 4))
    op = rng.choice(("==", "!=", "<", ">=", "like", "ilike", "like", "ilike", "in"))
    if op in ("like", "ilike"):
        return Leaf(path, op, _pattern(rng))
    if op == "in":
        return Leaf(path, op, tuple(rng.choice((*STRINGS, None)) for _ in range(rng.randint(1, 3))))
    return Leaf(path, op, None if op in ("==", "!=") and rng.random() < 0.3
                else rng.choice(STRINGS))


def _tree(rng: random.Random, depth: int = 0) -> Leaf | Node:
    choice = rng.randint(0, 5 if depth < 2 else 0)
    if choice <= 2:
        return _leaf(rng)
    if choice == 3:
        return Node("not", (_tree(rng, depth + 1),))
    return Node("and" if choice == 4 else "or",
                tuple(_tree(rng, depth + 1) for _ in range(rng.randint(2, 3))))


def random_case(rng: random.Random) -> Case:
    """One random query over `LikeFrame`, in text and expression form."""
    tree = _tree(rng)
    return Case(tree, _text(tree), lambda: select(expression(tree)))


def _literal(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, str):
        # A text query's strings unescape a backslash first, as Python's do.
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value)


def _text(tree: Leaf | Node) -> str:
    if isinstance(tree, Node):
        if tree.op == "not":
            return f"not ({_text(tree.parts[0])})"
        return "(" + f" {tree.op} ".join(_text(p) for p in tree.parts) + ")"
    path = f"LikeFrame.{tree.path.text}"
    if tree.op == "in":
        return f"{path} in ({', '.join(_literal(v) for v in tree.value)})"
    return f"{path} {tree.op} {_literal(tree.value)}"


def expression(tree: Leaf | Node) -> Any:
    """The expression-API form of `tree`."""
    if isinstance(tree, Node):
        parts = [expression(p) for p in tree.parts]
        if tree.op == "not":
            return ~parts[0]
        result = parts[0]
        for part in parts[1:]:
            result = (result & part) if tree.op == "and" else (result | part)
        return result
    path: Any = LikeFrame
    for name in tree.path.steps:
        path = getattr(path, name)
    if tree.path.index is not None:
        path = path[tree.path.index]
    value = tree.value
    return {"==": lambda: path == value, "!=": lambda: path != value,
            "<": lambda: path < value, "<=": lambda: path <= value,
            ">": lambda: path > value, ">=": lambda: path >= value,
            "like": lambda: path.like(value), "ilike": lambda: path.ilike(value),
            "in": lambda: path.in_(list(value))}[tree.op]()


# -- the oracle ------------------------------------------------------------------------------
def expected(world: dict[int, Record], case: Case) -> set[int]:
    """The serials of the frames `case` selects, by the stated semantics."""
    return {serial for serial, record in world.items() if _holds(case.tree, record)}


def _holds(tree: Leaf | Node, record: Record) -> bool:
    if isinstance(tree, Node):
        results = [_holds(part, record) for part in tree.parts]
        return (not results[0]) if tree.op == "not" else \
            all(results) if tree.op == "and" else any(results)
    return any(_leaf_holds(tree, v) for v in _values(tree.path, record))


def _values(path: PathSpec, record: Record) -> list[Any]:
    values: list[Any] = [record]
    for name in path.steps:
        following: list[Any] = []
        for value in values:
            if value is None:  # past a missing link everything is missing
                following.append(None)
            elif name in _LINK_LISTS:
                following.extend(getattr(value, name))
            else:
                following.append(getattr(value, name))
        values = following
    if path.index is not None:
        values = [v[path.index] if v and -len(v) <= path.index < len(v) else None
                  for v in values]
    return values


def _ascii_lower(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _like(pattern: str, value: str) -> bool:
    regex, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 1
            regex += re.escape(pattern[i])
        else:
            regex += {"%": ".*", "_": "."}.get(char, re.escape(char))
        i += 1
    return re.fullmatch(regex, value, re.DOTALL) is not None


def _leaf_holds(leaf: Leaf, value: Any) -> bool:
    op, wanted = leaf.op, leaf.value
    if op == "in":
        return any(value == w if w is not None else value is None for w in wanted)
    if wanted is None:
        return (value is None) if op == "==" else (value is not None)
    if op == "!=":
        return value is None or value != wanted
    if value is None:
        return False
    if op == "like":
        return _like(wanted, value)
    if op == "ilike":
        return _like(_ascii_lower(wanted), _ascii_lower(value))
    return {"==": value == wanted, "<": value < wanted, "<=": value <= wanted,
            ">": value > wanted, ">=": value >= wanted}[op]


def serials(query: Any) -> set[int]:
    """The serials of a query's frames."""
    return {frame.serial for frame in query.all()}
