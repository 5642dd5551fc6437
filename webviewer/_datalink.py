"""DataLink 1.1 ``{links}`` at ``/datalink/links?ID=<object_id>``: what one can get for an
object, as a VOTable a VO client (pyvo, TOPCAT) reads.

The rows and their semantics are `webviewer._datalink_rows`; a ``#cutout`` row names the
SODA service of `webviewer._soda`, described in a service descriptor resource. An
unknown id is a ``NotFoundFault`` row, a malformed one a ``UsageFault`` row. ``ID`` may be
given up to ``Limits.request_ids`` times (default 100), in the query string or a
form-encoded POST body; more is a ``UsageFault`` error document (400), answered before any
id is looked up.
"""

from __future__ import annotations

import io
import logging
import re

from astropy.io.votable.tree import (
    Field,
    Group,
    Info,
    Param,
    Resource,
    TableElement,
    Values,
    VOTableFile,
)
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webviewer._dali import DaliUsageError, dali_parameters
from webviewer._datalink_rows import DATALINK_TYPE, Link, links_of
from webviewer._viewer import Viewer, viewer_of

log = logging.getLogger("webviewer")

LINKS_STANDARD = "ivo://ivoa.net/std/DataLink#links-1.1"
SODA_STANDARD = "ivo://ivoa.net/std/SODA#sync-1.0"
SODA_SERVICE = "soda"
"""XML ID of the SODA service descriptor, which #cutout rows name in service_def."""
ID_FIELD = "ID"
"""XML ID of the ID column, which the SODA descriptor's ID parameter refers to."""
VOTABLE_FORMATS = ("", "votable", "application/x-votable+xml", "text/xml")
COLUMNS = [  # name, datatype, ucd
    ("ID", "char", "meta.id;meta.main"),
    ("access_url", "char", "meta.ref.url"),
    ("service_def", "char", "meta.ref"),
    ("error_message", "char", "meta.code.error"),
    ("description", "char", "meta.note"),
    ("semantics", "char", "meta.code"),
    ("content_type", "char", "meta.code.mime"),
    ("content_length", "long", "phys.size;meta.file"),
]


async def links(request: Request) -> Response:
    """``/datalink/links``: the links of each ``ID``, as a DataLink VOTable."""
    viewer = viewer_of(request)
    try:
        params = await dali_parameters(request, viewer.limits)
    except DaliUsageError as exc:
        return _error_document(f"UsageFault: {exc.message}")
    fmt = next((v for k, v in params if k.upper() == "RESPONSEFORMAT"), "")
    fmt = fmt.split(";")[0].strip().lower()
    if fmt not in VOTABLE_FORMATS:
        return _error_document(f"UsageFault: RESPONSEFORMAT {fmt[:40]!r} is not offered; the "
                               "only format is VOTable")
    ids = [v for k, v in params if k.upper() == "ID"]
    base = str(request.base_url).rstrip("/")
    try:
        rows = await run_in_threadpool(_all_links, ids, viewer, base)
    except Exception as exc:  # the whole request failed: a DALI error document
        log.exception("unexpected error on %s", request.url.path)
        return _error_document(f"DefaultFault: internal error ({type(exc).__name__}); see the "
                               "server's log", status=500)
    body = _votable(rows, base)
    return Response(body, media_type=DATALINK_TYPE)


def _all_links(ids: list[str], viewer: Viewer, base: str) -> list[Link]:
    rows: list[Link] = []
    with viewer.session.activate():
        for text in ids:
            rows.extend(links_of(text, base, SODA_SERVICE))
    return rows


def _votable(rows: list[Link], base: str) -> bytes:
    votable = VOTableFile()
    results = Resource(type="results")
    votable.resources.append(results)
    results.infos.append(Info(name="standardID", value=LINKS_STANDARD))
    table = TableElement(votable)
    results.tables.append(table)
    for name, datatype, ucd in COLUMNS:
        table.fields.append(Field(votable, name=name, ID=name if name == ID_FIELD else None,
                                  datatype=datatype, ucd=ucd, unit="byte" if
                                  name == "content_length" else None,
                                  arraysize="*" if datatype == "char" else None))
    table.create_arrays(len(rows))
    for i, row in enumerate(rows):
        table.array[i] = (row.id, row.access_url, row.service_def, row.error_message,
                          row.description, row.semantics, row.content_type,
                          row.content_length if row.content_length is not None else 0)
        for name in ("access_url", "service_def", "error_message", "description",
                     "content_type"):
            table.array.mask[i][name] = not getattr(row, name)
        table.array.mask[i]["content_length"] = row.content_length is None
    votable.resources.append(_soda_descriptor(votable, base))
    out = io.BytesIO()
    votable.to_xml(out, tabledata_format="tabledata")
    # astropy writes an empty numeric array PARAM as zeros; DataLink wants value="" for a
    # parameter the user fills in. The PARAMs are ours, so the substitution is exact.
    return _EMPTY_ARRAY_VALUE.sub(r'\1value=""', out.getvalue().decode()).encode()


_EMPTY_ARRAY_VALUE = re.compile(r'(<PARAM ID="(?:CIRCLE|PIXEL|TIME)"[^>]*?)value="[0 ]*"')


def _soda_descriptor(votable: VOTableFile, base: str) -> Resource:
    """The SODA service descriptor: where to call it and its input parameters."""
    resource = Resource(type="meta", utype="adhoc:service", ID=SODA_SERVICE,
                        name="dependency_cutouts")
    resource.description = ("Cutouts of an object on every image that made it (seed 003, "
                            "section 5.3.2), placed by region lineage")
    resource.params.append(Param(votable, name="standardID", datatype="char", arraysize="*",
                                 value=SODA_STANDARD))
    resource.params.append(Param(votable, name="accessURL", datatype="char", arraysize="*",
                                 ucd="meta.ref.url", value=f"{base}/soda/sync"))
    resource.params.append(Param(votable, name="contentType", datatype="char", arraysize="*",
                                 value="application/fits"))
    group = Group(resource, name="inputParams")
    resource.groups.append(group)
    entries = [
        Param(votable, name="ID", datatype="char", arraysize="*", value="", ref=ID_FIELD,
              ucd="meta.id;meta.main"),
        Param(votable, name="POS", datatype="char", arraysize="*", value="",
              ucd="pos.outline;obs"),
        Param(votable, name="CIRCLE", datatype="double", arraysize="3", xtype="circle",
              unit="deg", value="", ucd="pos.outline;obs"),
        Param(votable, name="POLYGON", datatype="double", arraysize="*", xtype="polygon",
              unit="deg", value="", ucd="pos.outline;obs"),
        Param(votable, name="PIXEL", datatype="long", arraysize="4", value="",
              ucd="pos.cartesian;instr.pixel"),
        Param(votable, name="LINEAGE", datatype="char", arraysize="*", value=""),
        Param(votable, name="TIME", datatype="double", arraysize="2", xtype="interval",
              unit="d", value="", ucd="time.interval;obs.exposure"),
    ]
    descriptions = {
        "ID": "The object to cut out (its object_id)",
        "POS": "CIRCLE ra dec r, RANGE lon1 lon2 lat1 lat2 or POLYGON ra1 dec1 ... (deg, ICRS)",
        "CIRCLE": "A circle to cut out: ra dec radius (deg, ICRS)",
        "POLYGON": "A polygon to cut out: ra dec of three or more vertices (deg, ICRS)",
        "PIXEL": "A pixel box x0 x1 y0 y1: 1-based, inclusive FITS pixels of the image (of "
                 "the coadd for a source); works without a WCS",
        "TIME": "MJD interval: keep the images observed within it (MJD-OBS + EXPTIME)",
        "LINEAGE": "backward: also cut every ancestor image where region lineage places the "
                   "region (the default for a source: every image that made its pixels); "
                   "none: the image alone, or a source's coadd alone (the default for an "
                   "image)",
    }
    for param in entries:
        param.description = descriptions[param.name]
        if param.name == "LINEAGE":
            param.values = Values(votable, param)
            param.values.options.extend([("backward", "backward"), ("none", "none")])
        group.entries.append(param)
    return resource


def _error_document(message: str, status: int = 400) -> Response:
    votable = VOTableFile()
    resource = Resource(type="results")
    votable.resources.append(resource)
    query_status = Info(name="QUERY_STATUS", value="ERROR")
    query_status.content = message  # the constructor drops a content= keyword
    resource.infos.append(query_status)
    resource.infos.append(Info(name="standardID", value=LINKS_STANDARD))
    out = io.BytesIO()
    votable.to_xml(out)
    return Response(out.getvalue(), status_code=status, media_type="application/x-votable+xml")


routes = [Route("/datalink/links", links, methods=["GET", "POST"])]
