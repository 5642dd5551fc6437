"""Export of an object's ancestry as OpenLineage run events (spec 2-0-2): the job is a class's
make(), the run a process run, the datasets the objects it read and made."""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from awlineage.database import Database, current_database
from awlineage.lineage._ancestry import ancestry
from awlineage.persistence import DBObject

SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
PARENT_FACET_URL = "https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json#/$defs/ParentRunFacet"
ERROR_FACET_URL = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
RUN_FACET_URL = "urn:awlineage:facets:ProcessRunFacet"
RETRACTION_FACET_URL = "urn:awlineage:facets:RetractionDatasetFacet"
JOB_NAMESPACE = "awlineage"


def producer() -> str:
    """The producer URI OpenLineage asks every event and facet to carry."""
    try:
        version = metadata.version("awlineage")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"urn:awlineage:{version}"


def run_uuid(object_id: int) -> str:
    """A stable UUID for a process run (OpenLineage run ids are UUIDs), from the run's own
    id alone: object ids are unique across sites, so a run has one runId at every site that
    holds it, whatever URL its database is reached by, and the runId tells nothing of that
    URL (a host, a user, a local path)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"urn:awlineage:run:{object_id}"))


@dataclass(frozen=True)
class _Namespaces:
    """The OpenLineage namespaces of an export's datasets: of the database's objects and of
    the data server's files."""

    objects: str
    files: str


def database_namespace(db: Database) -> str:
    """The OpenLineage namespace of `db`'s objects: its URL with the password masked, an
    SQLite file's path made absolute."""
    url = db.url
    path = url.database
    if url.get_backend_name() == "sqlite" and path and path != ":memory:" \
            and not path.startswith("file:") and not os.path.isabs(path):
        url = url.set(database=os.path.abspath(path))
    return url.render_as_string(hide_password=True)


def _namespaces(db: Database, data_url: str | None, namespace: str | None) -> _Namespaces:
    if namespace is not None:
        return _Namespaces(namespace, f"{namespace}:files")
    if data_url is None:
        from awlineage.storage import current_session

        data_url = current_session(db).data_url
    from awlineage.storage import shown_data_url

    return _Namespaces(database_namespace(db), shown_data_url(str(data_url)))


def _dataset(namespaces: _Namespaces, obj: DBObject,
             retracted: dict[int, list[Any]] | None = None) -> dict[str, Any]:
    filename = obj.__dict__.get("filename")
    if filename:
        found = {"namespace": namespaces.files, "name": filename}
    else:
        found = {"namespace": namespaces.objects,
                 "name": f"{type(obj).__name__}/{obj.object_id}"}
    records = (retracted or {}).get(obj.object_id)
    if records:
        found["facets"] = {"awlineage_retraction": _facet(
            RETRACTION_FACET_URL, retractions=[r.to_dict() for r in records])}
    return found


def _retractions(db: Database, runs: list[Any], targets: dict[int, Any]
                 ) -> dict[int, list[Any]]:
    """The retractions in force of every dataset the events name, in one query."""
    from awlineage.retraction import retractions_of

    ids = {o.object_id for run in runs for o in [*run.inputs, *run.outputs]}
    ids.update(i for i, t in targets.items() if t is not None)
    return retractions_of(ids, database=db) if ids else {}


def _facet(url: str, **fields: Any) -> dict[str, Any]:
    return {"_producer": producer(), "_schemaURL": url, **fields}


def openlineage_events(obj: DBObject, depth: int | None = None, *,
                       database: Database | None = None, data_url: str | None = None,
                       namespace: str | None = None) -> list[dict[str, Any]]:
    """OpenLineage events for every process run in the ancestry of `obj`, oldest first.

    Each run gives a START and a COMPLETE (or FAIL) event, as JSON-ready dicts.

    Parameters
    ----------
    obj : DBObject
        A committed object.
    depth : int or None, optional
        Links to follow at most; None for the whole ancestry.
    database : Database or None, optional
        The database to read; the current session's by default.
    data_url : str or None, optional
        The data server the objects' files are on, whose URL is the namespace of the file
        datasets (a local directory as an absolute ``file://`` URL, without credentials:
        `awlineage.storage.shown_data_url`); the current session's by default. Objects
        without a file are datasets of the database's namespace (its URL, password masked).
    namespace : str or None, optional
        A name to use instead of both URLs, which tell where the database and the files
        are (a public viewer gives its site's ``urn:awlineage:site:<id>``): objects are
        datasets of `namespace`, files of ``<namespace>:files``.

    Returns
    -------
    list of dict
        OpenLineage ``RunEvent`` objects: job ``<class>.make``, the run's inputs and outputs
        as datasets, and the run's record (code version, parameters, host) as a facet. A
        dataset retracted now carries its retractions in force in an ``awlineage_retraction``
        facet.

    Raises
    ------
    ObjectNotFoundError
        When `obj` has not been committed.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocOpenLineageRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocOpenLineageReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocOpenLineageRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocOpenLineageRaw(level=130.0)
    >>> raw.commit()
    >>> reduced = DocOpenLineageReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> events = openlineage_events(reduced)
    >>> [(event["eventType"], event["job"]["name"]) for event in events]
    [('START', 'DocOpenLineageReduced.make'), ('COMPLETE', 'DocOpenLineageReduced.make')]
    >>> events[0]["inputs"][0]["name"] == f"DocOpenLineageRaw/{raw.object_id}"
    True
    """
    from awlineage.trace import ProcessRun

    db = database or current_database()
    graph = ancestry(db, obj, depth)
    runs = sorted((o for o in graph.objects.values() if isinstance(o, ProcessRun)),
                  key=lambda r: (r.started, r.object_id))
    targets = {r.target_id: graph.objects.get(r.target_id) for r in runs}
    retracted = _retractions(db, runs, targets)
    names = _namespaces(db, data_url, namespace)
    events: list[dict[str, Any]] = []
    for run in runs:
        job = {"namespace": JOB_NAMESPACE, "name": f"{run.target_class}.make"}
        facets: dict[str, Any] = {"awlineage_run": _facet(
            RUN_FACET_URL, objectId=run.object_id, targetId=run.target_id,
            codeVersion=run.code_version, parameters=run.parameter_values(), host=run.host,
            user=run.user, pid=run.pid, python=run.python,
            packages=json.loads(run.packages or "{}"))}
        if run.parent_run_id is not None:
            parent = graph.objects.get(run.parent_run_id)
            parent_class = parent.target_class if isinstance(parent, ProcessRun) else "unknown"
            facets["parent"] = _facet(
                PARENT_FACET_URL, run={"runId": run_uuid(run.parent_run_id)},
                job={"namespace": JOB_NAMESPACE, "name": f"{parent_class}.make"})
        if not run.succeeded:
            facets["errorMessage"] = _facet(
                ERROR_FACET_URL, message=run.error_message or "", programmingLanguage="python",
                stackTrace=run.traceback or "")
        inputs = [_dataset(names, o, retracted) for o in run.inputs]
        made = [t for t in (targets.get(run.target_id),) if t is not None]
        outputs = [_dataset(names, o, retracted) for o in [*made, *run.outputs]]
        run_id = run_uuid(run.object_id)
        base = {"producer": producer(), "schemaURL": SCHEMA_URL, "job": job,
                "inputs": inputs, "outputs": outputs}
        events.append({**base, "eventType": "START", "eventTime": run.started.isoformat(),
                       "run": {"runId": run_id, "facets": facets}})
        events.append({**base, "eventType": "COMPLETE" if run.succeeded else "FAIL",
                       "eventTime": (run.ended or run.started).isoformat(),
                       "run": {"runId": run_id, "facets": facets}})
    return events
