"""The replication plan as text: the table ``awl sites plan`` prints."""

from __future__ import annotations

from awlineage.federation._replication import ReplicationPlan

__all__ = ["plan_table"]

_UNITS = ("B", "kB", "MB", "GB", "TB", "PB")


def _human(amount: float, unit: str) -> str:
    """`amount` with an SI prefix when `unit` is bytes ("B"); plain otherwise."""
    if unit != "B":
        return f"{amount:,.6g}" + (f" {unit}" if unit else "")
    sign, value = ("-" if amount < 0 else ""), abs(amount)
    for prefix in _UNITS:
        if value < 1000 or prefix == _UNITS[-1]:
            return f"{sign}{value:.0f} {prefix}" if prefix == "B" else f"{sign}{value:.1f} {prefix}"
        value /= 1000
    raise AssertionError("unreachable")


def plan_table(plan: ReplicationPlan, unit: str = "B") -> str:
    """The plan as ``awl sites plan`` prints it.

    One row per sub-cluster (saved communication, replica storage, net saving), the totals,
    the two baselines and, per site, whose lineage it replicates. Amounts are shown with SI
    prefixes when `unit` is ``"B"`` (bytes), plainly with the unit otherwise (for traffic
    counted in queries, say). The net saving is in the common cost unit of the problem's
    weights (bytes when both are 1).

    Parameters
    ----------
    plan : ReplicationPlan
        The plan shown.
    unit : str, optional
        The unit of the amounts.

    Returns
    -------
    str
        The table and the lines after it.
    """
    rows = [("cluster", "sites", "saved communication", "replica storage", "net saving")]
    for number, cluster in enumerate(plan.clusters, 1):
        rows.append((str(number), ", ".join(cluster.sites),
                     _human(cluster.saved_communication, unit),
                     _human(cluster.replication_storage, unit),
                     _human(cluster.net_saving, unit)))
    rows.append(("total", f"{len(plan.clusters)} sub-clusters",
                 _human(plan.saved_communication, unit), _human(plan.replication_storage, unit),
                 _human(plan.net_saving, unit)))
    widths = [max(len(row[k]) for row in rows) for k in range(5)]
    lines = ["  ".join(cell.ljust(width) if k < 2 else cell.rjust(width)
                       for k, (cell, width) in enumerate(zip(row, widths, strict=True))).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines.insert(len(lines) - 1, lines[1])
    lines += [
        "",
        f"method: {plan.method}",
        f"communication without replication: {_human(plan.communication_without_replication, unit)}"
        f"; with this plan: {_human(plan.communication_with_plan, unit)}",
        f"full replication (every site replicates every other): net saving "
        f"{_human(plan.full_replication_net_saving, unit)}, replica storage "
        f"{_human(plan.full_replication_storage, unit)}",
        "",
    ]
    for site, others in plan.replicas.items():
        lines.append(f"{site} replicates lineage of: {', '.join(others) if others else '(none)'}")
    return "\n".join(lines)
