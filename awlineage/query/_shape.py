"""The shape a query must keep to run on every database, and the normal form it is measured in.

SQLite's parser gives up on about 30 nested parentheses and on a chain of 1,000 ``or`` terms
(its expression tree may be 1,000 deep); Python's own stack ends a little further on. So a
query is first brought to a normal form that means the same (runs of one operator merged,
``not`` pushed down to the comparisons, double negations dropped) and its nesting is then
checked against `MAX_NESTING`. Wide ``and``/``or`` lists are no problem: the compiler splits
them into a balanced tree. All of this is done without recursion, so any input gets an error.
"""

from __future__ import annotations

from awlineage.errors import QueryError
from awlineage.persistence import And, ArithmeticComparison, Expression, In, InRange, Not, Or
from awlineage.persistence import arithmetic_numbers as numbers

MAX_NESTING = 20
"""Deepest alternation of ``and``, ``or`` and ``not`` in a query's normal form."""
MAX_TEXT_NESTING = 200
"""Deepest nesting of a textual query as written (before the normal form)."""
MAX_VALUES = 10_000
"""Most values one query may bind (each comparison one, each ``in`` list its length)."""


def _values_bound(leaf: Expression) -> int:
    """How many values a comparison binds (a range its two ends and stride)."""
    if isinstance(leaf, In):
        return len(leaf.values)
    if isinstance(leaf, ArithmeticComparison):
        return max(len(numbers(leaf)), 1)
    if isinstance(leaf, InRange):
        return 3
    return 1


def normal_form(expression: Expression) -> Expression:
    """The same condition with every ``not`` on a comparison and no ``and`` directly inside
    an ``and`` (nor ``or`` inside ``or``).

    ``not`` counts a missing value as false (two-valued), so De Morgan's laws hold and
    ``not not x`` selects what ``x`` selects.

    Raises
    ------
    QueryError
        When the normal form nests deeper than `MAX_NESTING` or binds more than `MAX_VALUES`.
    """
    # Post-order walk with an explicit stack: (node, negated, children built yet?).
    done: dict[tuple[int, bool], tuple[Expression, int]] = {}
    stack: list[tuple[Expression, bool, bool]] = [(expression, False, False)]
    values = 0
    while stack:
        node, negated, expanded = stack.pop()
        key = (id(node), negated)
        if key in done:
            continue
        if isinstance(node, Not):
            inner = (id(node.part), not negated)
            if inner in done:
                done[key] = done[inner]
            else:
                stack.extend([(node, negated, True), (node.part, not negated, False)])
            continue
        if not isinstance(node, And | Or):
            values += _values_bound(node)
            if values > MAX_VALUES:
                raise QueryError(f"query binds more than {MAX_VALUES:,} values; the limit is "
                                 f"{MAX_VALUES:,}")
            done[key] = (Not(node) if negated else node, 0)
            continue
        if not expanded:
            stack.append((node, negated, True))
            stack.extend((part, negated, False) for part in reversed(node.parts))
            continue
        # De Morgan: a negated and is an or of negated parts, and the other way round.
        kind = (Or if isinstance(node, And) else And) if negated else type(node)
        parts: list[Expression] = []
        depth = 0
        for part in node.parts:
            built, part_depth = done[(id(part), negated)]
            if type(built) is kind:
                parts.extend(built.parts)
                part_depth -= 1
            else:
                parts.append(built)
            depth = max(depth, part_depth + 1)
        if depth > MAX_NESTING:
            raise QueryError(f"query nests {depth} levels of and/or/not deep (counted after "
                             f"merging runs of one operator); the limit is {MAX_NESTING}")
        done[key] = (kind(tuple(parts)), depth)
    return done[(id(expression), False)][0]
