"""Lineage queries that cross sites (issue 20 items 4 and 6): pointers followed on demand by
asking the site that holds the object, over real HTTP on loopback; a site that is down or
slow answered within the timeout with the missing part named; a lying site refused; region
lineage through a pointer; the site API's answers."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
import warnings

import numpy as np
import pytest
import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from awlineage import ancestors, backward, info
from awlineage.federation import (
    BUNDLE_TYPE,
    RemotePointer,
    SiteUnreachableError,
    export_bundle,
    fetch_bundle,
    import_bundle,
    local_site,
    origins_of,
    read_bundle,
    resolve_pointers,
    site_info,
    site_status,
)
from awlineage.federation._site import FETCHES
from awlineage.lineage import LineageIncompleteWarning
from awlineage.persistence import qualified_name
from awlineage.regions import Region, capture_regions, elementwise
from tests.commands import run_awl
from tests.federation.conftest import Site
from tests.federation.remote_models import FedRemoteFrame, FedRemoteStep

STEP = qualified_name(FedRemoteStep)


def _chain(site: Site, n: int, prefix: str, made_from=None) -> list[FedRemoteStep]:
    """`n` steps made at `site`, each from the one before (the first from `made_from`)."""
    with site.current():
        steps, previous = [], made_from
        for i in range(n):
            previous = FedRemoteStep(label=f"{prefix}{i}", made_from=previous)
            steps.append(previous)
        steps[-1].commit()
    return steps


def _three_sites(sites):
    """A makes a0 <- a1 <- a2 <- a3; B imports a3 to depth 1 (a1 a pointer to A) and makes
    b0 <- b1 <- b2 from it; C imports b2 to depth 1 (b0 a pointer to B)."""
    a, b, c = sites("a"), sites("b"), sites("c")
    a_steps = _chain(a, 4, "a")
    a.start()
    import_bundle(export_bundle(a_steps[-1], depth=1, database=a.db).to_bytes(), database=b.db)
    b_steps = _chain(b, 3, "b", made_from=b.db.get(a_steps[-1].object_id))
    b.start()
    import_bundle(export_bundle(b_steps[-1], depth=1, database=b.db).to_bytes(), database=c.db)
    return a, b, c, a_steps, b_steps


def _fetches(site: Site) -> list[tuple[str, int, bool]]:
    with site.db.engine.connect() as conn:
        rows = conn.execute(sa.select(FETCHES.c.site_url, FETCHES.c.object_id, FETCHES.c.ok)
                            .order_by(FETCHES.c.fetch_id))
        return [tuple(row) for row in rows]


def _held(site: Site, object_id: int) -> str | None:
    registry = site.db.framework["awl_object"]
    with site.db.engine.connect() as conn:
        return conn.execute(sa.select(registry.c.class_name)
                            .where(registry.c.object_id == object_id)).scalar()


def test_ancestors_at_a_third_site_reach_the_first_sites_roots(sites) -> None:
    a, b, c, a_steps, b_steps = _three_sites(sites)
    top = c.db.get(b_steps[-1].object_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LineageIncompleteWarning)
        found = ancestors(top, database=c.db)
    assert [o.label for o in found] == ["b1", "b0", "a3", "a2", "a1", "a0"]
    assert all(isinstance(o, FedRemoteStep) for o in found)
    origins = origins_of(c.db, [o.object_id for o in found])
    assert {o.label: (origins[o.object_id].site.url, origins[o.object_id].via)
            for o in found} == {
        "b1": (b.url, "bundle"), "b0": (b.url, "resolved"), "a3": (a.url, "resolved"),
        "a2": (a.url, "resolved"), "a1": (a.url, "resolved"), "a0": (a.url, "resolved")}
    b0, a1 = b_steps[0].object_id, a_steps[1].object_id
    assert _fetches(c) == [(b.url, b0, True), (a.url, a1, True)]  # one request per site
    assert [o.label for o in ancestors(top, database=c.db)] == [o.label for o in found]
    assert len(_fetches(c)) == 2  # kept here: asked once


def test_info_and_a_depth_limited_walk_fetch_only_what_they_show(sites) -> None:
    a, b, c, _a_steps, b_steps = _three_sites(sites)
    top = c.db.get(b_steps[-1].object_id)
    assert [o.label for o in ancestors(top, depth=3, database=c.db)] == ["b1", "b0", "a3"]
    assert [url for url, _, _ in _fetches(c)] == [b.url]  # A not asked: beyond the depth
    tree = info(top, depth=4, database=c.db).render()
    assert "label = 'a2'" in tree and "RemotePointer" not in tree
    assert [url for url, _, _ in _fetches(c)] == [b.url, a.url]


def test_a_site_down_is_reported_and_the_same_query_completes_when_it_is_back(sites) -> None:
    a, _b, c, a_steps, b_steps = _three_sites(sites)
    a.stop()
    top = c.db.get(b_steps[-1].object_id)
    started = time.monotonic()
    with pytest.warns(LineageIncompleteWarning) as caught:
        found = ancestors(top, database=c.db)
    assert time.monotonic() - started < 10  # not the 20 s timeout: refused at once
    assert [o.label if isinstance(o, FedRemoteStep) else "pointer" for o in found] == [
        "b1", "b0", "a3", "a2", "pointer"]
    a1, a0 = a_steps[1].object_id, a_steps[0].object_id
    assert isinstance(found[-1], RemotePointer) and found[-1].object_id == a1
    (warning,) = [w.message for w in caught if w.category is LineageIncompleteWarning]
    (missing,) = warning.missing
    assert (missing.object_id, missing.class_name, missing.origin_url) == (a1, STEP, a.url)
    assert "refused" in missing.reason
    assert a.url in str(warning) and "FedRemoteStep" in str(warning)
    assert _held(c, a0) is None  # nothing of A's part half-imported
    assert _fetches(c)[-1] == (a.url, a1, False)
    a.start()
    assert [o.label for o in ancestors(top, database=c.db)] == [
        "b1", "b0", "a3", "a2", "a1", "a0"]


def test_the_command_line_names_what_a_down_site_holds(sites) -> None:
    a, _b, c, a_steps, b_steps = _three_sites(sites)
    a.stop()
    done = run_awl(c.db, "ancestors", str(b_steps[-1].object_id), "--import",
                   "tests.federation.remote_models")
    assert done.returncode == 0, done.stderr
    assert "lineage incomplete" in done.stderr and a.url in done.stderr
    assert f"FedRemoteStep {a_steps[1].object_id} held at {a.url}" in done.stderr
    assert "RemotePointer" in done.stdout  # the leaf stays in the answer


def test_a_site_that_does_not_answer_in_time_is_given_up(sites, monkeypatch) -> None:
    a, _b, c, _a_steps, b_steps = _three_sites(sites)

    async def never_in_time(request: Request) -> Response:
        await asyncio.sleep(5)
        return Response(b"", media_type=BUNDLE_TYPE)

    a.start(Starlette(routes=[Route("/api/bundle", never_in_time)]))
    monkeypatch.setenv("AWL_SITE_TIMEOUT", "0.3")
    started = time.monotonic()
    with pytest.warns(LineageIncompleteWarning, match="answer within 0.3 s"):
        found = ancestors(c.db.get(b_steps[-1].object_id), database=c.db)
    assert time.monotonic() - started < 4  # given up, not waited for the 5 s answer
    assert isinstance(found[-1], RemotePointer)


def test_a_bundle_that_does_not_match_its_pointers_hash_is_refused(sites) -> None:
    a, b = sites("a"), sites("b")
    a_steps = _chain(a, 4, "a")
    import_bundle(export_bundle(a_steps[-1], depth=1, database=a.db), database=b.db)
    a1 = a_steps[1].object_id
    forged = export_bundle(a1, depth=2, database=a.db)
    record = next(r for r in forged.records if r.object_id == a1)
    record.values["label"] = "forged"
    record.content_hash = record.computed_hash()  # consistent in itself, not with the pointer
    payload = forged.to_bytes()
    read_bundle(payload)  # a hostile peer's bundle verifies on its own

    def lying(request: Request) -> Response:
        return Response(payload, media_type=BUNDLE_TYPE)

    a.start(Starlette(routes=[Route("/api/bundle", lying)]))
    report = resolve_pointers(b.db)
    assert report.resolved == []
    (missing,) = report.missing
    assert missing.object_id == a1 and missing.origin_url == a.url
    assert "refused" in missing.reason and "does not match the hash" in missing.reason
    assert _held(b, a1) == qualified_name(RemotePointer)
    assert _held(b, a_steps[0].object_id) is None
    a.start()  # the honest site
    assert resolve_pointers(b.db).resolved == [a1]
    assert b.db.get(a1).label == "a1"


def _frame(source: FedRemoteFrame, label: str) -> FedRemoteFrame:
    made = FedRemoteFrame(label=label)
    with capture_regions(made) as cap:
        cap.apply(elementwise(), [cap.array(source, 0, shape=(4, 4))])
    made.commit()
    return made


def test_backward_crosses_a_pointer_into_the_other_sites_region_tables(sites) -> None:
    a, b = sites("a"), sites("b")
    with a.current():
        raw = FedRemoteFrame(label="raw")
        raw.commit()
        reduced = _frame(_frame(raw, "mid"), "reduced")
    a.start()
    # the copy at B carries its own region tables; what they read (mid) is a pointer
    import_bundle(export_bundle(reduced, depth=0, database=a.db), database=b.db)
    with b.current():
        copy = b.db.get(reduced.object_id)
        sources = FedRemoteFrame(label="sources")
        with capture_regions(sources) as cap:
            call = cap.operator("pick", [cap.array(copy, 0, shape=(4, 4))], shape=(2,))
            call.lwrite(np.array([[0]]), np.array([[1, 1], [1, 2]]))
            call.lwrite(np.array([[1]]), np.array([[3, 0]]))
            call.close()
        sources.commit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LineageIncompleteWarning)
        result = backward(sources, [[0]], database=b.db)
    assert sorted(o.label for o in result.objects()) == ["mid", "raw", "reduced"]
    star = Region((4, 4), np.array([[1, 1], [1, 2]]))
    assert result[b.db.get(raw.object_id)] == star
    assert origins_of(b.db, [raw.object_id])[raw.object_id].via == "resolved"


def test_backward_with_the_other_site_down_names_the_pointer(sites) -> None:
    a, b = sites("a"), sites("b")
    with a.current():
        raw = FedRemoteFrame(label="raw")
        raw.commit()
        reduced = _frame(_frame(raw, "mid"), "reduced")
    import_bundle(export_bundle(reduced, depth=0, database=a.db), database=b.db)
    with pytest.warns(LineageIncompleteWarning, match="refused"):
        result = backward(b.db.get(reduced.object_id), [[2, 2]], database=b.db)
    assert [type(o).__name__ for o in result.objects()] == ["RemotePointer"]


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.headers["content-type"], answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["content-type"], exc.read()


def test_the_site_api_says_who_the_site_is_and_answers_bundles(sites) -> None:
    a, b = sites("a"), sites("b")
    a_steps = _chain(a, 4, "a")
    import_bundle(export_bundle(a_steps[-1], depth=1, database=a.db), database=b.db)
    a.start()
    b.start()
    status, kind, body = _get(f"{b.url}/api/site")
    assert status == 200 and kind == "application/json"
    assert json.loads(body) == {"site_id": local_site(b.db).site_id, "url": b.url,
                                "name": "b", "objects": 2, "copies": 2, "pointers": 1,
                                "lineage_bytes": 0, "fetches": []}  # B made nothing itself
    assert site_info(a.url) == local_site(a.db)
    a_status = site_status(a.url)
    assert a_status["objects"] == 4 and a_status["lineage_bytes"] > 4 * 100
    a3 = a_steps[-1].object_id
    bundle = read_bundle(fetch_bundle(a.url, [a3], depth=1))
    assert bundle.roots == [a3] and len(bundle.records) == 2
    assert [p.origin_url for p in bundle.pointers] == [a.url]
    status, kind, _ = _get(f"{a.url}/api/bundle?id={a3}&depth=all")
    assert (status, kind) == (200, BUNDLE_TYPE)


def test_the_viewer_shows_pointers_and_copies_with_their_origin(sites) -> None:
    a, b = sites("a"), sites("b")
    a_steps = _chain(a, 4, "a")
    import_bundle(export_bundle(a_steps[-1], depth=1, database=a.db), database=b.db)
    b.start()
    a1, a3 = a_steps[1].object_id, a_steps[3].object_id
    pointer = json.loads(_get(f"{b.url}/obj/{a1}?format=json")[2])["remote"]
    assert (pointer["kind"], pointer["class"], pointer["url"]) == (
        "pointer", STEP, f"{a.url}/obj/{a1}")
    assert "read-only" in pointer["note"]
    copy = json.loads(_get(f"{b.url}/obj/{a3}?format=json")[2])["remote"]
    assert (copy["kind"], copy["origin_url"], copy["via"]) == ("copy", a.url, "bundle")
    status, _, page = _get(f"{b.url}/obj/{a1}")
    assert status == 200 and f'href="{a.url}/obj/{a1}"' in page.decode()


@pytest.mark.parametrize(("query", "status", "message"), [
    ("id=12345", 404, "12345"),
    ("depth=1", 400, "parameter id is required"),
    ("id=abc", 400, "id must be an object id"),
    ("id={id}&depth=-1", 400, "parameter depth"),
    ("id={id}&depth=x", 400, "parameter depth"),
])
def test_the_bundle_api_refuses_bad_requests(sites, query, status, message) -> None:
    a = sites("a")
    a_steps = _chain(a, 1, "a")
    a.start()
    got, kind, body = _get(f"{a.url}/api/bundle?{query.format(id=a_steps[0].object_id)}")
    assert (got, kind) == (status, "application/json")
    assert message in json.loads(body)["error"]
    with pytest.raises(SiteUnreachableError, match=f"HTTP {status}"):
        fetch_bundle(a.url, [12345] if status == 404 else [], depth=1)
