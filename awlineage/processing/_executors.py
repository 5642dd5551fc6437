"""Executors run the tasks the scheduler submits: `SerialExecutor` in this process, one at a
time (for debugging); `SparkExecutor` as Spark tasks, as many at once as Spark has cores."""

from __future__ import annotations

import concurrent.futures
from typing import Any, Protocol

from awlineage.processing._task import Settings, TaskResult, TaskSpec, make_target


class Executor(Protocol):
    """Runs one task per call of `submit`; `capacity` of them at once."""

    capacity: int
    name: str

    def submit(self, spec: TaskSpec, settings: Settings) -> concurrent.futures.Future:
        """Start making the target of `spec`; the future gives its `TaskResult`."""

    def close(self) -> None:
        """Release what the executor started."""


class SerialExecutor:
    """Makes targets one after the other in this process, in the processor's session (its
    database and data server).

    Parameters
    ----------
    session
        The `awlineage.storage.Session` every make() runs in.
    """

    capacity = 1
    name = "serial"

    def __init__(self, session: Any) -> None:
        self.session = session

    def submit(self, spec: TaskSpec, settings: Settings) -> concurrent.futures.Future:
        """Make the target now and return a finished future."""
        future: concurrent.futures.Future[TaskResult] = concurrent.futures.Future()
        future.set_result(make_target(spec, self.session))
        return future

    def close(self) -> None:
        """Nothing to release."""
