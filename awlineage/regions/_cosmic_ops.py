"""Operators whose outputs also depend on global inputs: small arrays (a background mesh, a
normalisation) that every output cell, or every flagged one, depends on as a whole.

A global input is recorded as what it is: an input array of the call whose every cell each
dependent output cell depends on, named in the operator's parameters (``globals``: one
sentence per global input saying what it is and what it was computed from). A query reports it
whole; it is usually a small stored array of the product (a leaf of the region walk), so the
local regions stay local while the answer still says that the global input contributed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator, Shapes


def _whole(shape: Sequence[int], count: int) -> Boxes:
    """`count` copies of the box covering an array of `shape`."""
    d = len(shape)
    return Boxes(np.zeros((count, d), dtype=np.int64),
                 np.tile(np.asarray(shape, dtype=np.int64) - 1, (count, 1)))


def _check_globals(name: str, descriptions: Sequence[str]) -> list[str]:
    described = [str(text) for text in descriptions]
    if any(not text.strip() for text in described):
        raise RegionError(f"{name}: say what each global input is (an empty description was "
                          "given)")
    return described


class FlaggedWithGlobals(Operator):
    """Composite lineage for cleaning flagged cells (cosmic rays): input 0 is the image, the
    other inputs global. An unflagged output cell depends on the same cell of the image only;
    a flagged cell (a payload row ``[radius]``) on the image cells within `radius` of it and on
    every cell of each global input.

    Parameters
    ----------
    globals : sequence of str
        One description per global input (inputs 1, 2, ...).
    """

    supported_modes = ("comp",)

    def __init__(self, globals: Sequence[str] = ()) -> None:
        super().__init__("flagged_with_globals",
                         globals=_check_globals("flagged_with_globals", globals))

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        return tuple(input_shapes[0])

    def _check(self, shapes: Shapes) -> None:
        if len(shapes.inputs) != 1 + len(self.params["globals"]):
            raise RegionError(f"flagged_with_globals: {len(shapes.inputs)} inputs for an image "
                              f"and {len(self.params['globals'])} described global inputs")

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        self._check(shapes)
        return boxes if i == 0 else Boxes.empty(len(shapes.inputs[i]))

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        self._check(shapes)
        return boxes if i == 0 else Boxes.empty(len(shapes.output))

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        self._check(shapes)
        if i > 0:
            return _whole(shapes.inputs[i], len(boxes))
        return boxes.expand(payload[:, 0]).clip(shapes.inputs[0]) if len(boxes) else boxes


class ElementwiseWithGlobals(Operator):
    """Map lineage: output cell p depends on cell p of each of the first `local` inputs (all
    of the output's shape) and on every cell of each later (global) input, such as a
    normalisation computed from whole frames.

    Parameters
    ----------
    local : int
        How many inputs are read cell by cell.
    globals : sequence of str
        One description per global input (the inputs after the local ones).
    """

    supported_modes = ("map",)

    def __init__(self, local: int, globals: Sequence[str] = ()) -> None:
        if int(local) < 1:
            raise RegionError(f"elementwise_with_globals: local must be at least 1, got {local}")
        super().__init__("elementwise_with_globals", local=int(local),
                         globals=_check_globals("elementwise_with_globals", globals))

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        return tuple(input_shapes[0])

    def _check(self, shapes: Shapes) -> None:
        local, described = self.params["local"], len(self.params["globals"])
        if len(shapes.inputs) != local + described:
            raise RegionError(f"elementwise_with_globals: {len(shapes.inputs)} inputs for "
                              f"{local} local and {described} described global inputs")
        for shape in shapes.inputs[:local]:
            if tuple(shape) != tuple(shapes.output):
                raise RegionError(f"elementwise_with_globals: a local input of shape "
                                  f"{tuple(shape)} for an output of shape {shapes.output}")

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        self._check(shapes)
        if i < self.params["local"]:
            return boxes
        return _whole(shapes.inputs[i], 1 if len(boxes) else 0)

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        self._check(shapes)
        if i < self.params["local"]:
            return boxes
        return _whole(shapes.output, 1 if len(boxes) else 0)


class GlobalSummary(Operator):
    """A small array that summarises whole arrays (a background mesh, a normalisation),
    recorded as a source of the region walk: it has no recorded inputs, and `description` says
    what it is and what it was computed from (every cell of it depends on all of that). A query
    that reaches it reports it whole and goes no further, so a global statistic does not
    widen every region to whole frames while the answer still names it.

    Parameters
    ----------
    description : str
        What the array is and what it was computed from.
    """

    def __init__(self, description: str) -> None:
        super().__init__("global_summary",
                         description=_check_globals("global_summary", [description])[0])


def global_summary(description: str) -> GlobalSummary:
    """An operator that records a small array standing for a global statistic.

    The array (a background mesh, a normalisation) has no recorded inputs: `description` says
    what it is and what it was computed from. A query that reaches it reports it whole and goes
    no further (see `GlobalSummary`). Give it to `RegionCapture.apply` with no inputs and the
    array's shape.

    Parameters
    ----------
    description : str
        What the array is and what it was computed from.

    Returns
    -------
    GlobalSummary
        The operator.

    Raises
    ------
    RegionError
        If `description` is empty.

    Examples
    --------
    >>> from awlineage import global_summary
    >>> global_summary("sky background: median of the frame in 64x64 cells").params
    {'description': 'sky background: median of the frame in 64x64 cells'}
    """
    return GlobalSummary(description)


def flagged_with_globals(globals: Sequence[str] = ()) -> FlaggedWithGlobals:
    """An operator with composite lineage for cleaning flagged cells (cosmic rays).

    Input 0 is the image, the others are global inputs. An unflagged output cell depends on
    the same cell of the image; a flagged cell (a payload row ``[radius]`` written with
    ``lwrite_payload``) on the image cells within `radius` of it and on every cell of each
    global input (see `FlaggedWithGlobals`).

    Parameters
    ----------
    globals : sequence of str
        One description per global input (inputs 1, 2, ...): what it is and what it was
        computed from.

    Returns
    -------
    FlaggedWithGlobals
        The operator, to give to `RegionCapture.operator`.

    Raises
    ------
    RegionError
        If a description is empty, or when called with a number of inputs other than one
        plus the number of descriptions.

    Examples
    --------
    >>> import numpy as np
    >>> from awlineage import Boxes, Shapes, flagged_with_globals
    >>> op = flagged_with_globals(["sky background"])
    >>> shapes = Shapes(output=(5, 5), inputs=((5, 5), (2, 2)))
    >>> flagged = Boxes.from_cells([[2, 2]])
    >>> near = op.map_p(flagged, np.array([[1]]), 0, shapes)
    >>> near.lo.tolist(), near.hi.tolist()
    ([[1, 1]], [[3, 3]])
    >>> op.map_p(flagged, np.array([[1]]), 1, shapes).hi.tolist()
    [[1, 1]]
    """
    return FlaggedWithGlobals(globals)


def elementwise_with_globals(local: int, globals: Sequence[str] = ()
                             ) -> ElementwiseWithGlobals:
    """An operator whose output cells depend on `local` inputs cell by cell and on global ones.

    Output cell p depends on cell p of each of the first `local` inputs (all of the output's
    shape) and on every cell of each later input, such as a normalisation computed from whole
    frames. Map mode: nothing is stored (see `ElementwiseWithGlobals`).

    Parameters
    ----------
    local : int
        How many inputs are read cell by cell (at least 1).
    globals : sequence of str
        One description per global input (the inputs after the local ones).

    Returns
    -------
    ElementwiseWithGlobals
        The operator, to give to `RegionCapture.apply` or `RegionCapture.operator`.

    Raises
    ------
    RegionError
        If `local` is less than 1 or a description is empty; when called with a number of
        inputs that does not match, or a local input whose shape is not the output's.

    Examples
    --------
    >>> from awlineage import Boxes, Shapes, elementwise_with_globals
    >>> op = elementwise_with_globals(1, ["flat-field normalisation: median of the frame"])
    >>> shapes = Shapes(output=(4, 4), inputs=((4, 4), (1,)))
    >>> cell = Boxes.from_cells([[3, 0]])
    >>> op.map_b(cell, 0, shapes).lo.tolist(), op.map_b(cell, 1, shapes).hi.tolist()
    ([[3, 0]], [[0]])
    """
    return ElementwiseWithGlobals(local, globals)
