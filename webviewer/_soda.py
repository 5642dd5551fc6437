"""SODA 1.0 ``{sync}`` at ``/soda/sync`` (GET or POST): cutouts of one object as a
multi-extension FITS file.

Parameters: ``ID`` (an object id), one of ``POS`` (``CIRCLE ra dec r``, ``RANGE lon1 lon2
lat1 lat2``, ``POLYGON ra1 dec1 ...``), ``CIRCLE``, ``POLYGON`` (degrees, ICRS) or ``PIXEL``
(``x0 x1 y0 y1``: 1-based, inclusive FITS pixels of the image, or of a source's coadd),
``LINEAGE`` (``backward``: every ancestor image too, placed by region lineage, the default for
a source; ``none``: the image, or a source's coadd, alone, the default for an image),
``TIME`` (MJD interval: keeps the images observed within it; see `webviewer._soda_axes`,
which refuses ``BAND`` and ``POL`` naming them), ``HDU`` (the extension of an image ID to
start from; default 0; refused for an ID that is not an image, such as a source),
``RESPONSEFORMAT`` (FITS) and DALI's ``RUNID`` (logged). Any other parameter is a
``UsageError`` naming it. Errors are text: ``UsageError: ...``
(400; 404 for an unknown ID), ``MultiValuedParamNotSupported: ...`` (400) or ``Error:
...`` (500); a region that covers no pixel, or a TIME no image was observed in, is 204 with
no body.
Every parameter is taken once; before that, more than ``Limits.request_ids`` IDs, a POST
body over ``Limits.request_body_bytes`` or a value over ``Limits.parameter_chars`` is a
``UsageError``, answered before any object is looked up.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from awlineage import get
from awlineage.cutouts import (
    CutoutLimits,
    CutoutUsageError,
    NoOverlapError,
    Shape,
    cutouts,
    parse_circle,
    parse_pixel,
    parse_polygon,
    parse_pos,
)
from awlineage.errors import ObjectNotFoundError
from webviewer._dali import DaliUsageError, dali_parameters
from webviewer._errors import BadRequest
from webviewer._limits import Limits
from webviewer._params import parse_object_id
from webviewer._soda_axes import check_axes, select_time
from webviewer._viewer import Viewer, viewer_of

log = logging.getLogger("webviewer")

REGION_PARAMETERS: dict[str, Callable[[str], Any]] = {
    "POS": parse_pos, "CIRCLE": parse_circle, "POLYGON": parse_polygon, "PIXEL": parse_pixel}
"""The region parameters, of which a request may give one."""
FITS_TYPES = ("", "fits", "application/fits", "image/fits")
"""RESPONSEFORMAT values answered: the only format is FITS."""
PARAMETERS = ("ID", *REGION_PARAMETERS, "LINEAGE", "TIME", "BAND", "POL", "HDU",
              "RESPONSEFORMAT", "RUNID")
"""Every parameter the service takes (BAND and POL to refuse them by name); any other is a
UsageError naming it: DALI 1.1 and SODA 1.0 leave unknown parameters to the service, and one
passed over (a misspelt CIRCLE) would answer a different question than the one asked."""
LINEAGE_VALUES: dict[str, bool | None] = {"": None, "backward": True, "none": False}
"""LINEAGE: backward cuts every ancestor image too, none the image (a source's coadd) alone;
without it, a source is cut backward and an image alone."""
RUNID_CHARS = 64
"""The longest RUNID (DALI 1.1 section 3.4.6)."""


class _MultiValued(Exception):
    """A parameter was given more than once."""


async def soda_sync(request: Request) -> Response:
    """``/soda/sync``: the cutouts asked for, as ``application/fits``."""
    viewer = viewer_of(request)
    try:
        params = await _parameters(request, viewer.limits)
        return await run_in_threadpool(_answer, params, viewer)
    except _MultiValued as exc:
        return _text(400, f"MultiValuedParamNotSupported: {exc}")
    except (CutoutUsageError, BadRequest, DaliUsageError) as exc:
        return _text(400, f"UsageError: {getattr(exc, 'message', None) or exc}")
    except ObjectNotFoundError as exc:
        return _text(404, f"UsageError: {exc}")
    except NoOverlapError:
        return Response(status_code=204)
    except Exception as exc:  # every error gets an answer, none shows internals
        log.exception("unexpected error on %s", request.url.path)
        return _text(500, f"Error: internal error ({type(exc).__name__}); see the server's "
                          "log")


async def _parameters(request: Request, limits: Limits) -> dict[str, str]:
    """The request's parameters, names upper-cased (DALI names are case-insensitive), each
    given once; the count of IDs, the body and every value within `limits`."""
    params: dict[str, str] = {}
    for name, value in await dali_parameters(request, limits):
        key = name.upper()
        if key in params:
            raise _MultiValued(f"parameter {key} was given more than once; this service "
                               "takes one value of each")
        if len(value) > limits.parameter_chars:
            raise CutoutUsageError(f"parameter {key} is {len(value)} characters long; the "
                                   f"limit is {limits.parameter_chars}")
        params[key] = value
    return params


def _answer(params: dict[str, str], viewer: Viewer) -> Response:
    unknown = [name for name in params if name not in PARAMETERS]
    if unknown:
        named = ", ".join(name[:40] for name in unknown[:5])
        raise CutoutUsageError(f"parameter{'s' if len(unknown) > 1 else ''} {named} "
                               f"{'are' if len(unknown) > 1 else 'is'} not taken here: this "
                               f"service takes {', '.join(PARAMETERS)}")
    runid = params.get("RUNID", "")
    if len(runid) > RUNID_CHARS:
        raise CutoutUsageError(f"RUNID is {len(runid)} characters long; DALI allows "
                               f"{RUNID_CHARS}")
    if runid:
        log.info("SODA request RUNID=%s", runid)  # DALI: RUNID goes into the service's log
    if "ID" not in params or not params["ID"].strip():
        raise CutoutUsageError("parameter ID is missing: give the object id to cut out")
    object_id = parse_object_id(params["ID"], "ID")
    fmt = params.get("RESPONSEFORMAT", "").split(";")[0].strip().lower()
    if fmt not in FITS_TYPES:
        raise CutoutUsageError(f"RESPONSEFORMAT {params['RESPONSEFORMAT']!r} is not offered: "
                               "the only format is application/fits")
    lineage = params.get("LINEAGE", "").strip().lower()
    if lineage not in LINEAGE_VALUES:
        raise CutoutUsageError(f"LINEAGE must be backward or none, not {params['LINEAGE']!r}")
    shape = _shape(params)
    hdu = _hdu(params.get("HDU", "").strip())
    time = check_axes(params)
    limits = viewer.limits
    cutout_limits = CutoutLimits(images=limits.cutout_images, pixels=limits.cutout_pixels,
                                 bytes=limits.cutout_bytes)
    with viewer.session.activate():
        obj = get(object_id)
        hdul = cutouts(obj, shape, lineage=LINEAGE_VALUES[lineage], limits=cutout_limits,
                       cache=viewer.cutout_cache, hdu=hdu)
    if time is not None:
        hdul = select_time(hdul, time)
    body = io.BytesIO()
    hdul.writeto(body)
    return Response(body.getvalue(), media_type="application/fits", headers={
        "Content-Disposition": f'attachment; filename="cutout-{object_id}.fits"'})


def _hdu(text: str) -> int | None:
    if text == "":
        return None
    if not text.isdigit() or not text.isascii() or len(text) > 4:
        raise CutoutUsageError(f"HDU must be an extension number from 0 to 9999, not "
                               f"{text[:40]!r}")
    return int(text)


def _shape(params: dict[str, str]) -> Shape | None:
    given = [name for name in REGION_PARAMETERS if params.get(name, "").strip()]
    if len(given) > 1:
        raise CutoutUsageError(f"give one region, not {' and '.join(given)}")
    if not given:
        return None
    return REGION_PARAMETERS[given[0]](params[given[0]])


def _text(status: int, message: str) -> PlainTextResponse:
    return PlainTextResponse(message + "\n", status_code=status)


routes = [Route("/soda/sync", soda_sync, methods=["GET", "POST"])]
