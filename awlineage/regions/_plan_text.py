"""A strategy plan as text: the table ``awl regions optimise`` prints (per operator its
strategies, the strategy answering each query direction, expected query seconds, disk and
capture runtime, then the totals)."""

from __future__ import annotations

from awlineage.regions._optimiser import Plan


def format_size(size: float) -> str:
    """``1.5 MB``-style text for a number of bytes.

    Parameters
    ----------
    size : float
        A number of bytes.

    Returns
    -------
    str
        Three significant digits and a unit (B, kB, MB or GB).

    Examples
    --------
    >>> from awlineage.regions import format_size
    >>> format_size(1.5e6)
    '1.5 MB'
    >>> format_size(512)
    '512 B'
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.0f} B"


def plan_table(plan: Plan, source: str) -> str:
    """The plan as a table, then the totals.

    Per operator: its strategies, the strategy answering each direction, expected query
    seconds, disk and capture runtime.

    Parameters
    ----------
    plan : Plan
        The optimiser's answer.
    source : str
        Where the workload came from, printed in the first line.

    Returns
    -------
    str
        A first line naming the workload and solver status, then the aligned table.
    """
    header = ("operator", "strategies", "backward by", "forward by", "query s", "disk",
              "runtime s")
    rows = [header]
    for name, p in sorted(plan.operators.items()):
        label = ",".join(p.strategies) + (" (pinned)" if p.pinned else "")
        rows.append((name, label, p.answered_by.get("backward", "-"),
                     p.answered_by.get("forward", "-"), f"{p.query_seconds:.4g}",
                     format_size(p.disk_bytes), f"{p.runtime_seconds:.4g}"))
    rows.append(("total", "", "", "", f"{plan.query_seconds:.4g}",
                 format_size(plan.disk_bytes), f"{plan.runtime_seconds:.4g}"))
    widths = [max(len(r[k]) for r in rows) for k in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if k < 4 else cell.rjust(w)
                       for k, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
             for row in rows]
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return f"workload: {source}; solver: {plan.status}\n" + "\n".join(lines)
