"""The two orientations of one relation share its sides' columns (`encode`'s `sides`): the
tables are those encoded apart, rows with an empty box dropped in either."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import Boxes
from awlineage.regions._provrc import SideColumns, encode
from tests.regions.test_provrc import relations


@settings(max_examples=250, deadline=None)
@given(relations(), st.booleans())
def test_shared_side_columns_give_the_tables_encoded_apart(relation, empty_box) -> None:
    out, inp = relation
    if empty_box and len(inp):  # one value box with no cells: its row relates nothing
        hi = inp.hi.copy()
        hi[0, 0] = inp.lo[0, 0] - 1
        inp = Boxes(inp.lo, hi)
    sides: SideColumns = {}
    shared = [encode(out, inp, sides=sides), encode(inp, out, sides=sides)]
    assert len(sides) == 2
    apart = [encode(out, inp), encode(inp, out)]
    for a, b in zip(shared, apart, strict=True):
        assert a.same_rows(b)
        assert np.array_equal(a.lo, b.lo)
