"""Sites: this database's identity among others, the sites it has heard of, and where its
copies of other sites' objects came from.

A site is one database, one data server and the HTTP API in front of them (``awl serve``),
named by the API's URL. Each database gets a random site id (a UUID) the first time it acts as
a site; its URL comes from ``AWL_SITE_URL`` (or ``awl sites init --url``).

Object ids stay unique across sites because they are 63-bit time-ordered ids (milliseconds,
a 12-bit node per process drawn from host and process id, a 10-bit sequence) and because an
object's origin travels beside it: a copy's row in ``awl_origin`` names the site that made
it and the content hash it had there. Two sites can only produce the same id in the same
millisecond with the same node and sequence number; an import that meets an id already held
here by a different object (another content hash) is refused, never merged.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from awlineage import config
from awlineage.database import Database, new_metadata
from awlineage.errors import ConfigurationError

URL_WIDTH = 400
NAME_WIDTH = 200
_METADATA = sa.MetaData(naming_convention=new_metadata().naming_convention)
SITES = sa.Table(
    "awl_site", _METADATA,
    sa.Column("site_id", sa.String(36), primary_key=True, comment="UUID of the site"),
    sa.Column("url", sa.String(URL_WIDTH), nullable=True, comment="Base URL of its HTTP API"),
    sa.Column("name", sa.String(NAME_WIDTH), nullable=False, server_default=""),
    sa.Column("is_local", sa.Boolean, nullable=False, comment="True for this database"),
    sa.Column("first_seen", sa.DateTime, nullable=False),
)
ORIGINS = sa.Table(
    "awl_origin", _METADATA,
    sa.Column("object_id", sa.BigInteger, primary_key=True, autoincrement=False,
              comment="An object copied here from another site"),
    sa.Column("site_id", sa.String(36), nullable=False, index=True,
              comment="The site that made it"),
    sa.Column("site_url", sa.String(400), nullable=True, comment="That site's API URL"),
    sa.Column("content_hash", sa.String(64), nullable=False,
              comment="SHA-256 of its record (awlineage.federation)"),
    sa.Column("arrived", sa.DateTime, nullable=False),
    sa.Column("via", sa.String(20), nullable=False,
              comment="bundle, file, resolved (a pointer followed) or replicated"),
)
FETCHES = sa.Table(
    "awl_remote_fetch", _METADATA,
    sa.Column("fetch_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("site_url", sa.String(400), nullable=False, index=True,
              comment="The site asked"),
    sa.Column("object_id", sa.BigInteger, nullable=False, comment="The object asked for"),
    sa.Column("bytes", sa.BigInteger, nullable=False, comment="Size of the answer"),
    sa.Column("seconds", sa.Float, nullable=False),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("asked", sa.DateTime, nullable=False),
)
"""The query log: every request this site made for another site's lineage."""
SITE_TABLES = (SITES, ORIGINS, FETCHES)
"""The tables a database gets when it first takes part in a federation."""


@dataclass(frozen=True)
class Site:
    """A site: its id, the URL of its HTTP API (None when not known) and a name."""

    site_id: str
    url: str | None
    name: str = ""

    def describe(self) -> str:
        """The site for people: its URL, else its id."""
        return self.url or f"site {self.site_id}"


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def site_tables(db: Database) -> None:
    """Create the site tables in `db` when missing (never in a read-only database)."""
    if db.read_only:
        return
    if getattr(db, "_awl_site_tables", False):
        return
    _METADATA.create_all(db.engine, checkfirst=True)
    db._awl_site_tables = True  # type: ignore[attr-defined]


def has_site_tables(db: Database) -> bool:
    """Whether `db` has the site tables (a database that never took part in a federation
    has not)."""
    if getattr(db, "_awl_site_tables", False):
        return True
    present = set(sa.inspect(db.engine).get_table_names(schema=db.schema))
    return {"awl_site", "awl_origin"} <= present


def recorded_site(db: Database) -> Site | None:
    """A database's site as it is recorded (by ``awl sites init``, ``awl serve`` or any
    export or import), or None when it never recorded one: unlike `local_site`, it neither
    makes an id nor derives one from the database's URL.

    Parameters
    ----------
    db : Database
        The database.

    Returns
    -------
    Site or None
        The site, with its recorded URL and name.
    """
    if not has_site_tables(db):
        return None
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(SITES).where(SITES.c.is_local)).first()
    return None if row is None else Site(row.site_id, row.url, row.name)


def local_site(db: Database) -> Site:
    """A database's site: its id (made once and kept), its URL and its name.

    The URL is ``AWL_SITE_URL`` or the one recorded. A read-only database that never recorded
    a site answers with an id derived from its URL (stable, but not stored).

    Parameters
    ----------
    db : Database
        The database.

    Returns
    -------
    Site
        The site.
    """
    row: Site | sa.Row | None = None
    if db.read_only:
        row = recorded_site(db)
        if row is None:
            derived = str(uuid.uuid5(uuid.NAMESPACE_URL,
                                     db.url.render_as_string(hide_password=True)
                                     + f"#{db.schema or ''}"))
            return Site(derived, config.setting("site_url"), "")
    else:
        site_tables(db)
        with db.engine.begin() as conn:
            row = conn.execute(sa.select(SITES).where(SITES.c.is_local)).first()
            if row is None:
                conn.execute(SITES.insert().values(site_id=str(uuid.uuid4()), url=None,
                                                   name="", is_local=True, first_seen=_now()))
                row = conn.execute(sa.select(SITES).where(SITES.c.is_local)).first()
    url = config.setting("site_url") or row.url
    return Site(row.site_id, url.rstrip("/") if url else None, row.name)


def check_site_settings(url: str | None = None, name: str | None = None) -> None:
    """Refuse a site URL or name that `set_local_site` could not record, before anything is
    opened or created (``awl sites init`` checks its arguments with it first).

    Parameters
    ----------
    url : str or None
        An http:// or https:// URL of at most 400 characters, or None.
    name : str or None
        A name of at most 200 characters, or None.

    Raises
    ------
    ConfigurationError
        Naming the URL or name and what is wrong with it.

    Examples
    --------
    >>> from awlineage.federation import check_site_settings
    >>> check_site_settings("https://archive.example.org/awl", "archive")
    >>> try:
    ...     check_site_settings("archive.example.org")
    ... except Exception as err:
    ...     print(err)
    site URL 'archive.example.org' is not an http:// or https:// URL
    """
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigurationError(f"site URL {url!r} is not an http:// or https:// URL")
    if url is not None and len(url.rstrip("/")) > URL_WIDTH:
        raise ConfigurationError(f"site URL {url[:40]!r}... has {len(url.rstrip('/'))} "
                                 f"characters; at most {URL_WIDTH} are recorded")
    if name is not None and len(name) > NAME_WIDTH:
        raise ConfigurationError(f"site name {name[:40]!r}... has {len(name)} characters; "
                                 f"at most {NAME_WIDTH} are recorded")


def set_local_site(db: Database, url: str | None = None, name: str | None = None) -> Site:
    """Record this site's URL and name (``awl sites init``).

    Parameters
    ----------
    db : Database
        This site's database.
    url : str or None
        The http:// or https:// URL other sites reach this one at; None keeps the recorded one.
    name : str or None
        The site's name; None keeps the recorded one.

    Returns
    -------
    Site
        This site, as recorded now.

    Raises
    ------
    ConfigurationError
        When `url` or `name` is refused by `check_site_settings` (nothing is written).
    """
    check_site_settings(url, name)
    site = local_site(db)
    changes = {}
    if url is not None:
        changes["url"] = url.rstrip("/")
    if name is not None:
        changes["name"] = name
    if changes:
        with db.engine.begin() as conn:
            conn.execute(SITES.update().where(SITES.c.site_id == site.site_id).values(**changes))
    return local_site(db)


def remember_site(conn: sa.Connection, site: Site) -> None:
    """Record another site (or update its URL) on `conn`, inside a write transaction."""
    found = conn.execute(sa.select(SITES.c.is_local, SITES.c.url)
                         .where(SITES.c.site_id == site.site_id)).first()
    if found is None:
        conn.execute(SITES.insert().values(site_id=site.site_id, url=site.url,
                                           name=site.name, is_local=False,
                                           first_seen=_now()))
    elif not found.is_local and site.url and found.url != site.url:
        conn.execute(SITES.update().where(SITES.c.site_id == site.site_id)
                     .values(url=site.url))


def known_sites(db: Database) -> list[Site]:
    """The other sites this database has exchanged lineage with, by URL.

    Parameters
    ----------
    db : Database
        The database asked.

    Returns
    -------
    list of Site
        Sorted by URL; empty when the database has no site tables.
    """
    if not has_site_tables(db):
        return []
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(SITES).where(~SITES.c.is_local)
                            .order_by(SITES.c.url, SITES.c.site_id))
        return [Site(r.site_id, r.url, r.name) for r in rows]


@dataclass(frozen=True)
class Origin:
    """Where a copy held here came from."""

    object_id: int
    site: Site
    content_hash: str
    via: str


def origins_of(db: Database, object_ids: Iterable[int]) -> dict[int, Origin]:
    """Where copies held in a database came from.

    Parameters
    ----------
    db : Database
        The database.
    object_ids : iterable of int
        Objects to look up; those made here are left out of the answer.

    Returns
    -------
    dict of int to Origin
        The origin of each object among `object_ids` that is a copy from another site.
    """
    ids = list(dict.fromkeys(object_ids))
    if not ids or not has_site_tables(db):
        return {}
    found: dict[int, Origin] = {}
    with db.engine.connect() as conn:
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = conn.execute(
                sa.select(ORIGINS, SITES.c.name)
                .join(SITES, SITES.c.site_id == ORIGINS.c.site_id, isouter=True)
                .where(ORIGINS.c.object_id.in_(chunk)))
            for r in rows:
                found[r.object_id] = Origin(r.object_id, Site(r.site_id, r.site_url,
                                                              r.name or ""),
                                            r.content_hash, r.via)
    return found


def count_copies(db: Database) -> int:
    """How many objects in a database are copies of other sites' objects.

    Parameters
    ----------
    db : Database
        The site's database.

    Returns
    -------
    int
        The count (0 for a database that never took part in a federation).
    """
    if not has_site_tables(db):
        return 0
    with db.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(ORIGINS)).scalar_one()


def mark_origins(conn: sa.Connection, origins: Sequence[Origin]) -> None:
    """Record where copies came from, on `conn` inside a write transaction (an object
    already marked keeps its first origin)."""
    if not origins:
        return
    ids = [o.object_id for o in origins]
    present: set[int] = set()
    for start in range(0, len(ids), 500):
        present.update(conn.execute(sa.select(ORIGINS.c.object_id)
                                    .where(ORIGINS.c.object_id.in_(ids[start:start + 500])))
                       .scalars())
    rows = [{"object_id": o.object_id, "site_id": o.site.site_id, "site_url": o.site.url,
             "content_hash": o.content_hash, "arrived": _now(), "via": o.via}
            for o in origins if o.object_id not in present]
    if rows:
        conn.execute(ORIGINS.insert(), rows)


def log_fetch(db: Database, site_url: str, object_id: int, size: int, seconds: float,
              ok: bool) -> None:
    """Add one request for another site's lineage to the query log.

    Never fails the caller: a read-only database keeps no log, and a database error is
    ignored.

    Parameters
    ----------
    db : Database
        The database whose log is written.
    site_url : str
        The site asked.
    object_id : int
        The object asked for.
    size : int
        Bytes received.
    seconds : float
        How long the request took.
    ok : bool
        Whether the site answered.
    """
    if db.read_only:
        return
    try:
        site_tables(db)
        with db.engine.begin() as conn:
            conn.execute(FETCHES.insert().values(site_url=site_url, object_id=object_id,
                                                 bytes=size, seconds=seconds, ok=ok,
                                                 asked=_now()))
    except sa.exc.SQLAlchemyError:
        pass
