"""Operators: what an array operation says about its lineage (seed 000 Table I).

An operator declares the lineage modes it supports and implements the matching methods:

- ``map``: `map_b` / `map_f` compute lineage from coordinates alone; nothing is stored;
- ``full``: the operator calls ``lwrite(outcells, incells_1, ...)``; the pairs are stored;
- ``pay``: ``lwrite_payload(outcells, payload)`` is stored, `map_p` turns it into cells;
- ``comp``: `map_b` by default, payload rows override it for the cells they name;
- ``blackbox``: nothing is stored; a query re-runs `run` on the recorded inputs.

An operator declaring no mode is all-to-all: every output cell depends on every input cell.
Mapping methods work on boxes, vectorised: they return boxes whose union is the lineage of
the union of the boxes given.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._errors import RegionError

MODES = ("all", "map", "full", "pay", "comp", "blackbox")
#: The mode used when a caller does not choose: cheapest to store first.
MODE_PREFERENCE = ("map", "comp", "pay", "full", "blackbox")


@dataclass(frozen=True)
class Shapes:
    """Shapes of an operator call's output and inputs.

    An operator's lineage methods (`Operator.map_b`, `Operator.map_f`, `Operator.map_p`)
    receive them.

    Parameters
    ----------
    output : tuple of int
        The output array's shape.
    inputs : tuple of tuple of int
        Each input array's shape, in the order of the call's inputs.

    Examples
    --------
    >>> from awlineage import Shapes
    >>> shapes = Shapes(output=(2, 3), inputs=((2, 3), (2, 3)))
    >>> shapes.inputs[1]
    (2, 3)
    """

    output: tuple[int, ...]
    inputs: tuple[tuple[int, ...], ...]


class Operator:
    """Base class of operators with region lineage.

    Parameters
    ----------
    name : str or None, optional
        A name for the operator (default: the class name in lower case).
    **params : Any
        JSON-serialisable parameters; with the class's qualified name they are recorded, so
        that queries can rebuild the operator (``type(op)(**params)``).

    Raises
    ------
    RegionError
        When a parameter is not a JSON value.

    Examples
    --------
    >>> class Shift(Operator):
    ...     supported_modes = ("map",)
    ...     def map_b(self, boxes, i, shapes):
    ...         return Boxes(boxes.lo + self.params["by"], boxes.hi + self.params["by"])
    ...     def map_f(self, boxes, i, shapes):
    ...         return Boxes(boxes.lo - self.params["by"], boxes.hi - self.params["by"])
    >>> Shift(by=2).spec()["params"]
    {'by': 2}
    """

    #: Lineage modes this operator can produce; empty means all-to-all.
    supported_modes: ClassVar[tuple[str, ...]] = ()
    #: Seed 000 VI-C: the whole output depends on the whole of each input and vice versa.
    entire_array: ClassVar[bool] = False
    #: Whether `map_p` may give different cells of one payload row different lineage; when
    #: False, forward queries evaluate whole rows instead of single cells.
    payload_per_cell: ClassVar[bool] = True

    def __init__(self, name: str | None = None, **params: Any) -> None:
        self.name = name or type(self).__name__.lower()
        try:
            json.dumps(params)
        except TypeError as exc:
            raise RegionError(f"operator {self.name}: parameters must be JSON values ({exc})"
                              ) from None
        self.params = params

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    # -- what a call produces -------------------------------------------------------------
    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...] | None:
        """The output shape for these input shapes, or None if the caller must give it.

        Parameters
        ----------
        input_shapes : sequence of tuple of int
            The shapes of the inputs, in operator order.

        Returns
        -------
        tuple of int or None
            The output shape; the base class returns None.
        """
        return None

    def default_mode(self) -> str:
        """The mode a call records when the caller does not choose.

        Returns
        -------
        str
            The cheapest of `supported_modes`, or ``"all"`` when it is empty.
        """
        for mode in MODE_PREFERENCE:
            if mode in self.supported_modes:
                return mode
        return "all"

    # -- lineage methods (override those of the supported modes) ---------------------------
    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        """Find the cells of input `i` that the output cells in `boxes` depend on.

        Parameters
        ----------
        boxes : Boxes
            Output cells.
        i : int
            The input's position among the operator's inputs.
        shapes : Shapes
            The call's array shapes (``shapes.output``, ``shapes.inputs``).

        Returns
        -------
        Boxes
            Cells of input `i`.

        Raises
        ------
        RegionError
            In the base class: an operator of mode ``map`` overrides it.
        """
        raise RegionError(f"operator {self.name} has no backward mapping function (map_b)")

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        """Find the output cells that depend on the cells in `boxes` of input `i`.

        Parameters
        ----------
        boxes : Boxes
            Cells of input `i`.
        i : int
            The input's position among the operator's inputs.
        shapes : Shapes
            The call's array shapes (``shapes.output``, ``shapes.inputs``).

        Returns
        -------
        Boxes
            Output cells.

        Raises
        ------
        RegionError
            In the base class: an operator of mode ``map`` overrides it.
        """
        raise RegionError(f"operator {self.name} has no forward mapping function (map_f)")

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        """Find the cells of input `i` that output box k depends on, given payload row k.

        Parameters
        ----------
        boxes : Boxes
            Output boxes, one per payload row.
        payload : numpy.ndarray
            The payload rows recorded for those boxes.
        i : int
            The input's position among the operator's inputs.
        shapes : Shapes
            The call's array shapes (``shapes.output``, ``shapes.inputs``).

        Returns
        -------
        Boxes
            One box of input `i` per row, in row order.

        Raises
        ------
        RegionError
            In the base class: an operator of mode ``pay`` or ``comp`` overrides it.
        """
        raise RegionError(f"operator {self.name} has no payload function (map_p)")

    def run(self, *arrays: np.ndarray, lineage: Any) -> np.ndarray:
        """Compute the output from input arrays, writing lineage when asked.

        Lineage is written through `lineage` when ``lineage.wants(mode)``. Needed for
        black-box re-execution.

        Parameters
        ----------
        *arrays : numpy.ndarray
            The input arrays, in operator order.
        lineage : OperatorCall
            The call being recorded.

        Returns
        -------
        numpy.ndarray
            The output array.

        Raises
        ------
        RegionError
            In the base class: an operator that can be re-run overrides it.
        """
        raise RegionError(f"operator {self.name} cannot be re-run: it has no run() method")

    def record(self, call: Any, arrays: Sequence[np.ndarray] | None = None) -> None:
        """Capture lineage without a run.

        Ready-made full-mode operators compute it from the shapes and their parameters; the
        base class records nothing.

        Parameters
        ----------
        call : OperatorCall
            The call being recorded.
        arrays : sequence of numpy.ndarray or None, optional
            The input arrays, when the lineage depends on their values.
        """

    # -- recording ------------------------------------------------------------------------
    def lineage_fingerprint(self) -> str | None:
        """A digest of everything this operator's lineage may depend on besides its inputs.

        That is the code of its class (and of its Operator base classes below `Operator`),
        its parameters and any other state it holds (a transform, a WCS), but not its
        inputs' shapes and values.

        Returns
        -------
        str or None
            The digest; None when some of it cannot be described (such calls are never
            reused).
        """
        from awlineage.regions._fingerprint import fingerprint

        classes = [c for c in type(self).__mro__
                   if issubclass(c, Operator) and c is not Operator]
        state = {k: v for k, v in vars(self).items() if k != "name"}
        return fingerprint({"classes": classes, "state": state})

    def spec(self) -> dict[str, Any]:
        """What a query needs to rebuild this operator: class and parameters.

        Returns
        -------
        dict of str to Any
            ``class`` (``module:qualname``), ``name`` and ``params``.
        """
        cls = type(self)
        return {"class": f"{cls.__module__}:{cls.__qualname__}", "name": self.name,
                "params": self.params}


def operator_from_spec(spec: dict[str, Any]) -> Operator:
    """Rebuild the operator a `spec()` describes, or raise naming the class.

    The class is called with the recorded parameters as keyword arguments, so an operator's
    constructor must accept its own `params`.
    """
    module_name, _, qualname = spec["class"].partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise RegionError(f"cannot import operator class {spec['class']} to answer the query: "
                          f"{exc}") from None
    if not (isinstance(target, type) and issubclass(target, Operator)):
        raise RegionError(f"{spec['class']} is not an Operator class")
    try:
        op = target(**spec.get("params", {}))
    except TypeError as exc:
        raise RegionError(f"cannot rebuild operator {spec['class']} from its recorded "
                          f"parameters {spec.get('params')}: {exc}") from None
    op.name = spec.get("name") or op.name
    return op


class AllToAll(Operator):
    """Every output cell depends on every cell of every input (an operator declaring
    nothing)."""

    entire_array = True


def all_to_all() -> AllToAll:
    """An operator whose output depends on all of its inputs.

    Every output cell depends on every cell of every input (an operator declaring nothing).

    Returns
    -------
    AllToAll
        The operator.
    """
    return AllToAll("all_to_all")
