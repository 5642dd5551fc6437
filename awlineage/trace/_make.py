"""The make() wrapper: every call of a process target's make() writes a `ProcessRun`.

On success the run is linked from the target (``process_run``) and commits with it; on failure
the run alone is committed, marked failed with the exception, and the exception reaches the
caller unchanged. Warnings raised during the make are recorded on the run, not printed.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import json
import os
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from awlineage.errors import AwlError, ImmutableObjectError
from awlineage.persistence import DBObject, current_store
from awlineage.trace._codeversion import covered_code
from awlineage.trace._context import current_recorder, unrecorded
from awlineage.trace._environment import current_environment
from awlineage.trace._failed_files import remove_files_of_failed_make
from awlineage.trace._process import Process, default_parameters, parameter_values
from awlineage.trace._recorder import RunRecorder, start_observing, stop_observing
from awlineage.trace._run import FAILED, SUCCEEDED, ProcessRun
from awlineage.trace._warnings import start_capturing, stop_capturing


def traced_make(make: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a make() so that each call records a process run.

    Parameters
    ----------
    make : Callable
        A process target's ``make`` method; one wrapped already is returned as it is.

    Returns
    -------
    Callable
        The wrapped method.
    """
    if getattr(make, "__awl_traced__", False):
        return make

    @functools.wraps(make)
    def wrapper(self: Process, *args: Any, **kwargs: Any) -> Any:
        parent = current_recorder.get()
        if parent is not None and parent.target is self:
            # super().make() inside a make: part of the same run, one call deeper.
            return parent.calls.call(type(self).__name__, "make", make, (self, *args), kwargs)
        return _run_make(make, self, args, kwargs, parent)

    wrapper.__awl_traced__ = True  # type: ignore[attr-defined]
    return wrapper


def _run_make(make: Callable[..., Any], target: Process, args: tuple[Any, ...],
              kwargs: dict[str, Any], parent: RunRecorder | None) -> Any:
    cls = type(target)
    if target.is_committed:
        raise ImmutableObjectError(
            f"{cls.__name__} {target.object_id} is committed; make() builds a new object: "
            f"create a new {cls.__name__} with the same dependencies and make that"
        )
    with unrecorded():
        recorder = RunRecorder(target, _new_run(target, parent), parent)
        companions = list(target.__dict__.get("_companions", ()))
        previous_run = target.__dict__.get("process_run")
    start_observing()
    start_capturing()
    token = current_recorder.set(recorder)
    began = time.perf_counter()
    try:
        result = recorder.calls.call(cls.__name__, "make", make, (target, *args), kwargs)
    except BaseException as exc:
        current_recorder.reset(token)
        stop_capturing()
        stop_observing()
        with unrecorded():
            _record_failure(recorder, exc, time.perf_counter() - began, companions,
                            previous_run)
        raise
    current_recorder.reset(token)
    stop_capturing()
    stop_observing()
    with unrecorded():
        _record_success(recorder, time.perf_counter() - began)
    return result


_finished_runs: ContextVar[list[ProcessRun] | None] = ContextVar("awlineage_finished_runs",
                                                                default=None)


@contextlib.contextmanager
def runs_finished() -> Iterator[list[ProcessRun]]:
    """Collect the runs of the makes that end in this context, failed ones too.

    Returns
    -------
    Iterator of list of ProcessRun
        A list that fills as makes end (dependencies made inside a make come first).
    """
    runs: list[ProcessRun] = []
    token = _finished_runs.set(runs)
    try:
        yield runs
    finally:
        _finished_runs.reset(token)


def _new_run(target: Process, parent: RunRecorder | None) -> ProcessRun:
    """The run record of a make about to start; the target gets default parameters if it
    has none."""
    cls = type(target)
    if target.process_params is None:
        target.process_params = default_parameters(cls)
    environment = current_environment()
    return ProcessRun(
        target_id=target.object_id, target_class=cls.__name__,
        code_version=cls.class_code_version() or "",
        covered_code=json.dumps(covered_code(cls)),
        parameters=parameter_values(target.process_params),
        host=environment.host, user=environment.user, pid=os.getpid(),
        python=environment.python, packages=environment.packages,
        parent_run_id=None if parent is None else parent.run.object_id,
        started=datetime.datetime.now(datetime.UTC),
    )


def _record_success(recorder: RunRecorder, duration: float) -> None:
    run, target = recorder.run, recorder.target
    _finish(recorder, SUCCEEDED, duration)
    run.inputs = recorder.inputs(committed_only=False)
    run.outputs = recorder.outputs()
    run.process_params = target.process_params
    target.process_run = run
    if recorder.parent is not None:
        recorder.parent.children.append(run)
        recorder.parent.stored_by_children.extend(  # for the parent's clean-up, if it fails
            [target, *recorder.created_objects.values(), *recorder.stored_by_children])


def _finish(recorder: RunRecorder, status: str, duration: float) -> None:
    run = recorder.run
    run.status = status
    run.ended = datetime.datetime.now(datetime.UTC)
    run.duration = duration
    run.call_trace = recorder.calls.to_json()
    run.calls_recorded = len(recorder.calls.entries)
    run.calls_dropped = recorder.calls.dropped
    run.children = [c for c in recorder.children if status == SUCCEEDED or c.is_committed]
    run.warnings = recorder.warnings.entries()
    run.warnings_count = recorder.warnings.total
    finished = _finished_runs.get()
    if finished is not None:
        finished.append(run)


def _record_failure(recorder: RunRecorder, exc: BaseException, duration: float,
                    companions: list[DBObject], previous_run: Any) -> None:
    """Mark the run failed, undo what the make attached to its target, and commit the run
    alone (linking only objects that are stored already: what the make committed itself
    are its outputs); then remove the files it stored for objects never to be committed."""
    target = recorder.target
    state = target.__dict__
    if companions:
        state["_companions"] = companions
    else:
        state.pop("_companions", None)
    state["process_run"] = previous_run
    _finish(recorder, FAILED, duration)
    run = recorder.run
    run.error_type = f"{type(exc).__module__}.{type(exc).__qualname__}"
    run.error_message = str(exc)[:10_000]
    run.traceback = "".join(traceback.format_exception(exc))[:100_000]
    run.inputs = recorder.inputs(committed_only=True)
    run.outputs = recorder.committed_outputs()  # what the make committed itself stays
    params = target.process_params
    run.process_params = params if params is not None and params.is_committed else None
    if recorder.parent is not None:
        recorder.parent.children.append(run)
    try:
        current_store().commit([run])
    except AwlError as failure:
        warnings.warn(f"the failed run of {type(target).__name__} {target.object_id} could "
                      f"not be recorded: {failure}", RuntimeWarning, stacklevel=3)
    remove_files_of_failed_make([target, *recorder.created_objects.values(),
                                 *recorder.stored_by_children])
