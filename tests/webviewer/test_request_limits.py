"""DataLink and SODA take at most ``Limits.request_ids`` IDs per request (default 100), in the
query string or a form-encoded POST body, and answer more with a usage error before any id is
looked up (the answer's ``Server-Timing`` says 0 SQL statements); POST bodies are bounded too.
Served by uvicorn on both backends, driven by pyvo where a VO client would be."""

from __future__ import annotations

import io
import re

import httpx
import pytest
from astropy.io.votable import parse
from pyvo.dal import DALQueryError, DALServiceError
from pyvo.dal.adhoc import DatalinkService, SodaQuery

from awlineage import Database, DBObject, persistent
from webviewer import Limits

TIMING = re.compile(r'^db;desc="(\d+) queries"')


class Limited(DBObject):
    """Something to ask DataLink about."""

    __namespace__ = "viewerrequestlimits"
    name = persistent("Name", str, "")


def _stored(db: Database) -> list[str]:
    objects = [Limited(name=f"thing {i}") for i in range(3)]
    for obj in objects:
        obj.commit()
    return [str(obj.object_id) for obj in objects]


def _queries(answer: httpx.Response) -> int:
    match = TIMING.match(answer.headers["server-timing"])
    assert match, answer.headers["server-timing"]
    return int(match[1])


def _error_status(answer: httpx.Response) -> str:
    """The QUERY_STATUS ERROR message of a DALI error document."""
    resource = parse(io.BytesIO(answer.content)).resources[0]
    status = next(info for info in resource.infos if info.name == "QUERY_STATUS")
    assert status.value == "ERROR"
    return status.content


def test_datalink_refuses_more_ids_than_the_limit_before_looking_any_up(
        db: Database, serve_viewer) -> None:
    ids = _stored(db) * 34  # 102 ID values
    url = f"{serve_viewer()}/datalink/links"
    answer = httpx.get(url, params=[("ID", i) for i in ids[:101]])
    assert answer.status_code == 400
    assert answer.headers["content-type"].startswith("application/x-votable+xml")
    assert _error_status(answer) == ("UsageFault: 101 ID values in one request; the limit is "
                                     "100 (split the request)")
    assert _queries(answer) == 0
    with pytest.raises(DALQueryError, match="UsageFault: 102 ID values"):
        DatalinkService(url).run_sync(ids)
    links = DatalinkService(url).run_sync(ids[:100])
    assert len(list(links.bysemantics("#this", include_narrower=False))) == 100


def test_datalink_counts_ids_of_a_post_body_against_a_configured_limit(
        db: Database, serve_viewer) -> None:
    first, second, third = _stored(db)
    url = f"{serve_viewer(Limits(request_ids=2, request_body_bytes=1000))}/datalink/links"
    both = httpx.post(url, data={"ID": [first, second]})
    assert both.status_code == 200
    links = DatalinkService(url).create_query(id=[first, second]).execute(post=True)
    assert {row["ID"] for row in links.bysemantics("#this", include_narrower=False)} == {
        first, second}
    too_many = httpx.post(f"{url}?ID={first}", data={"ID": [second, third]})
    assert too_many.status_code == 400 and _queries(too_many) == 0
    assert _error_status(too_many).startswith("UsageFault: 3 ID values in one request; the "
                                              "limit is 2")
    fits = httpx.post(url, data={"ID": first, "RESPONSEFORMAT": "fits"})
    assert fits.status_code == 400
    assert _error_status(fits).startswith("UsageFault: RESPONSEFORMAT 'fits' is not offered")
    long = httpx.post(url, data={"ID": first, "X": "x" * 1000})
    assert long.status_code == 400
    assert re.fullmatch(r"UsageFault: the request body is 10\d\d bytes; the limit is 1000",
                        _error_status(long))
    chunked = httpx.post(url, content=iter([f"ID={first}&".encode(), b"X=" + b"x" * 2000]),
                         headers={"content-type": "application/x-www-form-urlencoded"})
    assert chunked.status_code == 400 and "content-length" not in chunked.request.headers
    assert _error_status(chunked) == ("UsageFault: the request body is longer than the "
                                      "limit of 1000 bytes")


def test_soda_refuses_more_ids_than_the_limit_before_looking_any_up(
        db: Database, serve_viewer) -> None:
    ids = _stored(db) * 34
    base = serve_viewer()
    sync = f"{base}/soda/sync"
    answer = httpx.get(sync, params=[("ID", i) for i in ids[:101]] + [("PIXEL", "1 2 1 2")])
    assert answer.status_code == 400 and _queries(answer) == 0
    assert answer.text == ("UsageError: 101 ID values in one request; the limit is 100 "
                           "(split the request)\n")
    query = SodaQuery(sync, id=ids, pixel="1 2 1 2")
    query.execute_stream()
    with pytest.raises(DALServiceError, match="UsageError: 102 ID values"):
        query.raise_if_error()
    two = httpx.get(sync, params=[("ID", ids[0]), ("ID", ids[1])])
    assert two.status_code == 400 and two.text.startswith("MultiValuedParamNotSupported: ")
    limited = f"{serve_viewer(Limits(request_ids=1, request_body_bytes=100))}/soda/sync"
    over = httpx.post(limited, data={"ID": ids[0], "POLYGON": "1 " * 60})
    assert over.status_code == 400
    assert over.text.startswith("UsageError: the request body is ") and "limit is 100" in over.text
