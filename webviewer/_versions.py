"""Versions over time (seed Fig. 5): ``/obj/<id>/versions``, every version of an object's
identity against its creation date, and ``/versions/class/<name>``, how often a class's
objects were made and remade per day or hour, and how many versions its identities have.

A version is a row of the class's table: objects of one identity share its ``_identity``
key, and ``version`` counts them from 1 (``awlineage.database``'s commit assigns it)."""

from __future__ import annotations

import itertools
from typing import Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.routing import Route

from awlineage import Database
from awlineage.persistence import describe_class, qualified_name, short_name
from awlineage.query import Compiler
from webviewer._charts import Bar, Point, bar_chart, versions_chart
from webviewer._classes import ClassIndex, class_search_url, class_url
from webviewer._params import choice_param, object_id
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

NEW_FILL = "#2a6f97"
REMADE_FILL = "#d96c00"


@page
def object_versions(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/versions``: every version of the object's identity, newest first, and
    the chart of versions against creation date; each version but the first links to its
    diff with the version before (``diff_url``), in the chart and in the table."""
    oid = object_id(request)
    db = viewer.database
    obj = db.get(oid)
    cls = type(obj)
    table = db.tables_for(cls).table
    mine = table.alias("mine")
    limit = viewer.limits.versions
    query = (sa.select(table.c.object_id, table.c.version, table.c.creation_date,
                       sa.func.count().over().label("total"))
             .join(mine, mine.c._identity == table.c._identity)
             .where(mine.c.object_id == oid)
             .order_by(table.c.version.desc(), table.c.object_id.desc()).limit(limit))
    with db.engine.connect() as conn:
        rows = conn.execute(query).all()
    versions = [{"object_id": r.object_id, "url": f"/obj/{r.object_id}", "version": r.version,
                 "creation_date": r.creation_date, "this": r.object_id == oid} for r in rows]
    total = rows[0].total if rows else 1
    if not rows:  # a class without identity: each object is its own, only version
        versions = [{"object_id": oid, "url": f"/obj/{oid}", "version": obj.version,
                     "creation_date": obj.creation_date, "this": True}]
    for entry in versions:
        entry["diff_url"] = None
    for newer, older in itertools.pairwise(versions):  # newest first: each after the older
        newer["diff_url"] = f"/diff/{older['object_id']}/{newer['object_id']}"
    limits_hit = [] if total <= limit else [
        f"{total} versions; the newest {limit} are shown (versions)"]
    name = qualified_name(cls)
    chart = versions_chart(
        [Point(v["creation_date"], v["version"], v.get("diff_url") or v["url"],
               f"version {v['version']}: {v['object_id']}, "
               f"{v['creation_date']:%Y-%m-%d %H:%M:%S} UTC"
               + (": open its diff with the version before" if v.get("diff_url") else ""))
         for v in versions],
        f"Versions of {short_name(name)} {oid} against creation date")
    data = {"object_id": oid, "url": f"/obj/{oid}", "class": name,
            "class_label": describe_class(cls), "class_url": class_url(name),
            "identity": list(cls.identity), "total": total,
            "versions": versions}
    return Page("versions.html", data, title=f"Versions of {oid}", context={"chart": chart},
                limits_hit=limits_hit)


def _bucket(db: Database, column: sa.ColumnElement, unit: str) -> sa.ColumnElement:
    """The UTC day (``2024-05-01``) or hour (``2024-05-01T13``) of a creation date, as text:
    SQLite keeps ISO text (a prefix of it), PostgreSQL a timestamptz in a UTC session."""
    if db.dialect.NAME == "sqlite":
        return sa.func.substr(column, 1, 10 if unit == "day" else 13, type_=sa.String)
    pattern = "YYYY-MM-DD" if unit == "day" else 'YYYY-MM-DD"T"HH24'
    return sa.func.to_char(column, pattern, type_=sa.String)


def _per_bucket(db: Database, tables: list[sa.Table], unit: str, limit: int
                ) -> list[tuple[str, int, int]]:
    """Newest `limit` + 1 buckets: (bucket, versions made, of which remade: version > 1)."""
    parts = [sa.select(_bucket(db, t.c.creation_date, unit).label("bucket"),
                       t.c.version) for t in tables]
    made = (parts[0] if len(parts) == 1 else sa.union_all(*parts)).subquery("made")
    query = (sa.select(made.c.bucket, sa.func.count(),
                       sa.func.sum(sa.case((made.c.version > 1, 1), else_=0)))
             .group_by(made.c.bucket).order_by(made.c.bucket.desc()).limit(limit + 1))
    with db.engine.connect() as conn:
        return [(b, int(n), int(r or 0)) for b, n, r in conn.execute(query)]


def _versions_per_identity(db: Database, tables: list[sa.Table]) -> list[tuple[int, int]]:
    """(number of versions, identities having that many), fewest first."""
    parts = []
    for t in tables:
        key = sa.func.coalesce(t.c._identity, sa.cast(t.c.object_id, sa.Text))
        parts.append(sa.select(sa.func.count().label("n")).select_from(t).group_by(key))
    counts = (parts[0] if len(parts) == 1 else sa.union_all(*parts)).subquery("counts")
    query = sa.select(counts.c.n, sa.func.count()).group_by(counts.c.n).order_by(counts.c.n)
    with db.engine.connect() as conn:
        return [(int(n), int(k)) for n, k in conn.execute(query)]


@page
def class_versions(request: Request, viewer: Viewer) -> Page:
    """``/versions/class/<name>?bucket=day|hour``: versions made per time bucket (new ones
    and remade ones), and how many versions the class's identities have."""
    unit = choice_param(request, "bucket", ("day", "hour"), "day")
    db = viewer.database
    name = ClassIndex(db).resolve(request.path_params["name"])
    tables = [ct.table for ct in Compiler(db).tables([db.class_named(name)])]
    limit = viewer.limits.chart_buckets
    buckets = _per_bucket(db, tables, unit, limit) if tables else []
    limits_hit = []
    if len(buckets) > limit:
        buckets = buckets[:limit]
        limits_hit.append(f"only the newest {limit} {unit}s are charted (chart_buckets)")
    buckets.reverse()
    distribution = _versions_per_identity(db, tables) if tables else []
    made: list[dict[str, Any]] = [
        {"bucket": b, "versions": n, "remade": r, "new": n - r} for b, n, r in buckets]
    per_identity = [{"versions": n, "identities": k} for n, k in distribution]
    short = short_name(name)
    charts = {
        "made": bar_chart(
            [Bar(m["bucket"], ((m["new"], NEW_FILL, f"{m['bucket']}: {m['new']} new"),
                               (m["remade"], REMADE_FILL,
                                f"{m['bucket']}: {m['remade']} remade")))
             for m in made],
            f"{short}: versions made per {unit}", f"{unit} (UTC)", "versions made"),
        "distribution": bar_chart(
            [Bar(str(d["versions"]), ((d["identities"], NEW_FILL,
                                       f"{d['identities']} with {d['versions']} versions"),))
             for d in per_identity],
            f"{short}: versions per identity", "versions of one identity", "identities"),
    }
    data: dict[str, Any] = {
        "class": name, "class_url": class_url(name), "search_url": class_search_url(name),
        "bucket": unit, "made": made, "versions_per_identity": per_identity,
        "remade": sum(m["remade"] for m in made), "versions": sum(m["versions"] for m in made),
    }
    return Page("class_versions.html", data, title=f"Versions of {short}",
                context={"charts": charts}, limits_hit=limits_hit)


routes = [
    Route("/obj/{object_id}/versions", object_versions, methods=["GET"]),
    Route("/versions/class/{name}", class_versions, methods=["GET"]),
]
