"""Asking other sites for lineage: a client for a site's HTTP API (``/api/site``,
``/api/bundle``) with timeouts, and `resolve_pointers`, which follows pointers by fetching a
bundle from the site that holds each object and importing it here (seed 001, Bonsai: the
pruned lineage is fetched on demand).

Every request has a timeout (``AWL_SITE_TIMEOUT`` seconds, default 5) that bounds the whole
answer, not only each read; a site that cannot answer becomes a `MissingLineage` entry naming
the object, its class, the site and the reason, never a hang. Each fetched bundle is imported
in one transaction (`import_bundle`, which checks every record's hash and, for a pointer it
fills, the hash the pointer recorded), so a refused bundle leaves nothing behind.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa

from awlineage import config
from awlineage.database import Database, read_stored_rows
from awlineage.errors import AwlError, ConfigurationError
from awlineage.federation._bundle import read_bundle
from awlineage.federation._import import ImportReport, import_bundle
from awlineage.federation._pointer import RemotePointer
from awlineage.federation._site import Site, log_fetch
from awlineage.lineage import FollowOutcome, MissingLineage, add_pointer_follower
from awlineage.persistence import qualified_name

BUNDLE_TYPE = "application/vnd.awlineage.bundle+zip"
"""The media type of a bundle answered by ``/api/bundle``."""
DEFAULT_TIMEOUT = 5.0
DEFAULT_DEPTH = 2
"""Links of ancestry fetched with each object a pointer stands for."""
MAX_ANSWER_BYTES = 1024**3
_POINTER_CLASS = qualified_name(RemotePointer)
_CHUNK = 500


class SiteUnreachableError(AwlError):
    """Another site did not answer usefully: refused, timed out, or an HTTP error."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"site {url} could not be asked: {reason}")
        self.url = url
        self.reason = reason


def site_timeout(timeout: float | None = None) -> float:
    """The seconds a request to another site may take: `timeout`, else ``AWL_SITE_TIMEOUT``, else 5.

    Parameters
    ----------
    timeout : float or None, optional
        The caller's choice; None for the setting.

    Returns
    -------
    float
        A positive number of seconds.

    Raises
    ------
    ConfigurationError
        When the value is not a positive number.
    """
    value = config.setting("site_timeout", timeout)
    if value is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigurationError(f"site_timeout (AWL_SITE_TIMEOUT) must be a number of "
                                 f"seconds, not {value!r}") from None
    if not seconds > 0:
        raise ConfigurationError(f"site_timeout (AWL_SITE_TIMEOUT) must be positive, not "
                                 f"{value!r}")
    return seconds


def _get(site_url: str, path: str, timeout: float | None) -> bytes:
    """The body of ``GET {site_url}{path}``, read within the timeout."""
    seconds = site_timeout(timeout)
    deadline = time.monotonic() + seconds
    request = urllib.request.Request(site_url.rstrip("/") + path,
                                     headers={"Accept": f"{BUNDLE_TYPE}, application/json"})
    try:
        with urllib.request.urlopen(request, timeout=seconds) as response:
            chunks, size = [], 0
            while chunk := response.read(1 << 16):
                chunks.append(chunk)
                size += len(chunk)
                if time.monotonic() > deadline:
                    raise SiteUnreachableError(site_url, f"no complete answer within "
                                                         f"{seconds:g} s")
                if size > MAX_ANSWER_BYTES:
                    raise SiteUnreachableError(site_url, f"answer larger than "
                                                         f"{MAX_ANSWER_BYTES} bytes")
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise SiteUnreachableError(site_url, f"HTTP {exc.code}: {_message(exc)}") from None
    except urllib.error.URLError as exc:
        raise SiteUnreachableError(site_url, _reason(exc.reason, seconds)) from None
    except TimeoutError as exc:
        raise SiteUnreachableError(site_url, _reason(exc, seconds)) from None
    except (OSError, http.client.HTTPException) as exc:
        raise SiteUnreachableError(site_url, _reason(exc, seconds)) from None


def _reason(exc: object, seconds: float) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the site down?)"
    if isinstance(exc, TimeoutError):
        return f"no answer within {seconds:g} s"
    return str(exc) or type(exc).__name__


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read(4096).decode("utf-8", "replace")
    except OSError:
        return exc.reason or ""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:200] or str(exc.reason)
    return str(data.get("error", data))[:200] if isinstance(data, dict) else body[:200]


def site_info(url: str, *, timeout: float | None = None) -> Site:
    """Ask a site who it is (``GET /api/site``).

    Parameters
    ----------
    url : str
        The site's HTTP API.
    timeout : float or None, optional
        Seconds the request may take; by default ``AWL_SITE_TIMEOUT``, else 5.

    Returns
    -------
    Site
        Its id, URL and name.

    Raises
    ------
    SiteUnreachableError
        Naming the URL and why it did not answer.
    """
    data = site_status(url, timeout=timeout)
    return Site(str(data["site_id"]), data.get("url"), data.get("name") or "")


def site_status(url: str, *, timeout: float | None = None) -> dict[str, Any]:
    """A site's ``/api/site`` answer.

    Who it is, what it holds, its lineage size and its query log per site asked.

    Parameters
    ----------
    url : str
        The site's HTTP API.
    timeout : float or None, optional
        Seconds the request may take; by default ``AWL_SITE_TIMEOUT``, else 5.

    Returns
    -------
    dict of str to Any
        The parsed JSON answer; it has at least ``site_id``.

    Raises
    ------
    SiteUnreachableError
        Naming the URL and why it did not answer.
    """
    body = _get(url, "/api/site", timeout)
    try:
        data = json.loads(body)
    except ValueError:
        raise SiteUnreachableError(url, "its /api/site answer is not JSON") from None
    if not isinstance(data, dict) or "site_id" not in data:
        raise SiteUnreachableError(url, "its /api/site answer is not a site's JSON")
    return data


def fetch_bundle(url: str, object_ids: Iterable[int], depth: int | None = DEFAULT_DEPTH, *,
                 timeout: float | None = None) -> bytes:
    """A bundle of `object_ids` with their ancestry, as another site exports it.

    The site answers ``GET /api/bundle``; the bytes are for `read_bundle`.

    Parameters
    ----------
    url : str
        The site's HTTP API.
    object_ids : iterable of int
        The objects asked for.
    depth : int or None, optional
        Links of ancestry to include; None for all.
    timeout : float or None, optional
        Seconds the request may take; by default ``AWL_SITE_TIMEOUT``, else 5.

    Returns
    -------
    bytes
        The bundle as the site sent it.

    Raises
    ------
    SiteUnreachableError
        Naming the URL and the reason: refused, timed out, or the HTTP status and message.
    """
    ids = list(dict.fromkeys(int(i) for i in object_ids))
    query = [("id", str(i)) for i in ids]
    if depth is not None:
        query.append(("depth", str(depth)))
    return _get(url, f"/api/bundle?{urlencode(query)}", timeout)


@dataclass
class ResolveReport:
    """What `resolve_pointers` did."""

    resolved: list[int] = field(default_factory=list)
    """Pointers replaced here by the object they stood for."""
    missing: list[MissingLineage] = field(default_factory=list)
    """Pointers that could not be followed, with the site and the reason."""
    requests: int = 0
    """Requests made to other sites."""
    imports: list[ImportReport] = field(default_factory=list)

    def summary(self) -> str:
        """One line."""
        return (f"{len(self.resolved)} pointers resolved, {len(self.missing)} not, in "
                f"{self.requests} requests")


@dataclass(frozen=True)
class _Pointer:
    object_id: int
    class_name: str
    origin_url: str | None
    origin_site: str


def _pointers(db: Database, ids: Sequence[int] | None) -> list[_Pointer]:
    """The pointers stored here among `ids` (None: all of them)."""
    registry = db.framework["awl_object"]
    query = sa.select(registry.c.object_id).where(registry.c.class_name == _POINTER_CLASS)
    found: list[int] = []
    with db.engine.connect() as conn:
        if ids is None:
            found = list(conn.execute(query).scalars())
        else:
            for start in range(0, len(ids), _CHUNK):
                found.extend(conn.execute(query.where(
                    registry.c.object_id.in_(ids[start:start + _CHUNK]))).scalars())
    if not found:
        return []
    return [_Pointer(r.object_id, r.values["remote_class"], r.values["origin_url"] or None,
                     r.values["origin_site"])
            for r in read_stored_rows(db, RemotePointer, sorted(found))]


def resolve_pointers(db: Database, ids: Iterable[int] | None = None, *,
                     depth: int | None = DEFAULT_DEPTH, timeout: float | None = None,
                     max_rounds: int = 10, via: str = "resolved") -> ResolveReport:
    """Follow pointers by asking the sites that hold their objects, and keep what arrives here.

    The pointers among `ids` (None: every pointer here) are followed; what arrives is kept
    with its origin (``via="resolved"``).

    Pointers are grouped by site: one request per site per round. A site that answers
    with a pointer of its own for an object (it holds only a pointer too) is asked no
    more for it; the site that pointer names is asked in the next round. With `ids` None,
    the pointers each import brings are followed too, up to `max_rounds` rounds.

    Parameters
    ----------
    db : Database
        This site's database, where what arrives is kept.
    ids : iterable of int or None, optional
        Object ids of the pointers to follow; None for every pointer here.
    depth : int or None, optional
        Links of ancestry fetched with each object (None: all the site has).
    timeout : float or None, optional
        Seconds per request (default ``AWL_SITE_TIMEOUT``, else 5).
    max_rounds : int, optional
        Rounds of requests at most (a round asks each site once).
    via : str, optional
        How the copies arrived, recorded with their origin (``replicated`` for
        `replicate`).

    Returns
    -------
    ResolveReport
        What was resolved, and a `MissingLineage` for each pointer that could not be:
        the site down, no URL known, a bundle refused (hash mismatch), a read-only
        database.
    """
    wanted = None if ids is None else sorted(set(int(i) for i in ids))
    report = ResolveReport()
    if db.read_only:
        where = db.url.render_as_string(hide_password=True)
        report.missing = [
            MissingLineage(p.object_id, p.class_name, p.origin_url,
                           f"not fetched: database {where} is open read-only, so what a "
                           "pointer stands for cannot be kept here")
            for p in _pointers(db, wanted)]
        return report
    failed: dict[int, MissingLineage] = {}
    redirect: dict[int, str] = {}
    asked: set[tuple[int, str]] = set()
    for _ in range(max_rounds):
        by_url: dict[str, list[_Pointer]] = {}
        for pointer in _pointers(db, wanted):
            if pointer.object_id in failed:
                continue
            url = redirect.get(pointer.object_id, pointer.origin_url)
            if not url:
                failed[pointer.object_id] = MissingLineage(
                    pointer.object_id, pointer.class_name, None,
                    f"no URL is known for site {pointer.origin_site}")
            elif (pointer.object_id, url) in asked:
                failed[pointer.object_id] = MissingLineage(
                    pointer.object_id, pointer.class_name, url,
                    "the site holds only a pointer to it as well")
            else:
                by_url.setdefault(url, []).append(pointer)
        if not by_url:
            break
        for url, group in sorted(by_url.items()):
            asked.update((p.object_id, url) for p in group)
            _ask(db, url, group, depth, timeout, report, failed, redirect, via)
    report.missing = sorted(failed.values(), key=lambda m: m.object_id)
    return report


def _ask(db: Database, url: str, group: list[_Pointer], depth: int | None,
         timeout: float | None, report: ResolveReport, failed: dict[int, MissingLineage],
         redirect: dict[int, str], via: str) -> None:
    """One request to `url` for the objects of `group`, and the import of its answer."""
    ids = [p.object_id for p in group]
    started = time.monotonic()
    report.requests += 1
    try:
        data = fetch_bundle(url, ids, depth, timeout=timeout)
    except SiteUnreachableError as exc:
        _log(db, url, ids, 0, time.monotonic() - started, False)
        if exc.reason.startswith("HTTP 404") and len(group) > 1:
            for pointer in group:  # which one it lacks: ask for each alone
                _ask(db, url, [pointer], depth, timeout, report, failed, redirect, via)
            return
        for p in group:
            failed[p.object_id] = MissingLineage(p.object_id, p.class_name, url, exc.reason)
        return
    _log(db, url, ids, len(data), time.monotonic() - started, True)
    try:
        bundle = read_bundle(data, name=f"the bundle from {url}")
        imported = import_bundle(bundle, database=db, via=via)
    except AwlError as exc:
        for p in group:
            failed[p.object_id] = MissingLineage(p.object_id, p.class_name, url,
                                                 f"refused: {exc}")
        return
    report.imports.append(imported)
    report.resolved.extend(imported.filled)
    filled = set(imported.filled)
    onward = {p.object_id: p.origin_url for p in bundle.pointers}
    for p in group:
        if p.object_id in filled:
            continue
        elsewhere = onward.get(p.object_id)
        if elsewhere and elsewhere.rstrip("/") != url.rstrip("/"):
            redirect[p.object_id] = elsewhere
        else:
            failed[p.object_id] = MissingLineage(p.object_id, p.class_name, url,
                                                 "the site's answer did not include it")


def _log(db: Database, url: str, ids: list[int], size: int, seconds: float,
         ok: bool) -> None:
    """One query-log row per object asked for, the answer's size shared among them."""
    share = size // max(len(ids), 1)
    for oid in ids:
        log_fetch(db, url, oid, share, seconds / max(len(ids), 1), ok)


def _follow(db: Database, pointer_ids: list[int], depth: int | None) -> FollowOutcome:
    """The pointer follower lineage queries call (registered at import)."""
    found = resolve_pointers(db, pointer_ids,
                             depth=DEFAULT_DEPTH if depth is None else max(depth, 0))
    return FollowOutcome(found.resolved, found.missing)


add_pointer_follower(_follow)
