"""One target made in isolation: what the driver sends (a `TaskSpec`: plain data, no
connections) and what comes back (a `TaskResult`). The same function runs in a Spark task and,
in the driver's own process, for the serial executor."""

from __future__ import annotations

import importlib
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from awlineage.database import Database
from awlineage.errors import DuplicateObjectError
from awlineage.persistence import DBObject, DBObjectMeta, Kind, qualified_name
from awlineage.processing._outcomes import TargetOutcome
from awlineage.trace import runs_finished

MADE, REUSED, FAILED = TargetOutcome.MADE, TargetOutcome.REUSED, TargetOutcome.FAILED
CANCELLED = TargetOutcome.CANCELLED
"""A task the executor cancelled before it ended (after another target failed)."""


@dataclass(frozen=True)
class Settings:
    """Where a task finds the database and the data server (from the driver's configuration)."""

    database_url: str
    database_schema: str | None
    data_url: str
    python_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskSpec:
    """A target to make: its class, its object_id (chosen by the driver, so a retried task
    makes the same object), its attribute values, and the ids of what it links."""

    class_name: str
    module: str
    object_id: int
    values: dict[str, Any]
    links: dict[str, int | None]
    link_lists: dict[str, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskResult:
    """How a task ended: `TargetOutcome` ``MADE``, ``REUSED`` (the object was there already:
    a retried or speculative task), ``FAILED`` or ``CANCELLED``, with timings and the process
    that ran it."""

    object_id: int
    status: TargetOutcome
    seconds: float
    pid: int
    error: str | None = None
    traceback: str | None = None
    warnings: int = 0
    """Warnings raised during the makes of the task, recorded on their runs."""
    warned_run: int | None = None
    """object_id of the first of those runs that recorded a warning."""


def spec_for(obj: DBObject, link_ids: dict[str, Any]) -> TaskSpec:
    """The spec of an uncommitted target: its descriptor values and, for links, the ids in
    `link_ids` (attribute -> id or list of ids)."""
    values = {}
    for name, prop in type(obj)._properties.items():
        if prop.builtin or prop.kind.is_link or prop.kind is Kind.LINK_LIST:
            continue
        if name in obj.__dict__:
            values[name] = obj.__dict__[name]
    links = {k: v for k, v in link_ids.items() if not isinstance(v, list)}
    lists = {k: v for k, v in link_ids.items() if isinstance(v, list)}
    cls = type(obj)
    return TaskSpec(qualified_name(cls), cls.__module__, obj.object_id, values, links, lists)


def _class(spec: TaskSpec) -> type:
    cls = DBObjectMeta.registry.get(spec.class_name)
    if cls is None:
        importlib.import_module(spec.module)
        cls = DBObjectMeta.registry[spec.class_name]
    return cls


def make_target(spec: TaskSpec, session: Any) -> TaskResult:
    """Build the target of `spec` in this process, make and commit it, all in `session`.

    The make()'s queries, default parameters and files use the session's database and data
    server, whatever this process has connected to.

    Parameters
    ----------
    spec : TaskSpec
        The target to make.
    session : Any
        An `awlineage.storage.Session`, or a `Database` to work on with the current data server.

    Returns
    -------
    TaskResult
        Made, reused (an equal target was stored first) or failed, with the time taken and,
        for a failure, the error and its traceback (a failure is returned, not raised).
    """
    began = time.perf_counter()
    pid = os.getpid()
    if isinstance(session, Database):
        from awlineage.storage import current_session

        session = current_session(session)
    with runs_finished() as runs:
        try:
            with session:
                _make_in_session(spec, session.database)
            status, error, trace = MADE, None, None
        except (_AlreadyMade, DuplicateObjectError):
            status, error, trace = REUSED, None, None
        except Exception as exc:  # reported to the driver; the failed run is in the database
            status, error, trace = FAILED, f"{type(exc).__name__}: {exc}", traceback.format_exc()
    warned = [run for run in runs if run.warnings_count]
    return TaskResult(spec.object_id, status, time.perf_counter() - began, pid, error, trace,
                      sum(run.warnings_count for run in warned),
                      warned[0].object_id if warned else None)


class _AlreadyMade(Exception):
    """The target's object is stored already (a retried or speculative task)."""


def _make_in_session(spec: TaskSpec, db: Any) -> None:
    cls = _class(spec)
    registry = db.framework["awl_object"]
    with db.engine.connect() as conn:
        already = conn.execute(registry.select().where(
            registry.c.object_id == spec.object_id)).first()
    if already is not None:
        raise _AlreadyMade
    wanted = [i for i in spec.links.values() if i is not None]
    wanted += [i for ids in spec.link_lists.values() for i in ids]
    loaded = db.get_many(wanted) if wanted else {}
    values = dict(spec.values)
    values.update({k: None if i is None else loaded[i] for k, i in spec.links.items()})
    values.update({k: [loaded[i] for i in ids] for k, ids in spec.link_lists.items()})
    target = cls(object_id=spec.object_id, **values)
    target.make()
    db.commit([target])


_task_sessions: dict[tuple[str, str | None, str], Any] = {}


def _worker_session(settings: Settings) -> Any:
    """This worker's session on the database and data server named by `settings` (opened
    once per process for each database and data server), with the directories of
    `settings.python_path` on the module path."""
    import sys

    for entry in settings.python_path:
        if entry not in sys.path:
            sys.path.append(entry)
    key = (settings.database_url, settings.database_schema, settings.data_url)
    session = _task_sessions.get(key)
    if session is None:
        from awlineage.storage import Session

        session = Session(settings.database_url, settings.data_url,
                          schema=settings.database_schema)
        _task_sessions[key] = session
    return session


def prepare_worker(settings: Settings, modules: tuple[str, ...] = ()) -> None:
    """Open this worker's session for `settings` and import `modules` (those of the
    classes to make), before any target asks for them."""
    session = _worker_session(settings)
    for module in modules:
        importlib.import_module(module)
    with session.database.engine.connect():  # the engine's first connection
        pass
    session.data_server  # noqa: B018  (opened on first use: now)


def run_task(spec: TaskSpec, settings: Settings) -> TaskResult:
    """Make one target in a worker process, in this worker's session.

    The session is on the database and data server named by `settings`; the worker's own
    defaults are left alone.

    Parameters
    ----------
    spec : TaskSpec
        The target to make.
    settings : Settings
        The URLs of the database and the data server.

    Returns
    -------
    TaskResult
        As `make_target` returns it.
    """
    return make_target(spec, _worker_session(settings))
