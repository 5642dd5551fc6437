"""Stored strategy choices: which lineage strategies an operator's calls record, as the
optimiser (or the user) decided, and how a capture applies them.

A choice is a `RegionStrategy` per operator name, versioned: the newest version counts.
Operator ``*`` is the default for operators without a choice of their own; ``["blackbox"]``
there is seed 000's adaptive start (section III): new operators keep nothing and re-run at
query time, until statistics exist and the optimiser refines them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from awlineage.errors import NotConnectedError
from awlineage.persistence import DBObject, current_store, persistent
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator
from awlineage.regions._strategies import (
    FULL_STRATEGIES,
    STRATEGIES,
    available_strategies,
    combinable,
    mode_and_orientation,
    traced_and_derived,
)

if TYPE_CHECKING:
    from awlineage.database import Database
    from awlineage.regions._optimiser import Plan

DEFAULT_OPERATOR = "*"
"""The operator name of the default choice (adaptive start)."""
BLACKBOX = "blackbox"


_NOT_RELOADABLE = "; its inputs cannot all be loaded again"


class RegionStrategy(DBObject):
    """The lineage strategies calls of operator `operator` record when the caller gives no
    mode (one stored strategy, or a payload with full lineage derived from it: `combinable`;
    ``blackbox`` beside them means queries may re-run the operator), with what the
    optimiser expected them to cost. ``pinned`` marks a choice the user fixed, which the
    optimiser keeps."""

    identity = ("operator",)
    __run_output__ = False  # a setting of the capture, not a product of a make

    operator = persistent("Operator name, as in RegionTable.operator; * for the default",
                          str, "", index=True)
    strategies = persistent("Strategy names the operator's calls keep", str, [])
    pinned = persistent("Fixed by the user; the optimiser keeps it", bool, False)
    expected_query_seconds = persistent("Workload-weighted query seconds through the "
                                        "operator, as the optimiser expected", float, 0.0)
    expected_disk_bytes = persistent("Bytes per run the optimiser expected", float, 0.0)
    expected_runtime_seconds = persistent("Capture seconds per run the optimiser expected",
                                          float, 0.0)
    source = persistent("Who chose: optimiser, user or adaptive", str, "")

    def stored_strategy(self) -> str | None:
        """The strategy a capture records (``pay`` of a payload kept with full lineage, else
        the first that is not ``blackbox``; ``blackbox`` when that is all), or None for an
        empty choice (default cleared)."""
        return traced_and_derived(self.strategies)[0]

    def derived_strategy(self) -> str | None:
        """The full strategy a capture derives from the recorded payload (PayBoth's
        ``full-forward``), or None."""
        return traced_and_derived(self.strategies)[1]


def check_strategies(operator: str, names: Sequence[str]) -> list[str]:
    """`names` as a list, refused when a name is unknown or two of them cannot be kept by
    one call.

    One call stores one strategy, or a payload with one full strategy derived from it
    (`combinable`); ``blackbox`` may be given beside them.

    Parameters
    ----------
    operator : str
        The operator's name, used in the error message.
    names : sequence of str
        Strategy names, each one of `STRATEGIES`.

    Returns
    -------
    list of str
        `names` without repeats, in their first order.

    Raises
    ------
    RegionError
        When a name is unknown, or two names cannot be kept together.
    """
    names = list(dict.fromkeys(names))
    for name in names:
        if name not in STRATEGIES:
            raise RegionError(f"operator {operator}: unknown lineage strategy {name!r}; one "
                              f"of {STRATEGIES}")
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            if not combinable(a, b):
                raise RegionError(f"operator {operator}: {[a, b]}: a call stores one "
                                  "strategy (full-both keeps both orientations), or pay with "
                                  "one full strategy derived from it, besides blackbox")
    return names


def stored_choices(database: Database | None = None) -> dict[str, RegionStrategy]:
    """The newest choice per operator name in `database` (default: the current one), in one
    query; empty outside a connected database."""
    from awlineage.query import select

    try:
        # the store of a connected session is a Database (persistence only names its Protocol)
        store = database or cast("Database", current_store())
    except NotConnectedError:
        return {}
    return {c.operator: c for c in select(RegionStrategy, database=store).newest()}


def set_adaptive(enabled: bool = True, *, commit: bool = True) -> RegionStrategy:
    """Turn the adaptive start on or off.

    When on, operators without a choice start black-box, when they can re-run.

    Parameters
    ----------
    enabled : bool, optional
        On (True) or off.
    commit : bool, optional
        Commit the new choice; False to leave that to the caller.

    Returns
    -------
    RegionStrategy
        The new version of the ``*`` choice.
    """
    choice = RegionStrategy(operator=DEFAULT_OPERATOR,
                            strategies=[BLACKBOX] if enabled else [],
                            source="adaptive" if enabled else "user")
    if commit:
        choice.commit()
    return choice


def store_plan(plan: Plan, *, commit: bool = True) -> list[RegionStrategy]:
    """A new `RegionStrategy` version per operator of `plan`, pinned where the user pinned.

    They are committed together (one transaction) unless `commit` is False.

    Parameters
    ----------
    plan : Plan
        The optimiser's answer.
    commit : bool, optional
        Commit the new choices; False to leave that to the caller.

    Returns
    -------
    list of RegionStrategy
        The new choices, one per operator.

    Raises
    ------
    RegionError
        When a plan gives an operator an unknown strategy or two it cannot keep together.
    """
    made = []
    for name, chosen in plan.operators.items():
        choice = RegionStrategy(
            operator=name, strategies=check_strategies(name, chosen.strategies),
            pinned=bool(chosen.pinned), expected_query_seconds=float(chosen.query_seconds),
            expected_disk_bytes=float(chosen.disk_bytes),
            expected_runtime_seconds=float(chosen.runtime_seconds),
            source="user" if chosen.pinned else "optimiser")
        made.append(choice)
    if commit and made:
        current_store().commit(made)
    return made


def adaptive_enabled(choices: dict[str, RegionStrategy]) -> bool:
    """Whether the ``*`` default among `choices` is black-box."""
    default = choices.get(DEFAULT_OPERATOR)
    return default is not None and default.stored_strategy() == BLACKBOX


@dataclass(frozen=True)
class Decision:
    """The mode and orientation a call records, and the strategy it came from."""

    mode: str
    orientation: str
    strategy: str
    derived: str | None = None
    """A full strategy derived from the recorded payload (PayBoth), or None."""
    keep_traced: bool = True
    """Whether the recorded mode's own record is kept (False: full lineage of an operator
    that writes only payloads, derived from them)."""


_warned: set[int] = set()
"""Object ids of stored choices already warned about (one warning per choice and process)."""


class ChoiceBook:
    """The stored choices one capture follows (loaded once, on first need)."""

    def __init__(self) -> None:
        self._choices: dict[str, RegionStrategy] | None = None

    @property
    def choices(self) -> dict[str, RegionStrategy]:
        """Operator name -> newest choice (one query per capture)."""
        if self._choices is None:
            self._choices = stored_choices()
        return self._choices

    def decide(self, op: Operator, stored_inputs: bool) -> Decision | None:
        """What a call of `op` records when the caller gives no mode: its own choice, else
        the default ``*``; None to use the operator's default mode. A choice the operator
        cannot record (black-box for an operator that cannot re-run, or whose inputs cannot
        all be loaded again: `stored_inputs`) falls back, with one warning per stored choice
        and process."""
        own = self.choices.get(op.name)
        if own is not None:
            strategy = own.stored_strategy()
            if strategy is None:
                return None
            if self._possible(op, strategy, stored_inputs):
                return _decision(op, strategy, own.derived_strategy())
            if own.object_id not in _warned:
                _warned.add(own.object_id)
                warnings.warn(f"operator {op.name}: the stored lineage strategy {strategy!r} "
                              f"is not possible here (it records "
                              f"{available_strategies(op)}"
                              f"{'' if stored_inputs else _NOT_RELOADABLE}); "
                              f"using its default mode {op.default_mode()!r}", stacklevel=4)
            return None
        default = self.choices.get(DEFAULT_OPERATOR)
        strategy = None if default is None else default.stored_strategy()
        if strategy is not None and self._possible(op, strategy, stored_inputs):
            return _decision(op, strategy, None)
        return None

    @staticmethod
    def _possible(op: Operator, strategy: str, stored_inputs: bool) -> bool:
        if strategy not in available_strategies(op):
            return False
        return strategy != BLACKBOX or stored_inputs


def _decision(op: Operator, strategy: str, derived: str | None) -> Decision:
    """What a call records for a possible `strategy` (with `derived` full lineage): full
    lineage of an operator that writes only payloads is derived from its payload."""
    if strategy in FULL_STRATEGIES and "full" not in op.supported_modes:
        return Decision("pay", "backward", "pay", strategy, keep_traced=False)
    return Decision(*mode_and_orientation(strategy), strategy,
                    derived if derived and "pay" in op.supported_modes else None)


def explicit_decision(op: Operator, names: Sequence[str]) -> Decision:
    """What a call records when its caller names the strategies it keeps (checked names).

    Raises
    ------
    RegionError
        When `op` cannot record them.
    """
    strategy, derived = traced_and_derived(tuple(names))
    if strategy is None or strategy not in available_strategies(op) or (
            derived is not None and "pay" not in op.supported_modes):
        raise RegionError(f"operator {op.name} cannot keep {list(names)} (it records "
                          f"{available_strategies(op)})")
    return _decision(op, strategy, derived)
