"""Export of an object's ancestry as W3C PROV (PROV-JSON through the `prov` package): objects
are entities, process runs activities, users agents."""

from __future__ import annotations

import datetime
import json
from typing import Any

from prov.model import ProvDocument

from awlineage.database import Database, current_database
from awlineage.lineage._ancestry import ancestry
from awlineage.persistence import DBObject, Kind

NAMESPACE_PREFIX = "awl"
NAMESPACE_URI = "urn:awlineage:"
# Run attributes worth carrying into PROV (the call trace stays in awlineage).
_RUN_ATTRIBUTES = ("target_class", "target_id", "code_version", "parameters", "status", "host",
                   "pid", "python", "packages", "error_type", "error_message")


def _identifier(obj: DBObject) -> str:
    return f"{NAMESPACE_PREFIX}:{type(obj).__name__}/{obj.object_id}"


def _prov_value(value: Any) -> Any:
    if isinstance(value, bool | int | float | str | datetime.datetime):
        return value
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, list):
        return json.dumps([_prov_value(v) if not isinstance(v, datetime.datetime)
                           else v.isoformat() for v in value])
    return str(value)


def _entity_attributes(obj: DBObject) -> dict[str, Any]:
    attributes: dict[str, Any] = {f"{NAMESPACE_PREFIX}:class": type(obj).__name__}
    if obj.__dict__.get("version") is not None:
        attributes[f"{NAMESPACE_PREFIX}:version"] = obj.version
    for name, prop in type(obj)._properties.items():
        if prop.builtin or prop.kind.is_link or prop.kind is Kind.LINK_LIST:
            continue
        value = obj.__dict__.get(name)
        if value is not None:
            attributes[f"{NAMESPACE_PREFIX}:{name}"] = _prov_value(value)
    return attributes


def to_prov(obj: DBObject, depth: int | None = None, *,
            database: Database | None = None) -> ProvDocument:
    """The ancestry of `obj` as a PROV document.

    Runs become activities (``used`` their inputs and parameters, ``wasAssociatedWith`` the
    user, ``wasInformedBy`` the runs of dependencies they made); a target and a run's outputs
    ``wasGeneratedBy`` the run; other links become ``wasDerivedFrom`` with the attribute name.
    A retraction in force of an object of the ancestry is an activity of its own (its reason,
    and cells if any) that the object ``wasInvalidatedBy``, associated with who retracted it.

    Parameters
    ----------
    obj : DBObject
        A committed object.
    depth : int or None, optional
        Links to follow at most; None for all.
    database : Database or None, optional
        The database to read; the current session's by default.

    Returns
    -------
    prov.model.ProvDocument
        Entities, activities and agents with their relations, ready to serialise.

    Raises
    ------
    ObjectNotFoundError
        When `obj` has not been committed.
    """
    from awlineage.trace import ProcessRun

    db = database or current_database()
    graph = ancestry(db, obj, depth)
    document = ProvDocument()
    document.add_namespace(NAMESPACE_PREFIX, NAMESPACE_URI)
    for item in graph.objects.values():
        if isinstance(item, ProcessRun):
            attributes = {f"{NAMESPACE_PREFIX}:{name}": _prov_value(getattr(item, name))
                          for name in _RUN_ATTRIBUTES if getattr(item, name) is not None}
            activity = document.activity(_identifier(item), item.started, item.ended,
                                         attributes)
            agent = document.agent(f"{NAMESPACE_PREFIX}:user/{item.user or 'unknown'}")
            document.wasAssociatedWith(activity, agent)
        else:
            document.entity(_identifier(item), _entity_attributes(item))
    for edge in graph.edges:
        source, target = graph.objects[edge.source], graph.objects[edge.target]
        attribute = {f"{NAMESPACE_PREFIX}:attribute": edge.name}
        if isinstance(source, ProcessRun):
            if edge.name == "outputs":
                document.wasGeneratedBy(_identifier(target), _identifier(source))
            elif isinstance(target, ProcessRun):
                document.wasInformedBy(_identifier(source), _identifier(target))
            else:
                document.used(_identifier(source), _identifier(target),
                              other_attributes=attribute)
        elif isinstance(target, ProcessRun):
            document.wasGeneratedBy(_identifier(source), _identifier(target))
        else:
            document.wasDerivedFrom(_identifier(source), _identifier(target),
                                    other_attributes=attribute)
    _add_retractions(document, db, graph.objects)
    return document


def _add_retractions(document: ProvDocument, db: Database,
                     objects: dict[int, DBObject]) -> None:
    """Each retraction in force of one of `objects` (one query for all) as an activity that
    invalidated the object's entity."""
    from awlineage.retraction import retractions_of

    for object_id, records in retractions_of(list(objects), database=db).items():
        for record in records:
            attributes = {f"{NAMESPACE_PREFIX}:reason": record.reason,
                          f"{NAMESPACE_PREFIX}:host": record.host}
            if record.region is not None:
                attributes[f"{NAMESPACE_PREFIX}:cells"] = record.region.text()
                attributes[f"{NAMESPACE_PREFIX}:hdu"] = record.region.hdu
            activity = document.activity(_identifier(record), record.creation_date,
                                         record.creation_date, attributes)
            agent = document.agent(f"{NAMESPACE_PREFIX}:user/{record.user or 'unknown'}")
            document.wasAssociatedWith(activity, agent)
            document.wasInvalidatedBy(_identifier(objects[object_id]), activity,
                                      record.creation_date)


def prov_json(obj: DBObject, depth: int | None = None, *,
              database: Database | None = None) -> str:
    """The ancestry of `obj` as PROV-JSON text.

    Parameters
    ----------
    obj : DBObject
        A committed object: the newest entity of the document.
    depth : int or None, optional
        Links to follow at most; None for the whole ancestry.
    database : Database or None, optional
        The database to read; the current session's by default.

    Returns
    -------
    str
        A W3C PROV-JSON document: objects are entities, process runs activities (see
        `to_prov` for the relations).

    Raises
    ------
    ObjectNotFoundError
        When `obj` has not been committed.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocProvRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocProvReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocProvRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocProvRaw(level=130.0)
    >>> raw.commit()
    >>> reduced = DocProvReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> import json
    >>> document = json.loads(prov_json(reduced))
    >>> sorted(document)  # doctest: +NORMALIZE_WHITESPACE
    ['activity', 'agent', 'entity', 'prefix', 'used', 'wasAssociatedWith',
     'wasDerivedFrom', 'wasGeneratedBy']
    >>> sorted(entity["awl:class"] for entity in document["entity"].values())
    ['DocProvRaw', 'DocProvReduced', 'ProcessParameters']
    """
    # without a destination, serialize() returns the text
    return to_prov(obj, depth, database=database).serialize(  # type: ignore[return-value]
        format="json", indent=1)
