"""Lineage strategies (seed 000 sections V and VII): how one operator call keeps its region
lineage. A strategy is a lineage mode plus, for full lineage, the orientation it is indexed
for; ``blackbox`` keeps nothing and re-runs the operator when a query needs it.

The names are shared by captures, stored strategy choices, statistics and the optimiser."""

from __future__ import annotations

from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator

FULL_STRATEGIES = ("full-backward", "full-forward", "full-both")
STRATEGIES = ("all", "map", *FULL_STRATEGIES, "pay", "comp", "blackbox")
"""Every strategy name, cheapest to query first."""


PAY_BOTH = ("pay", "full-forward")
"""Seed 000's PayBoth: a payload (answers backward) and forward-optimised full lineage."""


def combinable(a: str, b: str) -> bool:
    """Whether one call can keep strategies `a` and `b` together.

    ``blackbox`` (nothing stored) goes beside anything; a payload (``pay``) goes with one
    full strategy, whose tables the capture derives from the payload (`map_p` per payload
    cell), so the operator still runs once. Any other two stored strategies cannot: one
    call writes one traced mode (``full-both`` keeps both orientations of full lineage).

    Parameters
    ----------
    a, b : str
        Strategy names, of `STRATEGIES`.

    Returns
    -------
    bool
        True when one call can keep both.

    Examples
    --------
    >>> from awlineage.regions import combinable
    >>> combinable("pay", "full-forward"), combinable("full-backward", "full-forward")
    (True, False)
    """
    if a == b or "blackbox" in (a, b):
        return True
    return {a, b} & {"pay"} == {"pay"} and bool({a, b} & set(FULL_STRATEGIES))


def traced_and_derived(names: tuple[str, ...] | list[str]) -> tuple[str | None, str | None]:
    """(the strategy a call records, the full strategy derived from its payload or None) of
    a set of strategies one call keeps: ``("pay", "full-forward")`` for PayBoth; for a
    single stored strategy, it and None; ``blackbox`` when that is all; (None, None) for
    none."""
    stored = [n for n in names if n != "blackbox"]
    if "pay" in stored and len(stored) == 2:
        return "pay", next(n for n in stored if n != "pay")
    if stored:
        return stored[0], None
    return ("blackbox", None) if "blackbox" in names else (None, None)


def strategy_of(mode: str, orientation: str = "backward") -> str:
    """The strategy name of a call recorded in `mode` with full tables in `orientation`."""
    if mode == "full":
        return f"full-{orientation}"
    return mode


def mode_and_orientation(strategy: str) -> tuple[str, str]:
    """(mode, orientation) a capture records for `strategy`.

    Parameters
    ----------
    strategy : str
        One of `STRATEGIES`.

    Returns
    -------
    tuple of (str, str)
        The mode (``full`` for the ``full-*`` strategies, else the strategy itself) and the
        orientation (``backward``, ``forward`` or ``both``).

    Raises
    ------
    RegionError
        Naming an unknown strategy.

    Examples
    --------
    >>> from awlineage.regions import mode_and_orientation
    >>> mode_and_orientation("full-forward")
    ('full', 'forward')
    """
    if strategy not in STRATEGIES:
        raise RegionError(f"unknown lineage strategy {strategy!r}; one of {STRATEGIES}")
    if strategy in FULL_STRATEGIES:
        return "full", strategy.removeprefix("full-")
    return strategy, "backward"


def can_rerun(op: Operator) -> bool:
    """Whether `op` can be re-executed to answer a query (it has a run() method and a traced
    mode to re-run in)."""
    has_run = type(op).run is not Operator.run
    return has_run and any(m in op.supported_modes for m in ("full", "pay", "comp"))


def available_strategies(op: Operator) -> tuple[str, ...]:
    """The strategies a call of `op` can record, in `STRATEGIES` order.

    Parameters
    ----------
    op : Operator
        The operator asked about.

    Returns
    -------
    tuple of str
        Strategy names; ``("all",)`` for an operator that supports no mode, ``blackbox``
        included when the operator can be re-run, the full strategies when it writes
        payloads (a capture following a stored choice derives them from the payload).
    """
    modes = set(op.supported_modes)
    if not modes:
        return ("all",)
    if "pay" in modes:
        modes.add("full")
    found = [s for s in STRATEGIES if s != "all" and mode_and_orientation(s)[0] in modes]
    if can_rerun(op) and "blackbox" not in found:
        found.append("blackbox")
    return tuple(found)
