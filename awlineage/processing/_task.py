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

import sqlalchemy as sa

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
    return make_targets([spec], session)[0]


COMMIT_AFTER = 0.5
"""Seconds of made and uncommitted work after which `make_targets` commits what it holds."""
PARTITION_COMMIT_AFTER = 2.0
"""The same in a Spark partition (`run_tasks`): its results reach the driver only when the
partition ends, so committing sooner would report nothing sooner; it only bounds the work a
failed task's retry makes again (committed targets come back ``reused``). A commit of one
target cost 1.6 ms of CPU and some 5 ms of wall time on SQLite, 1% of a 0.5 s target."""


def make_targets(specs: list[TaskSpec], session: Any, *, keep_going: bool = True,
                 commit_after: float = COMMIT_AFTER) -> list[TaskResult]:
    """Make the independent targets of `specs` one after the other in this process, and
    commit the made ones together: one transaction for every `commit_after` seconds of
    work, not one per target.

    A target's result is returned only once it is committed, so nothing reports it made
    before it is durable; a crash loses the uncommitted ones whole (their make()s run again
    elsewhere), never half of one. When the shared commit is refused (another process
    stored one of the objects meanwhile), each target is committed on its own.

    Parameters
    ----------
    specs : list of TaskSpec
        Targets none of which depends on another.
    session : Any
        An `awlineage.storage.Session`, or a `Database` to work on with the current data server.
    keep_going : bool, optional
        When False, the targets after a failed one are not started: they end ``CANCELLED``.
    commit_after : float, optional
        Commit what is made once this many seconds have passed since the last commit.

    Returns
    -------
    list of TaskResult
        One per spec, in order, as `make_target` returns it.
    """
    pid = os.getpid()
    if isinstance(session, Database):
        from awlineage.storage import current_session

        session = current_session(session)
    db = session.database
    results: list[TaskResult | None] = [None] * len(specs)
    pending: list[_Made] = []
    with session:
        stored = _stored_ids(db, [spec.object_id for spec in specs])
        linked = _linked_objects(db, [spec for spec in specs if spec.object_id not in stored])
        since = time.perf_counter()
        for index, spec in enumerate(specs):
            if spec.object_id in stored:
                results[index] = TaskResult(spec.object_id, REUSED, 0.0, pid)
                continue
            made = _make_one(spec, db, pid, linked)
            if isinstance(made, TaskResult):
                results[index] = made
                if made.status == FAILED and not keep_going:
                    for later, rest in enumerate(specs[index + 1:], index + 1):
                        results[later] = TaskResult(rest.object_id, CANCELLED, 0.0, pid)
                    break
                continue
            made.index = index
            pending.append(made)
            if time.perf_counter() - since >= commit_after:
                _commit_made(db, pending, results, pid)
                pending, since = [], time.perf_counter()
        _commit_made(db, pending, results, pid)
    return [r for r in results if r is not None]


@dataclass
class _Made:
    """A target made and not committed yet, with what its result will say."""

    target: DBObject
    seconds: float
    warnings: int
    warned_run: int | None
    index: int = 0


def _stored_ids(db: Any, object_ids: list[int]) -> set[int]:
    """Those of `object_ids` stored already (a retried or speculative task's targets)."""
    registry = db.framework["awl_object"]
    found: set[int] = set()
    with db.engine.connect() as conn:
        for start in range(0, len(object_ids), _IDS_PER_QUERY):
            chunk = object_ids[start:start + _IDS_PER_QUERY]
            found.update(conn.execute(sa.select(registry.c.object_id)
                                      .where(registry.c.object_id.in_(chunk))).scalars())
    return found


_IDS_PER_QUERY = 500


def _link_ids(spec: TaskSpec) -> list[int]:
    """The ids of the objects the target of `spec` links."""
    wanted = [i for i in spec.links.values() if i is not None]
    return wanted + [i for ids in spec.link_lists.values() for i in ids]


def _linked_objects(db: Any, specs: list[TaskSpec]) -> dict[int, DBObject]:
    """The objects the targets of `specs` link, read together (a query per class, not one
    per target); empty when one of them cannot be read: each target then reads its own, and
    the one whose link is missing fails alone."""
    wanted = list(dict.fromkeys(i for spec in specs for i in _link_ids(spec)))
    if len(specs) < 2 or not wanted:
        return {}
    try:
        return db.get_many(wanted)
    except Exception:  # a link not stored: reported by the target that has it
        return {}


def _make_one(spec: TaskSpec, db: Any, pid: int,
              linked: dict[int, DBObject] | None = None) -> _Made | TaskResult:
    """Build and make the target of `spec` (its links from `linked` where there): the made,
    uncommitted target, or the result of a failure (the failed run is committed by the
    tracer)."""
    began = time.perf_counter()
    with runs_finished() as runs:
        try:
            target = _build(spec, db, linked or {})
            target.make()  # type: ignore[attr-defined]  # a Process
        except DuplicateObjectError:  # what it writes is stored already: a retried task
            return TaskResult(spec.object_id, REUSED, time.perf_counter() - began, pid)
        except Exception as exc:  # reported to the driver; the failed run is in the database
            warned = [run for run in runs if run.warnings_count]
            return TaskResult(spec.object_id, FAILED, time.perf_counter() - began, pid,
                              f"{type(exc).__name__}: {exc}", traceback.format_exc(),
                              sum(run.warnings_count for run in warned),
                              warned[0].object_id if warned else None)
    warned = [run for run in runs if run.warnings_count]
    return _Made(target, time.perf_counter() - began,
                 sum(run.warnings_count for run in warned),
                 warned[0].object_id if warned else None)


def _build(spec: TaskSpec, db: Any, linked: dict[int, DBObject]) -> DBObject:
    """The uncommitted target of `spec`, its links taken from `linked` or loaded from `db`."""
    cls = _class(spec)
    wanted = _link_ids(spec)
    missing = [i for i in wanted if i not in linked]
    loaded = {**linked, **db.get_many(missing)} if missing else linked
    values = dict(spec.values)
    values.update({k: None if i is None else loaded[i] for k, i in spec.links.items()})
    values.update({k: [loaded[i] for i in ids] for k, ids in spec.link_lists.items()})
    return cls(object_id=spec.object_id, **values)


def _commit_made(db: Any, pending: list[_Made], results: list[TaskResult | None],
                 pid: int) -> None:
    """Commit the targets of `pending` in one transaction (each alone when that is refused)
    and put their results in `results`."""
    if not pending:
        return
    began = time.perf_counter()
    try:
        db.commit([made.target for made in pending])
    except Exception:  # nothing was written: each is committed on its own
        for made in pending:
            results[made.index] = _commit_alone(db, made, pid)
        return
    share = (time.perf_counter() - began) / len(pending)
    for made in pending:
        results[made.index] = TaskResult(made.target.object_id, MADE, made.seconds + share,
                                         pid, None, None, made.warnings, made.warned_run)


def _commit_alone(db: Any, made: _Made, pid: int) -> TaskResult:
    began = time.perf_counter()
    object_id = made.target.object_id
    try:
        db.commit([made.target])
        status, error, trace = MADE, None, None
    except DuplicateObjectError:
        status, error, trace = REUSED, None, None
    except Exception as exc:  # reported to the driver, as a failed make()
        status, error, trace = FAILED, f"{type(exc).__name__}: {exc}", traceback.format_exc()
    return TaskResult(object_id, status, made.seconds + time.perf_counter() - began, pid,
                      error, trace, made.warnings, made.warned_run)


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


def run_tasks(specs: list[TaskSpec], settings: Settings) -> list[TaskResult]:
    """Make the independent targets of `specs` in a worker process, one after the other,
    committing them together (`make_targets`, every `PARTITION_COMMIT_AFTER` seconds of
    work), their links read in one go: a Spark partition's targets.

    Parameters
    ----------
    specs : list of TaskSpec
        Targets none of which depends on another.
    settings : Settings
        The URLs of the database and the data server.

    Returns
    -------
    list of TaskResult
        One per spec, in order.
    """
    return make_targets(specs, _worker_session(settings), commit_after=PARTITION_COMMIT_AFTER)
