"""What the replication plan is computed from: how much lineage each site holds (w_v) and
which site asked which for lineage, how much (w_e), read from a site's own database or from
a workload file.

A workload file is JSON::

    {"sizes": {"http://a:8400": 120000, "http://b:8400": 80000},
     "log": [{"from": "http://b:8400", "to": "http://a:8400", "bytes": 5400000}, ...]}

``bytes`` may be replaced by ``requests`` (then plans trade requests against bytes stored:
give ``communication_weight`` to convert).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from awlineage.database import Database, read_stored_rows
from awlineage.errors import ConfigurationError
from awlineage.federation._records import record_of
from awlineage.federation._replication import ReplicationProblem
from awlineage.federation._site import FETCHES, ORIGINS, has_site_tables

_SAMPLE = 200
POINTER_CLASS = "awlineage.RemotePointer"


@dataclass(frozen=True)
class FetchSummary:
    """This site's requests to one other site for lineage."""

    site_url: str
    requests: int
    bytes: int
    failed: int


def lineage_size(db: Database, *, seed: int = 0) -> int:
    """The bytes of lineage metadata a site made itself (its objects, not copies or pointers).

    Estimated as the number of such objects times the mean record size of a sample of up to
    200 of them (records as bundles write them, uncompressed).

    Parameters
    ----------
    db : Database
        The site's database.
    seed : int, optional
        Seed of the sample, so that one database gives one answer.

    Returns
    -------
    int
        The estimated size in bytes.
    """
    registry = db.framework["awl_object"]
    query = sa.select(registry.c.object_id, registry.c.class_name).where(
        registry.c.class_name != POINTER_CLASS)
    if has_site_tables(db):
        query = query.where(registry.c.object_id.not_in(sa.select(ORIGINS.c.object_id)))
    with db.engine.connect() as conn:
        own = conn.execute(query).all()
    if not own:
        return 0
    sample = random.Random(seed).sample(own, min(_SAMPLE, len(own)))
    by_class: dict[str, list[int]] = {}
    for oid, name in sample:
        by_class.setdefault(name, []).append(oid)
    size = 0
    for name, ids in by_class.items():
        for row in read_stored_rows(db, db.class_named(name), sorted(ids)):
            size += len(json.dumps(record_of(row).to_json(), separators=(",", ":")))
    return round(size / len(sample) * len(own))


def fetch_summary(db: Database) -> list[FetchSummary]:
    """A site's requests to other sites for lineage, summed per site asked.

    Parameters
    ----------
    db : Database
        The site's database.

    Returns
    -------
    list of FetchSummary
        One per site asked: requests, bytes and failures.
    """
    if not has_site_tables(db):
        return []
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(FETCHES.c.site_url, sa.func.count(), sa.func.sum(FETCHES.c.bytes),
                      sa.func.sum(sa.case((FETCHES.c.ok, 0), else_=1)))
            .group_by(FETCHES.c.site_url).order_by(FETCHES.c.site_url))
        return [FetchSummary(url, int(n), int(b or 0), int(f or 0)) for url, n, b, f in rows]


def read_workload(path: str | Path, *, communication_weight: float = 1.0,
                  storage_weight: float = 1.0) -> ReplicationProblem:
    """The replication problem of a workload file (see the module docstring).

    Parameters
    ----------
    path : str or Path
        A JSON file with ``sizes`` (site -> bytes of lineage it holds) and ``log``.
    communication_weight : float, optional
        Weight of saved communication in the net saving.
    storage_weight : float, optional
        Weight of replica storage in the net saving.

    Returns
    -------
    ReplicationProblem
        The sites, their lineage sizes and the traffic between them.

    Raises
    ------
    ConfigurationError
        Naming the file and what is wrong in it.
    """
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ConfigurationError(f"workload {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigurationError(f"workload {path} is not JSON: {exc}") from None
    return workload_problem(data, str(path), communication_weight=communication_weight,
                            storage_weight=storage_weight)


def workload_problem(data: Any, label: str, *, communication_weight: float = 1.0,
                     storage_weight: float = 1.0) -> ReplicationProblem:
    """The replication problem of workload `data` (a parsed workload file).

    Parameters
    ----------
    data : Any
        The parsed file: a dict with ``sizes`` and ``log``.
    label : str
        Names the workload in errors.
    communication_weight : float, optional
        Weight of saved communication in the net saving.
    storage_weight : float, optional
        Weight of replica storage in the net saving.

    Returns
    -------
    ReplicationProblem
        The sites, their lineage sizes and the traffic between them.

    Raises
    ------
    ConfigurationError
        Naming `label` and what is wrong in `data`.
    """
    if not isinstance(data, dict) or not isinstance(data.get("sizes"), dict):
        raise ConfigurationError(f"workload {label}: needs a 'sizes' object (site -> bytes of "
                                 "lineage it holds)")
    log = []
    for position, entry in enumerate(data.get("log", [])):
        try:
            amount = entry["bytes"] if "bytes" in entry else entry["requests"]
            log.append((str(entry["from"]), str(entry["to"]), float(amount)))
        except (KeyError, TypeError, ValueError):
            raise ConfigurationError(f"workload {label}: log entry {position} needs 'from', "
                                     "'to' and 'bytes' (or 'requests')") from None
    try:
        return ReplicationProblem.from_query_log(
            {str(k): float(v) for k, v in data["sizes"].items()}, log,
            communication_weight=communication_weight, storage_weight=storage_weight)
    except (ValueError, TypeError) as exc:
        raise ConfigurationError(f"workload {label}: {exc}") from None
