"""Arithmetic in query conditions: ``(Frame.exptime * 2.0 > 60)``, ``X.a - X.b < 0.5``.

Terms (numbers, numeric attributes, ``+ - * /`` and unary minus) are typed as the Butler
types them: int op int is int, anything with a float is float. The rules every database and
`evaluate` follow:

- int / int is integer division truncated toward zero (what SQL does: ``-7 / 2`` is ``-3``,
  not Python's ``-7 // 2 == -4``);
- dividing by zero gives a missing value, and so does a missing attribute and an int result
  (also an intermediate one) outside the 64-bit range; as for ``X.n != 5`` on a missing
  ``n``, a missing value makes ``!=`` hold and every other comparison not hold;
- an int term compared with a float is compared as a float.

Float results beyond about 1e308 or below about 1e-308 (not zero) are the one known difference:
PostgreSQL refuses the query (a `QueryError` naming it), SQLite computes infinity or zero.

One comparison reads attributes of one object: every attribute in it starts at the same class
and follows the same links (``X.inst.gain * X.inst.bias``, not ``X.gain * X.inst.bias``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from awlineage.errors import QueryError
from awlineage.persistence._expressions import COMPARATORS, Expression, Path, brief
from awlineage.persistence._properties import Kind

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
MAX_TERM_DEPTH = 32
"""Deepest nesting of one arithmetic term (each operation one level)."""
MAX_TERM_SIZE = 256
"""Most numbers and attributes in one arithmetic comparison."""
OPERATORS = ("+", "-", "*", "/")


class Term:
    """A numeric value in a condition: combine with ``+ - * /`` and compare with a number or
    another term."""

    type: type  # int or float
    depth: int
    size: int

    def _combine(self, op: str, other: Any, reflected: bool = False) -> Term:
        right = as_term(other, op)
        left, right = (right, self) if reflected else (self, right)
        return Operation(left, op, right)

    def __add__(self, other: Any) -> Term:
        return self._combine("+", other)

    def __radd__(self, other: Any) -> Term:
        return self._combine("+", other, True)

    def __sub__(self, other: Any) -> Term:
        return self._combine("-", other)

    def __rsub__(self, other: Any) -> Term:
        return self._combine("-", other, True)

    def __mul__(self, other: Any) -> Term:
        return self._combine("*", other)

    def __rmul__(self, other: Any) -> Term:
        return self._combine("*", other, True)

    def __truediv__(self, other: Any) -> Term:
        return self._combine("/", other)

    def __rtruediv__(self, other: Any) -> Term:
        return self._combine("/", other, True)

    def __neg__(self) -> Term:
        return Negation(self)

    def __pos__(self) -> Term:
        return self

    def __bool__(self) -> bool:
        raise QueryError(f"an arithmetic term ({self!r}) has no truth value; compare it")

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> ArithmeticComparison:  # type: ignore[override]
        return compare(self, "==", other)

    def __ne__(self, other: Any) -> ArithmeticComparison:  # type: ignore[override]
        return compare(self, "!=", other)

    def __lt__(self, other: Any) -> ArithmeticComparison:
        return compare(self, "<", other)

    def __le__(self, other: Any) -> ArithmeticComparison:
        return compare(self, "<=", other)

    def __gt__(self, other: Any) -> ArithmeticComparison:
        return compare(self, ">", other)

    def __ge__(self, other: Any) -> ArithmeticComparison:
        return compare(self, ">=", other)

    def __and__(self, other: Any) -> Expression:
        raise QueryError(f"{self!r} is a number, not a condition; Python's & and | bind "
                         "tighter than comparisons: write (A.x * 2 > 1) & (A.y == 2)")

    __rand__ = __or__ = __ror__ = __and__

    def attributes(self) -> list[Attribute]:
        """The attributes this term reads, left to right (without recursion)."""
        found: list[Attribute] = []
        stack: list[Term] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, Attribute):
                found.append(node)
            elif isinstance(node, Operation):
                stack.extend((node.right, node.left))
            elif isinstance(node, Negation):
                stack.append(node.operand)
        return found


@dataclass(frozen=True, eq=False)
class Number(Term):
    """A number in a term."""

    value: int | float

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", type(self.value))
        object.__setattr__(self, "depth", 0)
        object.__setattr__(self, "size", 1)

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, eq=False)
class Attribute(Term):
    """A numeric attribute (or list element) in a term."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", self.path._last.type)
        object.__setattr__(self, "depth", 0)
        object.__setattr__(self, "size", 1)

    def __repr__(self) -> str:
        return str(self.path)


@dataclass(frozen=True, eq=False)
class Operation(Term):
    """``left op right`` for op one of ``+ - * /``."""

    left: Term
    op: str
    right: Term

    def __post_init__(self) -> None:
        kind = int if self.left.type is int and self.right.type is int else float
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "depth", max(self.left.depth, self.right.depth) + 1)
        object.__setattr__(self, "size", self.left.size + self.right.size)
        _check_size(self)

    def __repr__(self) -> str:
        return f"({self.left!r} {self.op} {self.right!r})"


@dataclass(frozen=True, eq=False)
class Negation(Term):
    """``-operand``."""

    operand: Term

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", self.operand.type)
        object.__setattr__(self, "depth", self.operand.depth + 1)
        object.__setattr__(self, "size", self.operand.size)
        _check_size(self)

    def __repr__(self) -> str:
        return f"-{self.operand!r}"


def _check_size(term: Term) -> None:
    if term.depth > MAX_TERM_DEPTH:
        raise QueryError(f"an arithmetic term nests {term.depth} operations deep; the limit "
                         f"is {MAX_TERM_DEPTH}")
    if term.size > MAX_TERM_SIZE:
        raise QueryError(f"an arithmetic term has more than {MAX_TERM_SIZE} numbers and "
                         f"attributes; the limit is {MAX_TERM_SIZE}")


def number(value: Any, where: str) -> Number:
    """`value` as a `Number`, or an error: only finite ints (64-bit) and floats compute."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QueryError(f"{where} takes numbers, got {brief(value)}")
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        raise QueryError(f"{where}: {brief(value)} is outside the 64-bit integer range")
    if isinstance(value, float) and not math.isfinite(value):
        raise QueryError(f"{where}: {value!r} is not a finite number")
    return Number(int(value) if isinstance(value, int) else float(value))


def attribute(path: Path, op: str) -> Attribute:
    """`path` as an arithmetic operand, or an error naming class, attribute and operator."""
    kind = path._last.kind
    element = kind is Kind.DESCRIPTOR or (kind is Kind.DESCRIPTOR_LIST and path._index is not None)
    if not element:
        what = "list" if kind.is_list else kind.value
        raise QueryError(f"{path} is a {what}, not a number: arithmetic ({op}) takes int or "
                         "float attributes")
    if path._last.type not in (int, float):
        raise QueryError(f"{path} is a {path._last.type.__name__}, not a number: arithmetic "
                         f"({op}) takes int or float attributes")
    return Attribute(path)


def as_term(value: Any, op: str) -> Term:
    """A term, an attribute path or a number as a `Term`.

    Parameters
    ----------
    value : Any
        A `Term` (returned as it is), an attribute path or a number.
    op : str
        The operator it is an operand of, for error messages.

    Returns
    -------
    Term
        The operand as a term.

    Raises
    ------
    QueryError
        For a condition, or a value that is not a number usable in arithmetic.
    """
    if isinstance(value, Term):
        return value
    if isinstance(value, Path):
        return attribute(value, op)
    if isinstance(value, Expression):
        raise QueryError(f"arithmetic ({op}) takes numbers and attributes, not a condition "
                         f"({value!r})")
    return number(value, f"arithmetic ({op})")


def combine(path: Path, op: str, other: Any, reflected: bool = False) -> Term:
    """``path op other`` (or ``other op path`` when `reflected`): what Path's operators do."""
    return attribute(path, op)._combine(op, other, reflected)


@dataclass(frozen=True, eq=False)
class ArithmeticComparison(Expression):
    """``left op right`` where at least one side is arithmetic or both are attributes."""

    left: Term
    op: str
    right: Term

    @property
    def path(self) -> Path:
        """The first attribute: the class the condition is on and the links it follows."""
        return self.attributes()[0].path

    def attributes(self) -> list[Attribute]:
        """Every attribute the comparison reads, left to right."""
        return self.left.attributes() + self.right.attributes()

    @property
    def type(self) -> type:
        """int when both sides are int, else float (an int side is compared as a float)."""
        return int if self.left.type is int and self.right.type is int else float

    def __repr__(self) -> str:
        return f"{self.left!r} {self.op} {self.right!r}"


def compare(left: Any, op: str, right: Any) -> ArithmeticComparison:
    """Return ``left op right`` with arithmetic on either side, checked.

    At least one attribute, and every attribute on the same object (same class, same links).

    Parameters
    ----------
    left : Any
        A `Term`, an attribute path or a number.
    op : str
        One of ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``.
    right : Any
        A `Term`, an attribute path or a number.

    Returns
    -------
    ArithmeticComparison
        The comparison, a condition a query can use.

    Raises
    ------
    QueryError
        For an unknown operator, None on either side, a condition as a term, no attribute, too
        many terms, or attributes of different objects.
    """
    if op not in COMPARATORS:
        raise QueryError(f"unknown comparison {op!r}")
    if right is None or left is None:
        raise QueryError(f"{left!r} {op} {right!r}: arithmetic compares with numbers, "
                         "not None")
    comparison = ArithmeticComparison(as_term(left, op), op, as_term(right, op))
    found = comparison.attributes()
    if not found:
        raise QueryError(f"{comparison!r} names no attribute")
    if len(found) + len(numbers(comparison)) > MAX_TERM_SIZE:
        raise QueryError(f"{comparison!r}: more than {MAX_TERM_SIZE} numbers and attributes")
    first = found[0].path
    for other in found[1:]:
        path = other.path
        if path._root is not first._root or len(path._steps) != len(first._steps) or any(
                a.prop is not b.prop for a, b in zip(path._steps[:-1], first._steps[:-1],
                                                     strict=True)):
            raise QueryError(f"{comparison!r}: one comparison reads attributes of one object; "
                             f"{first} and {path} are on different objects")
    return comparison


def numbers(comparison: ArithmeticComparison) -> list[Number]:
    """The numbers written in a comparison (each is one bound value).

    Parameters
    ----------
    comparison : ArithmeticComparison
        The comparison to search.

    Returns
    -------
    list of Number
        Every number on either side.
    """
    found: list[Number] = []
    stack: list[Term] = [comparison.left, comparison.right]
    while stack:
        node = stack.pop()
        if isinstance(node, Number):
            found.append(node)
        elif isinstance(node, Operation):
            stack.extend((node.left, node.right))
        elif isinstance(node, Negation):
            stack.append(node.operand)
    return found


# -- evaluation in Python: the specification the SQL of every database follows --------------
def _int_result(value: float) -> float | None:
    return value if INT64_MIN <= value <= INT64_MAX else None


def evaluate_term(term: Term, values: dict[int, Any]) -> int | float | None:
    """The value of `term`, with attribute values looked up in `values` by ``id(attribute)``;
    None for a missing value (a missing attribute, division by zero, int overflow)."""
    if isinstance(term, Number):
        return term.value
    if isinstance(term, Attribute):
        value = values.get(id(term))
        return None if value is None else term.type(value)
    if isinstance(term, Negation):
        inner = evaluate_term(term.operand, values)
        if inner is None:
            return None
        return _int_result(-inner) if term.type is int else -float(inner)
    assert isinstance(term, Operation)
    left = evaluate_term(term.left, values)
    right = evaluate_term(term.right, values)
    if left is None or right is None:
        return None
    if term.type is float:
        left, right = float(left), float(right)
        if term.op == "/":
            return None if right == 0 else left / right
        return {"+": left + right, "-": left - right, "*": left * right}[term.op]
    if term.op == "/":
        if right == 0:
            return None
        quotient = abs(left) // abs(right)
        return _int_result(quotient if (left < 0) == (right < 0) else -quotient)
    return _int_result({"+": left + right, "-": left - right, "*": left * right}[term.op])


def evaluate(comparison: ArithmeticComparison, values: dict[int, Any]) -> bool:
    """True when the comparison holds for the attribute values in `values`.

    See `evaluate_term`; a missing value makes ``!=`` true and the other comparisons false.

    Parameters
    ----------
    comparison : ArithmeticComparison
        The comparison to evaluate.
    values : dict of int to Any
        The value of each attribute of the comparison.

    Returns
    -------
    bool
        Whether the comparison holds.
    """
    left = evaluate_term(comparison.left, values)
    right = evaluate_term(comparison.right, values)
    if left is None or right is None:
        return comparison.op == "!="
    if comparison.type is float:
        left, right = float(left), float(right)
    return {"==": left == right, "!=": left != right, "<": left < right,
            "<=": left <= right, ">": left > right, ">=": left >= right}[comparison.op]
