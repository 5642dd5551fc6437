"""A call stored in both orientations counts the input cells its lineage reaches on the keys
of its forward tables when the encoder knows them disjoint, instead of the union of its
backward tables' value boxes: the same count, as both tables encode one relation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import Boxes, Shapes
from awlineage.regions._capture_stats import table_fan
from awlineage.regions._provrc import encode
from tests.regions.test_provrc import relations


def _shape(boxes: Boxes) -> tuple[int, ...]:
    return tuple(int(h) + 2 for h in boxes.hi.max(0)) if len(boxes) else (3,) * boxes.ndim


@settings(max_examples=250, deadline=None)
@given(relations())
def test_fan_from_forward_keys_is_the_fan_from_backward_values(relation) -> None:
    out, inp = relation
    # two inputs of one shape: the relation's even and odd rows
    parts = [(out[k::2], inp[k::2]) for k in (0, 1)]
    shapes = Shapes(output=_shape(out), inputs=(_shape(inp), _shape(inp)))
    backward = [encode(o, i) for o, i in parts]
    forward = [encode(i, o) for o, i in parts]
    plain = table_fan(backward, shapes)
    assert table_fan(backward, shapes, forward_tables=forward) == plain
    # one input alone, too
    one = Shapes(output=shapes.output, inputs=shapes.inputs[:1])
    assert table_fan(backward[:1], one, forward_tables=forward[:1]) == \
        table_fan(backward[:1], one)
    assert np.isfinite(plain[0])


@settings(max_examples=250, deadline=None)
@given(relations(), st.booleans())
def test_output_cells_of_several_inputs_are_their_union(relation, whole) -> None:
    """Output cells counted once over every input's keys: skipping the union when one
    input's table covers the whole output (as a call reading one box of every output cell
    does) gives the union's count."""
    out, inp = relation
    parts = [(out[k::2], inp[k::2]) for k in (0, 1)]
    shape = _shape(out)
    if whole:  # a third input: every output cell reads one box of it
        everything = Boxes(np.zeros((1, len(shape)), np.int64), np.array([shape]) - 1)
        parts.append((everything, inp[:1] if len(inp) else Boxes.from_cells([[0] * inp.ndim])))
    shapes = Shapes(output=shape, inputs=tuple(_shape(i) if len(i) else (3,) * i.ndim
                                               for _, i in parts))
    backward = [encode(o, i) for o, i in parts]
    keys = set()
    for table in backward:
        keys |= {tuple(c) for c in table.expand()[0].tolist()}
    pairs = sum(t.tuple_count() for t in backward if len(t))
    fan_in, _ = table_fan(backward, shapes)
    assert fan_in == (pairs / len(keys) if keys else 0.0)
