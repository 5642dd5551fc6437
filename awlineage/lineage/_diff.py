"""``diff(a, b)``: where the lineage of two objects differs (seed 003 Fig. 4): attributes,
parameters and dependencies, walked side by side until the two sides are the same object.
Causes (parameters, code versions, inputs) come first, then the values that follow from them,
then file names and hashes, which differ whenever anything else does. When the two objects'
files hold tables (a source list's catalogue), their rows are compared too (`compare_tables`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from awlineage.database import Database, current_database
from awlineage.lineage._info import _load_links, describe, format_value
from awlineage.lineage._table_comparison import TableComparison
from awlineage.lineage._table_diff import compare_tables
from awlineage.persistence import DBObject, Kind


class Category(Enum):
    """What kind of difference a `Difference` is, in the order a diff lists them."""

    PARAMETERS = "parameters"
    CODE = "code versions and environment"
    INPUTS = "inputs"
    RESULTS = "results"
    FILES = "files"

    @property
    def is_cause(self) -> bool:
        """Whether differences of this kind explain others (rather than follow from them)."""
        return self in (Category.PARAMETERS, Category.CODE, Category.INPUTS)


_ORDER = list(Category)
_CODE_ATTRIBUTES = frozenset({"code_version", "python", "packages"})
_FILE_ATTRIBUTES = frozenset({"filename", "file_size", "content_hash"})


@dataclass(frozen=True)
class Difference:
    """One place where the two lineages differ.

    Attributes
    ----------
    path
        Where, from the two roots: ``process_params.clip_sigma``, ``raw_frames[2].chip``.
    a, b
        The two values (objects, or None when one side has nothing there).
    """

    path: str
    a: Any
    b: Any

    def __str__(self) -> str:
        return f"{self.path}: {_show(self.a)} -> {_show(self.b)}"

    @property
    def category(self) -> Category:
        """Parameters, code, inputs (a link to nothing, another class, another number of
        members), results (other values) or files (names, sizes, hashes)."""
        steps = self.path.replace("[", ".[").split(".")
        last = steps[-1]
        if "process_params" in steps or (last == "parameters" and "process_run" in steps):
            return Category.PARAMETERS
        if last in _CODE_ATTRIBUTES:
            return Category.CODE
        if last == "class" or _holds_objects(self.a) or _holds_objects(self.b):
            return Category.INPUTS
        if last in _FILE_ATTRIBUTES:
            return Category.FILES
        return Category.RESULTS


def _holds_objects(value: Any) -> bool:
    return isinstance(value, DBObject) or (isinstance(value, list) and bool(value)
                                           and isinstance(value[0], DBObject))


def _show(value: Any) -> str:
    if isinstance(value, DBObject):
        return describe(value)
    if isinstance(value, list) and value and isinstance(value[0], DBObject):
        return f"[{len(value)} object{'s' if len(value) != 1 else ''}]"
    return format_value(value)


class LineageDiff(list):
    """The differences of two lineages (a list of `Difference`, causes first), printable as
    lines under a heading per category; `tables` compares the rows of the two objects' tables
    (after the results)."""

    def __init__(self, differences: Any = (), tables: list[TableComparison] | None = None
                 ) -> None:
        super().__init__(differences)
        self.tables: list[TableComparison] = tables or []

    def __str__(self) -> str:
        if not self and not self.tables:
            return "no differences"
        lines: list[str] = []
        for category in _ORDER:
            found = [d for d in self if d.category is category]
            if found:
                lines.append(f"{category.value}{' (causes)' if category.is_cause else ''}:")
                lines.extend(f"  {d}" for d in found)
            if category is Category.RESULTS and self.tables:
                lines.append("table rows (numbered from 0):")
                lines.extend(f"  {line}" for t in self.tables for line in t.lines())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The differences and table comparisons as plain data (``awl diff --json``)."""
        return {"differences": [{"path": d.path, "category": d.category.value,
                                 "a": _plain(d.a), "b": _plain(d.b)} for d in self],
                "tables": [t.to_dict() for t in self.tables]}

    def to_json(self) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict())


def _plain(value: Any) -> Any:
    """A difference's value as JSON data: objects as class and object_id."""
    if isinstance(value, DBObject):
        return {"class": type(value).__name__, "object_id": value.object_id}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return format_value(value)


def diff(a: DBObject, b: DBObject, depth: int | None = None, *,
         database: Database | None = None, tables: bool = True) -> LineageDiff:
    """The attributes, parameters and dependencies in which the lineages of `a` and `b` differ.

    Linked objects are compared attribute by attribute, recursively, unless both sides link
    the same object (then their lineage is the same). Attributes that differ between any two
    runs (times, host, process id) are left out, as each class declares in
    ``__diff_ignore__``.

    Parameters
    ----------
    a, b : DBObject
        The two objects, usually two versions or two makes of one product.
    depth : int or None, optional
        Levels of links to follow; None for all.
    database : Database or None, optional
        The database to load linked objects from; the current session's by default.
    tables : bool, optional
        Whether to compare the tables of `a`'s and `b`'s FITS files row by row (when they
        are data objects with different files); reads each file once.

    Returns
    -------
    LineageDiff
        A list of `Difference` (path, value in `a`, value in `b`), causes (parameters, code
        versions, inputs) first; prints them grouped by category, empty when none. Its
        ``tables`` holds a `TableComparison` per table HDU: rows identical, changed, only in
        one (matched by row number when the tables have the same length, see
        `compare_tables`).

    Raises
    ------
    ObjectNotFoundError
        When a linked object is not stored in the database.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocDiffParameters(DBObject):
    ...     offset = persistent("Level subtracted [ADU]", float, 100.0)
    >>> class DocDiffReduced(Process):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    ...     process_params = persistent("Parameters", DocDiffParameters, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.level - self.process_params.offset
    >>> first = DocDiffReduced(level=130.0, process_params=DocDiffParameters())
    >>> second = DocDiffReduced(level=130.0, process_params=DocDiffParameters(offset=90.0))
    >>> for target in (first, second):
    ...     target.make()
    ...     target.commit()
    >>> print(diff(first, second))
    parameters (causes):
      process_params.offset: 100.0 -> 90.0
    results:
      value: 30.0 -> 40.0
    """
    db = database or current_database()
    found = LineageDiff()
    level = [("", a, b)]
    seen: set[tuple[int, int]] = set()
    steps = 0
    while level and (depth is None or steps <= depth):
        _load_links(db, [o for _, x, y in level for o in (x, y)])
        next_level: list[tuple[str, DBObject, DBObject]] = []
        for prefix, x, y in level:
            if (x.object_id, y.object_id) in seen:
                continue
            seen.add((x.object_id, y.object_id))
            next_level.extend(_compare(prefix, x, y, found))
        level = next_level
        steps += 1
    found.sort(key=lambda d: _ORDER.index(d.category))  # stable: walk order within each
    if tables:
        found.tables = compare_tables(a, b)
    return found


def _compare(prefix: str, x: DBObject, y: DBObject,
             found: list[Difference]) -> list[tuple[str, DBObject, DBObject]]:
    """Add the differences of `x` and `y`'s own attributes; return linked pairs to compare."""
    if type(x) is not type(y):
        found.append(Difference(prefix + "class", type(x).__name__, type(y).__name__))
        return []
    ignored = set(getattr(type(x), "__diff_ignore__", ()))
    deeper: list[tuple[str, DBObject, DBObject]] = []
    for name, prop in type(x)._properties.items():
        if prop.builtin or name in ignored:
            continue
        path = prefix + name
        u, v = getattr(x, name), getattr(y, name)
        if prop.kind.is_link:
            deeper.extend(_pair(path, u, v, found))
        elif prop.kind is Kind.LINK_LIST:
            if len(u) != len(v):
                found.append(Difference(path, u, v))
            for i, p, q in _match_members(u, v):
                deeper.extend(_pair(f"{path}[{i}]", p, q, found))
        elif u != v:
            found.append(Difference(path, u, v))
    return deeper


def _match_members(u: list[DBObject], v: list[DBObject]
                   ) -> list[tuple[int, DBObject | None, DBObject | None]]:
    """Pairs of link-list members to compare, with the position on the first side: the same
    object on both sides is no difference; the rest pair up by class, in list order."""
    common = {o.object_id for o in u} & {o.object_id for o in v}
    left = [(i, o) for i, o in enumerate(u) if o.object_id not in common]
    right: dict[type, list[DBObject]] = {}
    for o in v:
        if o.object_id not in common:
            right.setdefault(type(o), []).append(o)
    pairs: list[tuple[int, DBObject | None, DBObject | None]] = []
    for i, o in left:
        candidates = right.get(type(o))
        pairs.append((i, o, candidates.pop(0) if candidates else None))
    extra = [o for members in right.values() for o in members]
    pairs.extend((len(u) + k, None, o) for k, o in enumerate(extra))
    return pairs


def _pair(path: str, u: DBObject | None, v: DBObject | None,
          found: list[Difference]) -> list[tuple[str, DBObject, DBObject]]:
    if u is None or v is None:
        if u is not v:
            found.append(Difference(path, u, v))
        return []
    if u.object_id == v.object_id:
        return []
    return [(path + ".", u, v)]
