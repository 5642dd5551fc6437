"""Query expressions: a persistent class read as the set of its instances.

`RawFrame.exptime > 10` builds a small frozen tree (paths, comparisons, boolean nodes) that can
be printed, compared in tests and compiled to SQL by `awlineage.query`. Misuse raises at once,
naming the class and the attribute.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from awlineage.errors import (
    AwlError,
    PersistentTypeError,
    PersistentValueError,
    QueryError,
    UnknownAttributeError,
)
from awlineage.persistence._like import LikePattern, parse_like
from awlineage.persistence._properties import Kind, Property

if TYPE_CHECKING:
    from awlineage.persistence._object import DBObject

COMPARATORS = ("==", "!=", "<", "<=", ">", ">=")

MAX_PATH_STEPS = 1_000
"""Most attributes one path may chain (``X.previous.previous...chip``)."""
MAX_PATTERN_CHARS = 10_000
"""Longest LIKE pattern (SQLite refuses patterns over 50,000 bytes)."""
MAX_IN_VALUES = 5_000
"""Most values one ``in_()`` may list."""
MAX_LIST_INDEX = 2**31 - 1
"""Largest list index, either way (PostgreSQL's ``->>`` takes a 32-bit integer)."""
_PRECEDENCE_HINT = (
    "Python's & and | bind tighter than comparisons: write (A.x > 1) & (A.y == 2)"
)


class Expression:
    """A boolean condition on objects of one class; combine with ``&``, ``|`` and ``~``."""

    def __and__(self, other: Expression) -> Expression:
        return And((self, _as_expression(other)))

    def __or__(self, other: Expression) -> Expression:
        return Or((self, _as_expression(other)))

    def __invert__(self) -> Expression:
        return Not(self)

    def __rand__(self, other: Any) -> Expression:
        return And((_as_expression(other), self))

    def __ror__(self, other: Any) -> Expression:
        return Or((_as_expression(other), self))

    def __bool__(self) -> bool:
        raise QueryError(
            "a query expression has no truth value: use & | ~ instead of and / or / not, "
            "and no chained comparisons (a < X.b < c)"
        )

    def children(self) -> tuple[Expression, ...]:
        """The conditions this one is made of (none for a comparison)."""
        return ()

    def paths(self) -> list[Path]:
        """Every attribute path in this expression, walked without recursion so that a
        deeply nested expression gets a clear error later rather than a RecursionError."""
        found: list[Path] = []
        stack: list[Expression] = [self]
        while stack:
            node = stack.pop()
            path = getattr(node, "path", None)
            if isinstance(path, Path):
                found.append(path)
            stack.extend(reversed(node.children()))
        return found



def attribute_guess(name: str, known: Iterable[str]) -> str:
    """`` (did you mean a or b?)`` naming the attributes of `known` most like `name`, else
    ``""``.

    Parameters
    ----------
    name : str
        The unknown attribute.
    known : iterable of str
        The attributes there are.

    Returns
    -------
    str
        The guess, with a leading space, or the empty string.
    """
    near = difflib.get_close_matches(name, list(known), n=3, cutoff=0.7)
    return f" (did you mean {' or '.join(near)}?)" if near else ""

def _as_expression(value: Any) -> Expression:
    if isinstance(value, Expression):
        return value
    raise QueryError(f"cannot combine a query expression with {brief(value)}; "
                     f"{_PRECEDENCE_HINT}")


def find_property(cls: type, name: str) -> tuple[Property, tuple[type, ...]]:
    """Find attribute `name` on persistent class `cls`, or on the subclasses that declare it.

    Parameters
    ----------
    cls : type
        A persistent class.
    name : str
        The attribute's name.

    Returns
    -------
    tuple of (Property, tuple of type)
        The property and the classes whose objects can have it (`cls` itself, or the
        top-most subclasses declaring it: a link to DBObject may be followed to ``.chip``).

    Raises
    ------
    UnknownAttributeError
        When neither `cls` nor any of its subclasses declares `name`.
    QueryError
        When subclasses declare `name` with different kinds or types.
    """
    props = cls._properties  # type: ignore[attr-defined]
    if name in props:
        return props[name], (cls,)
    found: list[type] = []
    stack: list[type] = list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        if name in sub._properties:  # type: ignore[attr-defined]
            found.append(sub)
        else:
            stack.extend(sub.__subclasses__())
    if not found:
        raise UnknownAttributeError(
            f"{cls.__name__} has no persistent attribute {name!r}"
            + (" (nor has any of its subclasses)" if cls.__subclasses__() else "")
            + attribute_guess(name, props)
        )
    first = found[0]._properties[name]  # type: ignore[attr-defined]
    for other in found[1:]:
        prop = other._properties[name]  # type: ignore[attr-defined]
        if (prop.kind, prop.type) != (first.kind, first.type):
            raise QueryError(
                f"{cls.__name__}.{name} is ambiguous: {first.qualified_name} and "
                f"{prop.qualified_name} differ in kind or type"
            )
    return first, tuple(sorted(found, key=lambda c: c.__name__))


@dataclass(frozen=True, eq=False)
class Step:
    """One attribute on a path, and the classes whose tables hold it."""

    prop: Property
    classes: tuple[type, ...]


@dataclass(frozen=True, eq=False)
class Path:
    """An attribute path such as ``RawFrame.instrument.name`` or ``X.keywords[2]``.

    Reading a name on a path that ends in a link follows the link to that attribute, even
    when the name is also one of the path's own members (``Frame.previous.overlaps`` is the
    linked frame's ``overlaps`` attribute whenever the link's class has one; an attribute only
    a subclass of it declares is reached with ``Path.attribute``). The path's own data
    live in underscored fields that no persistent attribute can shadow; a shadowed method is
    still reached through the class, as ``Path.in_(Frame.previous, frames)``.

    A path is made by reading an attribute on a persistent class, never by calling the
    class; comparing it (``==``, ``<``, ``like``, ``in_``...) makes a query condition for
    `select`. Public as ``awlineage.AttributePath``.

    Parameters
    ----------
    _root : type
        The persistent class the path starts from.
    _steps : tuple of Step
        The attributes the path reads, in order.
    _index : int, optional
        The list index the path ends in, if any.

    Raises
    ------
    UnknownAttributeError
        When a step names an attribute the linked class does not declare.

    Examples
    --------
    >>> from awlineage import AttributePath, DBObject, connect, persistent, select
    >>> class Sensor(DBObject):
    ...     name = persistent("Sensor name", str, "")
    ...     spare = persistent("The sensor that replaces this one when it fails")
    >>> path = Sensor.spare.name
    >>> isinstance(path, AttributePath), path.root.__name__, len(path.steps)
    (True, 'Sensor', 2)
    >>> path == "A"
    Sensor.spare.name == 'A'
    >>> db = connect("sqlite:///doc.db")
    >>> Sensor(name="B", spare=Sensor(name="A")).commit()
    >>> [sensor.name for sensor in select(Sensor.spare.name == "A")]
    ['B']
    """

    _root: type
    _steps: tuple[Step, ...]
    _index: int | None = None

    @classmethod
    def start(cls, root: type | None, prop: Property,
              classes: tuple[type, ...] | None = None) -> Path:
        """The one-step path of `prop` read on class `root`; `classes` are those of its
        subclasses that declare `prop`, when `root` does not (see `find_property`)."""
        root = root if root is not None else prop.owner
        if root is None:
            raise QueryError(f"{prop.name} is read before its class was made")
        return cls(root, (Step(prop, classes or (root,)),))

    @property
    def _last(self) -> Property:
        return self._steps[-1].prop

    @property
    def root(self) -> type:
        """The class the path starts from."""
        return self._root

    @property
    def steps(self) -> tuple[Step, ...]:
        """The attributes the path reads, in order."""
        return self._steps

    @property
    def index(self) -> int | None:
        """The list index the path ends in (``X.keywords[2]``), or None."""
        return self._index

    @property
    def last(self) -> Property:
        """The property the path ends in."""
        return self._last

    def __getattribute__(self, name: str) -> Any:
        if name in _SHADOWABLE:
            followed = Path._linked_attribute(self, name)
            if followed is not None:
                return followed
        return object.__getattribute__(self, name)

    def _linked_attribute(self, name: str) -> Path | None:
        """The path to attribute `name` of the linked class, when this path ends in a link
        whose declared class has such an attribute (its own or inherited); None otherwise.
        Subclasses do not count: a class defined anywhere with an attribute ``in_`` must not
        change what ``Run.output.in_`` means for a link to any object."""
        last = self._last
        if self._index is not None or not (last.kind.is_link or last.kind is Kind.LINK_LIST):
            return None
        if name not in last.type._properties:
            return None
        return Path.attribute(self, name)

    def __hash__(self) -> int:
        return id(self)

    def __getattr__(self, name: str) -> Path:
        if name.startswith("_"):
            raise AttributeError(name)
        return Path.attribute(self, name)

    def attribute(self, name: str) -> Path:
        """Follow the link at the end of this path to attribute `name`."""
        last = self._last
        if self._index is not None or not (last.kind.is_link or last.kind is Kind.LINK_LIST):
            raise UnknownAttributeError(
                f"{self} is a {last.kind.value}, not a link; it has no attribute {name!r}"
            )
        if len(self._steps) >= MAX_PATH_STEPS:
            raise QueryError(f"{self._root.__name__}.{self._steps[0].prop.name}...: a path may "
                             f"chain at most {MAX_PATH_STEPS} attributes")
        prop, classes = find_property(last.type, name)
        return Path(self._root, (*self._steps, Step(prop, classes)))

    def __getitem__(self, index: int) -> Path:
        if self._last.kind is not Kind.DESCRIPTOR_LIST or self._index is not None:
            raise QueryError(f"{self} is a {self._last.kind.value}; only descriptor lists "
                             "take an index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise QueryError(f"{self}[...] needs an int index, got {brief(index)}")
        if abs(index) > MAX_LIST_INDEX:
            raise QueryError(f"{self}[{brief(index)}]: a list index may be at most "
                             f"{MAX_LIST_INDEX:,} either way")
        return Path(self._root, self._steps, index)

    # -- values ---------------------------------------------------------------------------
    def _element_kind(self) -> Kind:
        kind = self._last.kind
        if kind is Kind.DESCRIPTOR_LIST and self._index is not None:
            return Kind.DESCRIPTOR
        return kind

    def check_value(self, value: Any, op: str) -> Any:
        """Normalise a value compared with this path, or raise naming the attribute.

        Values Python can hold but no database can compare (a float beyond 1e308, a date
        moved past year 9999 by its offset, a lone surrogate) raise `PersistentValueError`.
        """
        try:
            return _storable(self._check_value(value, op), str(self))
        except AwlError:
            raise
        except (OverflowError, ValueError) as exc:
            raise PersistentValueError(f"{self} {op} {brief(value)}: {exc}") from None

    def _check_value(self, value: Any, op: str) -> Any:
        kind = self._element_kind()
        if value is not None and kind is Kind.DESCRIPTOR and self._index is None:
            from awlineage.persistence import _sky_predicates as sky

            sky.refuse_comparison(self, op)
        if value is None:
            if op not in ("==", "!="):
                raise QueryError(f"{self} {op} None: only == None and != None are allowed")
            if kind in (Kind.LINK_LIST, Kind.DESCRIPTOR_LIST):
                raise QueryError(f"{self} is a list; compare an element or use .contains()")
            return None
        if self._last.type is bool and op not in ("==", "!="):
            raise QueryError(f"{self} is a bool: only == and != compare it")
        if kind is Kind.DESCRIPTOR and self._index is not None:
            return self._last.check_element(value, self._owner_text())
        if kind is Kind.DESCRIPTOR:
            return self._last.check(value, self._owner_text())
        if kind.is_link:
            if op not in ("==", "!="):
                raise QueryError(f"{self} is a link: only == and != compare it")
            return self._last.check(value)
        raise QueryError(
            f"{self} is a {kind.value}: compare an element ({self}[i]) or use .contains()"
        )

    def _compare(self, op: str, value: Any) -> Comparison:
        from awlineage.persistence._arithmetic import Term, compare

        if isinstance(value, Path | Term):
            return compare(self, op, value)  # type: ignore[return-value]
        if isinstance(value, Expression):
            raise QueryError(f"comparing an attribute with a condition ({self} {op} "
                             f"{value!r}) is not supported")
        return Comparison(self, op, Path.check_value(self, value, op))

    def __eq__(self, value: Any) -> Comparison:  # type: ignore[override]
        return self._compare("==", value)

    def __ne__(self, value: Any) -> Comparison:  # type: ignore[override]
        return self._compare("!=", value)

    def __lt__(self, value: Any) -> Comparison:
        return self._compare("<", value)

    def __le__(self, value: Any) -> Comparison:
        return self._compare("<=", value)

    def __gt__(self, value: Any) -> Comparison:
        return self._compare(">", value)

    def __ge__(self, value: Any) -> Comparison:
        return self._compare(">=", value)

    def __and__(self, other: Any) -> Expression:
        raise QueryError(f"{self} is an attribute, not a condition; {_PRECEDENCE_HINT}")

    __rand__ = __or__ = __ror__ = __and__

    # -- arithmetic: terms and their comparisons live in _arithmetic ----------------------
    def _arithmetic(self, op: str, other: Any, reflected: bool = False) -> Any:
        from awlineage.persistence._arithmetic import combine

        return combine(self, op, other, reflected)

    def __add__(self, other: Any) -> Any:
        return self._arithmetic("+", other)

    def __radd__(self, other: Any) -> Any:
        return self._arithmetic("+", other, True)

    def __sub__(self, other: Any) -> Any:
        return self._arithmetic("-", other)

    def __rsub__(self, other: Any) -> Any:
        return self._arithmetic("-", other, True)

    def __mul__(self, other: Any) -> Any:
        return self._arithmetic("*", other)

    def __rmul__(self, other: Any) -> Any:
        return self._arithmetic("*", other, True)

    def __truediv__(self, other: Any) -> Any:
        return self._arithmetic("/", other)

    def __invert__(self) -> Expression:
        raise QueryError(f"~{self}: ~ negates a condition, and {self} is an attribute; "
                         f"compare it first, as ~({self} == value)")

    def __rtruediv__(self, other: Any) -> Any:
        return self._arithmetic("/", other, True)

    def __neg__(self) -> Any:
        from awlineage.persistence._arithmetic import attribute

        return -attribute(self, "-")

    def like(self, pattern: str) -> Like:
        """Match a string attribute against an SQL LIKE pattern, case-sensitive.

        ``%`` stands for any run of characters, ``_`` for one character, and a backslash
        makes the next character literal (see `awlineage.persistence._like`).

        Parameters
        ----------
        pattern : str
            The pattern.

        Returns
        -------
        Like
            The condition, for `select`.

        Raises
        ------
        QueryError
            On an attribute that is not a string, or for too long a pattern.
        PersistentTypeError
            For a pattern that is not a str.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Sensor(DBObject):
        ...     name = persistent("Sensor name", str, "")
        ...     channel = persistent("Readout channel", int, 0)
        ...     tags = persistent("Labels", str, [])
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Sensor(name="CCD-A", channel=1, tags=["blue"]),
        ...         Sensor(name="ccd-b", channel=2), Sensor(name="IR-1", channel=3)])
        >>> [s.name for s in select(Sensor.name.like("CCD%"))]
        ['CCD-A']
        >>> [s.name for s in select(Sensor.name.ilike("ccd%"))]
        ['CCD-A', 'ccd-b']
        """
        return Path._like(self, pattern, "like", case_sensitive=True)

    def ilike(self, pattern: str) -> Like:
        """Match like `like`, ignoring the case of the ASCII letters A-Z.

        Parameters
        ----------
        pattern : str
            The pattern: ``%`` any run of characters, ``_`` one character.

        Returns
        -------
        Like
            The condition, for `select`.

        Raises
        ------
        QueryError
            On an attribute that is not a string, or for too long a pattern.
        PersistentTypeError
            For a pattern that is not a str.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Sensor(DBObject):
        ...     name = persistent("Sensor name", str, "")
        ...     channel = persistent("Readout channel", int, 0)
        ...     tags = persistent("Labels", str, [])
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Sensor(name="CCD-A", channel=1, tags=["blue"]),
        ...         Sensor(name="ccd-b", channel=2), Sensor(name="IR-1", channel=3)])
        >>> select(Sensor.name.ilike("%-B")).count()
        1
        """
        return Path._like(self, pattern, "ilike", case_sensitive=False)

    def _like(self, pattern: Any, name: str, case_sensitive: bool) -> Like:
        if self._element_kind() is not Kind.DESCRIPTOR or self._last.type is not str:
            raise QueryError(f"{self}.{name}(): only string attributes take a pattern")
        if not isinstance(pattern, str):
            raise PersistentTypeError(f"{self}.{name}() takes a str pattern, got "
                                      f"{type(pattern).__name__} {brief(pattern)}")
        try:
            pattern = self._last.check_element(pattern, self._owner_text()) \
                if self._index is not None else self._last.check(pattern)
        except AwlError:
            raise
        except (OverflowError, ValueError) as exc:  # e.g. too long an int to print
            raise PersistentValueError(f"{self}.{name}({brief(pattern)}): {exc}") from None
        pattern = _storable(pattern, str(self))
        if len(pattern) > MAX_PATTERN_CHARS:
            raise QueryError(f"{self}.{name}(): the pattern has {len(pattern):,} characters; "
                             f"the limit is {MAX_PATTERN_CHARS:,}")
        return Like(self, pattern, parse_like(pattern, f"{self}.{name}()"), case_sensitive)

    def in_(self, values: Any) -> In:
        """Require the attribute to equal one of `values`.

        A `range` longer than `MAX_IN_VALUES` is kept as its ends and stride (compiled to
        BETWEEN, see `awlineage.persistence._ranges`), a shorter one is listed.

        Parameters
        ----------
        values : iterable
            A list, tuple, set or range of values of the attribute's type.

        Returns
        -------
        Expression
            The condition, for `select`.

        Raises
        ------
        QueryError
            For something that is not a collection, or more than `MAX_IN_VALUES` values.
        PersistentTypeError
            For a value of the wrong type.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Sensor(DBObject):
        ...     name = persistent("Sensor name", str, "")
        ...     channel = persistent("Readout channel", int, 0)
        ...     tags = persistent("Labels", str, [])
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Sensor(name="CCD-A", channel=1, tags=["blue"]),
        ...         Sensor(name="ccd-b", channel=2), Sensor(name="IR-1", channel=3)])
        >>> [s.name for s in select(Sensor.channel.in_([1, 3]))]
        ['CCD-A', 'IR-1']
        >>> select(Sensor.channel.in_(range(2, 10))).count()
        2
        """
        if isinstance(values, range) and len(values) > MAX_IN_VALUES:
            from awlineage.persistence._ranges import from_python_range

            return from_python_range(self, values)  # type: ignore[return-value]
        if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
            raise QueryError(f"{self}.in_() takes a list of values, got {brief(values)}")
        checked: list[Any] = []
        for value in values:
            if len(checked) == MAX_IN_VALUES:
                raise QueryError(f"{self}.in_(): more than {MAX_IN_VALUES:,} values; the limit "
                                 f"is {MAX_IN_VALUES:,} (select on a shared attribute instead)")
            checked.append(Path.check_value(self, value, "=="))
        return In(self, tuple(checked))

    def contains(self, value: Any) -> Expression:
        """Require a list, footprint or interval attribute to hold `value`.

        A descriptor list holds `value`, a link list holds the object `value`, a footprint
        holds a position, or an interval holds a time or an interval.

        Parameters
        ----------
        value : object
            A list element, a persistent object, a position or a time.

        Returns
        -------
        Expression
            The condition, for `select`.

        Raises
        ------
        QueryError
            On an attribute that has no members.
        PersistentTypeError
            For a value of the wrong type.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Sensor(DBObject):
        ...     name = persistent("Sensor name", str, "")
        ...     channel = persistent("Readout channel", int, 0)
        ...     tags = persistent("Labels", str, [])
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Sensor(name="CCD-A", channel=1, tags=["blue"]),
        ...         Sensor(name="ccd-b", channel=2), Sensor(name="IR-1", channel=3)])
        >>> [s.name for s in select(Sensor.tags.contains("blue"))]
        ['CCD-A']
        """
        from awlineage.persistence import _sky_predicates as sky

        if sky.value_kind(self) in ("footprint", "interval"):
            return sky.contains(self, value)
        kind = self._last.kind
        if (kind is Kind.DESCRIPTOR_LIST and self._index is None) or kind is Kind.LINK_LIST:
            try:
                member = self._last.check_element(value, self._owner_text())
            except AwlError:
                raise
            except (OverflowError, ValueError) as exc:
                raise PersistentValueError(f"{self} contains {brief(value)}: {exc}") from None
            return Contains(self, _storable(member, str(self)))
        raise QueryError(f"{self}.contains(): only lists have members")

    def within(self, region: Any) -> Expression:
        """A position inside a sky region (`Circle`, `Polygon`, `Box`), or a datetime inside
        an `Interval`."""
        from awlineage.persistence import _sky_predicates as sky

        return sky.within(self, region)

    def overlaps(self, other: Any) -> Expression:
        """A footprint sharing sky with a region, or an interval sharing time with an
        `Interval` (on a position or a datetime: the same as `within`)."""
        from awlineage.persistence import _sky_predicates as sky

        return sky.overlaps(self, other)

    def asc(self) -> Ordering:
        """Order ascending on this attribute, for `Query.order_by`.

        Returns
        -------
        Ordering
            The ordering term.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Sensor(DBObject):
        ...     name = persistent("Sensor name", str, "")
        ...     channel = persistent("Readout channel", int, 0)
        ...     tags = persistent("Labels", str, [])
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Sensor(name="CCD-A", channel=1, tags=["blue"]),
        ...         Sensor(name="ccd-b", channel=2), Sensor(name="IR-1", channel=3)])
        >>> [s.channel for s in select(Sensor).order_by(Sensor.channel.asc())]
        [1, 2, 3]
        """
        return Ordering(self, descending=False)

    def desc(self) -> Ordering:
        """Order descending on this attribute, for `Query.order_by`.

        Returns
        -------
        Ordering
            The ordering term.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Sensor(DBObject):
        ...     name = persistent("Sensor name", str, "")
        ...     channel = persistent("Readout channel", int, 0)
        ...     tags = persistent("Labels", str, [])
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Sensor(name="CCD-A", channel=1, tags=["blue"]),
        ...         Sensor(name="ccd-b", channel=2), Sensor(name="IR-1", channel=3)])
        >>> [s.channel for s in select(Sensor).order_by(Sensor.channel.desc())]
        [3, 2, 1]
        """
        return Ordering(self, descending=True)

    def _owner_text(self) -> str:
        """What the last attribute is reached through, for messages: ``Scaled.obs`` in
        ``Scaled.obs.flux`` (not ``Scaled``, which may have a ``flux`` of its own)."""
        return ".".join([self._root.__name__, *(s.prop.name for s in self._steps[:-1])])

    def __str__(self) -> str:
        text = ".".join([self._root.__name__, *(s.prop.name for s in self._steps)])
        return text if self._index is None else f"{text}[{self._index}]"

    __repr__ = __str__


_SHADOWABLE = frozenset(name for name in dir(Path) if not name.startswith("_"))
"""The path's own public members: a persistent attribute of a linked class by one of these
names is reached all the same (see `Path.__getattribute__`)."""


def brief(value: Any) -> str:
    """A short description of a value for an error message.

    It never raises (a 5,000-digit int cannot even be turned into text).

    Parameters
    ----------
    value : Any
        Any value.

    Returns
    -------
    str
        Its repr, cut to 80 characters, or a description when the repr fails or is too large.

    Examples
    --------
    >>> brief(10 ** 5000)
    'an integer of about 5,001 digits'
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    try:
        text = repr(value)
    except Exception:  # a user's object whose __repr__ fails still gets an error message
        return f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."


def _storable(value: Any, where: str) -> Any:
    """`value`, refused when it is text the database cannot take (a lone surrogate, as from
    undecodable command-line bytes, has no UTF-8 form)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise PersistentValueError(
                f"{where}: {value[max(exc.start - 10, 0):exc.start + 10]!r} is not valid "
                f"Unicode (lone surrogate at position {exc.start})"
            ) from None
    return value


def format_value(value: Any) -> str:
    """Write a value as the textual query language does."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if value is None:
        return "None"
    if hasattr(value, "object_id") and hasattr(type(value), "_properties"):
        return f"<{type(value).__name__} {value.object_id}>"
    return repr(value)


@dataclass(frozen=True, eq=False)
class Comparison(Expression):
    """``path op value``; ``== None`` means IS NULL."""

    path: Path
    op: str
    value: Any

    def __repr__(self) -> str:
        return f"{self.path} {self.op} {format_value(self.value)}"


@dataclass(frozen=True, eq=False)
class Like(Expression):
    """``path like pattern`` (or ``ilike``, without `case_sensitive`)."""

    path: Path
    pattern: str
    parsed: LikePattern
    case_sensitive: bool = True

    def __repr__(self) -> str:
        return f"{self.path} {'like' if self.case_sensitive else 'ilike'} {self.pattern!r}"


@dataclass(frozen=True, eq=False)
class In(Expression):
    """``path in (v1, v2, ...)``."""

    path: Path
    values: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"{self.path} in ({', '.join(format_value(v) for v in self.values)})"


@dataclass(frozen=True, eq=False)
class Contains(Expression):
    """``path contains value``: list membership."""

    path: Path
    value: Any

    def __repr__(self) -> str:
        return f"{self.path} contains {format_value(self.value)}"


@dataclass(frozen=True, eq=False)
class And(Expression):
    """All parts hold."""

    parts: tuple[Expression, ...]

    def children(self) -> tuple[Expression, ...]:
        return self.parts

    def __repr__(self) -> str:
        return "(" + " and ".join(map(repr, self.parts)) + ")"


@dataclass(frozen=True, eq=False)
class Or(Expression):
    """At least one part holds."""

    parts: tuple[Expression, ...]

    def children(self) -> tuple[Expression, ...]:
        return self.parts

    def __repr__(self) -> str:
        return "(" + " or ".join(map(repr, self.parts)) + ")"


@dataclass(frozen=True, eq=False)
class Not(Expression):
    """The part does not hold (a missing value counts as not holding)."""

    part: Expression

    def children(self) -> tuple[Expression, ...]:
        return (self.part,)

    def __repr__(self) -> str:
        return f"not {self.part!r}"


@dataclass(frozen=True, eq=False)
class Ordering:
    """An order-by term."""

    path: Path
    descending: bool = False


def root_class(expression: Expression) -> type[DBObject]:
    """The class an expression selects from: the most derived root of its paths.

    Parameters
    ----------
    expression : Expression
        A condition.

    Returns
    -------
    type of DBObject
        The most derived class among the roots of its attribute paths.

    Raises
    ------
    QueryError
        When the expression mixes unrelated classes or names no attribute.
    """
    roots = {p._root for p in expression.paths()}
    best = None
    for root in roots:
        if best is None or issubclass(root, best):
            best = root
        elif not issubclass(best, root):
            from awlineage.persistence._meta import written_name

            first, second = ((best.__name__, root.__name__) if best.__name__ != root.__name__
                             else (written_name(best), written_name(root)))
            raise QueryError(f"one query mixes unrelated classes {first} and {second}")
    if best is None:
        raise QueryError("the expression names no attribute")
    return best
