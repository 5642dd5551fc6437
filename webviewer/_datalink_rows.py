"""The rows of an object's DataLink links table, each labelled with a term of the core DataLink
vocabulary (http://www.ivoa.net/rdf/datalink/core; DataLink 1.1 section 3.2.6).

For a data object: ``#this`` (its file, or its properties as JSON), ``#preview``,
``#progenitor`` (each object it links to), ``#derivation`` (each object that links to it),
``#documentation`` (the records about it: the process run that made it, its region lineage
tables), ``#coderived`` (the other outputs of its process run) and ``#cutout``. A record (a
class with ``__run_output__ = False``, such as a process run or a region lineage table) is
itself described by what it records: what went in is ``#progenitor``, what came out is
``#derivation`` (a run's outputs and the targets it made, a region table's output), and other
records are ``#documentation``. Each object is listed once per row kind, its attributes joined.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

from awlineage import (
    DataObject,
    DBObject,
    ProcessRun,
    RegionTable,
    get,
    get_dependencies,
    get_inverse_properties,
)
from awlineage.cutouts import anchor_of
from awlineage.errors import ObjectNotFoundError
from webviewer._errors import BadRequest
from webviewer._params import parse_object_id

DATALINK_TYPE = "application/x-votable+xml;content=datalink"
FITS_SUFFIXES = (".fits", ".fit", ".fits.gz", ".fz")
OUTPUT_ATTRIBUTES: dict[type[DBObject], tuple[str, ...]] = {
    ProcessRun: ("outputs",), RegionTable: ("output",)}
"""The link attributes of a record that name what the recorded step made: #derivation."""
CUTOUT_DESCRIPTION = (
    "cutouts through SODA: of this image (LINEAGE=backward adds every ancestor image region "
    "lineage places the region on), or of a source on every image that made its pixels "
    "(LINEAGE=backward, the default for a source; LINEAGE=none keeps the nearest image only)")
"""The description of the #cutout row, which says what SODA's LINEAGE does."""


@dataclass
class Link:
    """One row of the links table."""

    id: str
    semantics: str
    access_url: str = ""
    service_def: str = ""
    error_message: str = ""
    description: str = ""
    content_type: str = ""
    content_length: int | None = None


@dataclass
class _Related:
    """An object related to #this, with every attribute that relates them."""

    semantics: str
    obj: DBObject
    prefix: str = ""
    attributes: list[str] = field(default_factory=list)


def links_of(text: str, base: str, service_def: str) -> list[Link]:
    """The links of the object whose id is `text`: fault rows for an unknown or malformed id.

    Parameters
    ----------
    text : str
        The ``ID`` value as given.
    base : str
        The service's base URL, without a trailing slash.
    service_def : str
        The XML ID of the SODA service descriptor the ``#cutout`` row names.

    Returns
    -------
    list of Link
        The rows, ``#this`` first.
    """
    try:
        object_id = parse_object_id(text, "ID")
        obj = get(object_id)
    except BadRequest as exc:
        return [Link(text, "#this", error_message=f"UsageFault: {exc.message}")]
    except ObjectNotFoundError:
        return [Link(text, "#this", error_message=f"NotFoundFault: no stored object has "
                                                  f"object_id {text}")]
    rows = _this(text, obj, base)
    dependencies = get_dependencies(obj)
    run = dependencies.pop("process_run", None)
    related: dict[tuple[str, int], _Related] = {}
    outputs = next((names for cls, names in OUTPUT_ATTRIBUTES.items()
                    if isinstance(obj, cls)), ())
    for attribute, value in dependencies.items():
        for target in value if isinstance(value, list) else [value]:
            if isinstance(target, DBObject):
                semantics = ("#documentation" if _is_record(target) else
                             "#derivation" if attribute in outputs else "#progenitor")
                _relate(related, semantics, target, attribute)
    made_by: DBObject | None = run if isinstance(run, DBObject) else None
    for inverse in get_inverse_properties(obj):
        user = inverse.obj
        if user.object_id == obj.object_id:
            continue
        if isinstance(user, ProcessRun) and not _is_record(obj):
            if inverse.attribute.endswith(".outputs") and made_by is None:
                made_by = user  # an output of a run that is not its target
            continue  # the runs that read it: their targets are its derivations
        if _is_record(user):
            _relate(related, "#documentation", user, inverse.attribute, "records it as ")
        else:
            verb = "made by it" if isinstance(obj, ProcessRun) else "uses it"
            _relate(related, "#derivation", user, inverse.attribute, f"{verb} as ")
    rows.extend(_links_row(text, r, base) for r in related.values())
    if made_by is not None:
        what = "it was recorded in" if _is_record(obj) else "that made it"
        rows.append(Link(text, "#documentation", access_url=f"{base}/run/{made_by.object_id}",
                         description=f"the process run {what} ({made_by.object_id})",
                         content_type="text/html"))
    if isinstance(run, ProcessRun) and not _is_record(obj):
        listed = {key[1] for key in related} | {obj.object_id}
        for other in run.outputs or []:  # those made from it are its derivations already
            if isinstance(other, DBObject) and other.object_id not in listed:
                listed.add(other.object_id)
                rows.append(_links_row(text, _Related("#coderived", other, "made with it"),
                                       base))
    if _cuttable(obj):
        rows.append(Link(text, "#cutout", service_def=service_def,
                         description=CUTOUT_DESCRIPTION, content_type="application/fits"))
    return rows


def _is_record(obj: DBObject) -> bool:
    """Whether `obj` is a record about other objects rather than a data product."""
    return not getattr(type(obj), "__run_output__", True)


def _relate(related: dict[tuple[str, int], _Related], semantics: str, target: DBObject,
            attribute: str, prefix: str = "") -> None:
    entry = related.setdefault((semantics, target.object_id),
                               _Related(semantics, target, prefix))
    if attribute not in entry.attributes:
        entry.attributes.append(attribute)


def _this(text: str, obj: DBObject, base: str) -> list[Link]:
    name = f"{type(obj).__name__} {obj.object_id}"
    if isinstance(obj, DataObject) and obj.filename:
        is_fits = str(obj.filename).lower().endswith(FITS_SUFFIXES)
        rows = [Link(text, "#this", access_url=f"{base}/obj/{obj.object_id}/file",
                     description=f"the file of {name}: {obj.filename}",
                     content_type="application/fits" if is_fits else
                     "application/octet-stream",
                     content_length=getattr(obj, "file_size", None))]
        if is_fits:
            rows.append(Link(text, "#preview",
                             access_url=f"{base}/obj/{obj.object_id}/preview.png",
                             description=f"a preview of {name}", content_type="image/png"))
        return rows
    return [Link(text, "#this", access_url=f"{base}/obj/{obj.object_id}?format=json",
                 description=f"the properties of {name}", content_type="application/json")]


def _links_row(text: str, related: _Related, base: str) -> Link:
    target = related.obj
    return Link(text, related.semantics,
                access_url=f"{base}/datalink/links?ID={quote(str(target.object_id))}",
                description=f"{related.prefix}{', '.join(related.attributes)}: "
                            f"{type(target).__name__} {target.object_id}",
                content_type=DATALINK_TYPE)


def _cuttable(obj: DBObject) -> bool:
    """Whether SODA can cut the object: a FITS image, or an object anchored on cells."""
    if anchor_of(obj) is not None:
        return True
    return isinstance(obj, DataObject) and str(obj.filename or "").lower().endswith(
        FITS_SUFFIXES)
