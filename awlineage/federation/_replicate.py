"""Carrying out the replication plan: the workload asked of this site and the sites it
knows (their lineage sizes and query logs, ``GET /api/site``), the plan computed from it,
and this site fetching the lineage of the sites in its sub-cluster that its objects point
to, in full (``awl sites plan``, ``awl sites replicate``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from awlineage.database import Database, read_stored_rows
from awlineage.federation._pointer import RemotePointer
from awlineage.federation._remote import (
    ResolveReport,
    SiteUnreachableError,
    resolve_pointers,
    site_status,
)
from awlineage.federation._replication import ReplicationPlan, ReplicationProblem
from awlineage.federation._replication_search import plan_replication
from awlineage.federation._site import known_sites, local_site
from awlineage.federation._workload import fetch_summary, lineage_size

THIS_SITE = "(this site)"
"""The name of this site in a plan when it has no URL yet."""


@dataclass
class Workload:
    """The replication problem as the sites told it, and the sites that did not answer."""

    problem: ReplicationProblem
    here: str
    """This site's name in the problem (its URL)."""
    unreachable: dict[str, str] = field(default_factory=dict)
    """URL -> why it did not answer (left out of the problem)."""


def gather_workload(db: Database, *, timeout: float | None = None,
                    communication_weight: float = 1.0,
                    storage_weight: float = 1.0) -> Workload:
    """Ask this site and every site it knows for its lineage size and its query log.

    Every site a query log names is asked too; sites that do not answer are left out and
    listed.

    Parameters
    ----------
    db : Database
        This site's database.
    timeout : float or None, optional
        Seconds each request may take; by default ``AWL_SITE_TIMEOUT``, else 5.
    communication_weight : float, optional
        Weight of saved communication in the problem's net saving.
    storage_weight : float, optional
        Weight of replica storage in the problem's net saving.

    Returns
    -------
    Workload
        The replication problem, this site's name in it and the sites that did not answer
        (URL to reason).
    """
    here = local_site(db).url or THIS_SITE
    sizes: dict[str, float] = {here: float(lineage_size(db))}
    log: list[tuple[str, str, float]] = [(here, f.site_url, float(f.bytes))
                                         for f in fetch_summary(db)]
    unreachable: dict[str, str] = {}
    waiting = [s.url for s in known_sites(db) if s.url] + [url for _, url, _ in log]
    while waiting:
        url = waiting.pop(0).rstrip("/")
        if url in sizes or url in unreachable:
            continue
        try:
            status = site_status(url, timeout=timeout)
        except SiteUnreachableError as exc:
            unreachable[url] = exc.reason
            continue
        sizes[url] = float(status.get("lineage_bytes") or 0)
        for entry in status.get("fetches") or []:
            log.append((url, str(entry["site_url"]).rstrip("/"), float(entry["bytes"])))
            waiting.append(str(entry["site_url"]))
    kept = [(a, b, amount) for a, b, amount in log if a in sizes and b in sizes and a != b]
    problem = ReplicationProblem.from_query_log(
        sizes, kept, communication_weight=communication_weight, storage_weight=storage_weight)
    return Workload(problem, here, unreachable)


@dataclass
class ReplicationRun:
    """What `replicate` did: the plan, the sites this one replicates, and per site what was
    fetched."""

    plan: ReplicationPlan
    here: str
    partners: tuple[str, ...]
    fetched: dict[str, ResolveReport] = field(default_factory=dict)

    def summary(self) -> str:
        """Lines for people."""
        if not self.partners:
            return f"{self.here} replicates no other site's lineage under this plan"
        return "\n".join(f"{url}: {report.summary()}" + "".join(
            f"\n  missing {m.class_name} {m.object_id}: {m.reason}" for m in report.missing)
            for url, report in self.fetched.items())


def replicate(db: Database, workload: Workload | None = None, *,
              timeout: float | None = None, method: str = "best") -> ReplicationRun:
    """Carry out this site's part of the replication plan.

    For each site in its sub-cluster, follow every pointer here to that site's objects, with
    their whole ancestry (``via="replicated"``).

    Parameters
    ----------
    db : Database
        This site's database.
    workload : Workload or None, optional
        The problem to plan; None to ask the sites (`gather_workload`).
    timeout : float or None, optional
        Seconds each request may take; by default ``AWL_SITE_TIMEOUT``, else 5.
    method : str, optional
        The planning method, one of `REPLICATION_METHODS`.

    Returns
    -------
    ReplicationRun
        The plan, the sites this one replicates, and per site what was fetched.

    Raises
    ------
    ValueError
        An unknown method (naming it and the known ones).
    """
    workload = workload or gather_workload(db, timeout=timeout)
    plan = plan_replication(workload.problem, method=method)
    partners = plan.replicates(workload.here)
    run = ReplicationRun(plan, workload.here, partners)
    pointers = _pointers_by_site(db)
    for url in partners:
        run.fetched[url] = resolve_pointers(db, pointers.get(url, []), depth=None,
                                            timeout=timeout, via="replicated")
    return run


def _pointers_by_site(db: Database) -> dict[str, list[int]]:
    registry = db.framework["awl_object"]
    with db.engine.connect() as conn:
        ids = list(conn.execute(sa.select(registry.c.object_id).where(
            registry.c.class_name == "awlineage.RemotePointer")).scalars())
    found: dict[str, list[int]] = {}
    for row in read_stored_rows(db, RemotePointer, ids) if ids else []:
        url = (row.values["origin_url"] or "").rstrip("/")
        if url:
            found.setdefault(url, []).append(row.object_id)
    return found
