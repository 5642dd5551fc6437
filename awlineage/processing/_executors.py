"""Executors run the tasks the scheduler submits: `SerialExecutor` in this process, one at a
time (for debugging); `SparkExecutor` as Spark tasks, a batch of ready targets per Spark job."""

from __future__ import annotations

import concurrent.futures
import importlib.util
from typing import Any, Protocol

from awlineage.processing._executor_names import EXECUTOR_NAMES
from awlineage.processing._task import (
    CANCELLED,
    COMMIT_AFTER,
    Settings,
    TaskResult,
    TaskSpec,
    make_targets,
)


def resolve_executor(name: str, *, spark_package: str = "pyspark") -> str:
    """The executor `name` stands for.

    ``"auto"`` is ``"spark"`` when pyspark is installed (the ``spark`` extra), else
    ``"serial"``; ``"spark"`` and ``"serial"`` are themselves.

    Whether pyspark is installed is read from the module path, without importing it.

    Parameters
    ----------
    name : str
        One of `EXECUTOR_NAMES`.
    spark_package : str, optional
        The package whose presence means Spark can be used.

    Returns
    -------
    str
        ``"spark"`` or ``"serial"``.

    Raises
    ------
    ValueError
        When `name` is not one of `EXECUTOR_NAMES`.

    Examples
    --------
    >>> resolve_executor("serial")
    'serial'
    >>> resolve_executor("auto", spark_package="no_such_package_here")
    'serial'
    """
    if name not in EXECUTOR_NAMES:
        raise ValueError(f"unknown executor {name!r}: use {', '.join(map(repr, EXECUTOR_NAMES))}")
    if name != "auto":
        return name
    return "spark" if importlib.util.find_spec(spark_package) is not None else "serial"


class Executor(Protocol):
    """Runs the tasks of a batch per call of `submit_batch`; `capacity` targets may be
    submitted and not finished at once; `cores` of them run at the same time.

    The serial, local-Spark and cluster executors implement it alike. While `ready` is
    False (Spark starting) the scheduler makes targets with a local executor instead;
    `cancel` is called when a target failed and the make stops. (An executor written
    before `ready` and `cancel` were part of the interface counts as ready and is not
    cancelled.)"""

    name: str

    # read-only: the Spark executor learns them from the cluster
    @property
    def capacity(self) -> int: ...
    @property
    def cores(self) -> int: ...

    @property
    def ready(self) -> bool:
        """Whether submitted targets start at once (without waiting for the executor to
        start)."""
        ...

    def submit_batch(self, specs: list[TaskSpec], settings: Settings
                     ) -> list[concurrent.futures.Future]:
        """Start making the targets of `specs`; a future per target gives its `TaskResult`."""

    def cancel(self) -> None:
        """Stop the targets submitted and not started: their futures give ``cancelled``."""

    def close(self) -> None:
        """Release what the executor started."""


MAX_BATCH = 64
"""The most targets a `SerialExecutor` makes before it commits them."""


class SerialExecutor:
    """Makes targets one after the other in this process, in the processor's session (its
    database and data server).

    The scheduler hands it up to `capacity` ready targets at once; it makes them in order
    and commits the made ones together (`make_targets`), so a cheap target does not pay a
    transaction of its own. Each result is handed back once its target is committed. The
    capacity follows how long targets take: about `COMMIT_AFTER` seconds of them (at most
    `MAX_BATCH`, at least one), so that the targets claimed and not yet made, which other
    processors wait for, are never much work.

    Parameters
    ----------
    session
        The `awlineage.storage.Session` every make() runs in.
    keep_going
        When False, the targets of a batch after a failed one are not started (they come
        back ``CANCELLED``), as the scheduler starts nothing after a failure.
    """

    cores = 1
    ready = True
    name = "serial"

    def __init__(self, session: Any, keep_going: bool = False) -> None:
        self.session = session
        self.keep_going = keep_going
        self._seconds = 0.0
        self._made = 0

    @property
    def capacity(self) -> int:
        """How many targets the next batch may hold: one until a target was made, then
        about `COMMIT_AFTER` seconds of them."""
        if not self._made:
            return 1
        mean = self._seconds / self._made
        return max(1, min(MAX_BATCH, int(COMMIT_AFTER / max(mean, 1e-6))))

    def submit(self, spec: TaskSpec, settings: Settings) -> concurrent.futures.Future:
        """Make the target now and return a finished future."""
        return self.submit_batch([spec], settings)[0]

    def submit_batch(self, specs: list[TaskSpec], settings: Settings
                     ) -> list[concurrent.futures.Future]:
        """Make the targets now, in order, commit them, and return finished futures."""
        futures = []
        for result in make_targets(specs, self.session, keep_going=self.keep_going):
            if result.status is not CANCELLED:
                self._seconds += result.seconds
                self._made += 1
            future: concurrent.futures.Future[TaskResult] = concurrent.futures.Future()
            future.set_result(result)
            futures.append(future)
        return futures

    def cancel(self) -> None:
        """Nothing to cancel: every target submitted is made already."""

    def close(self) -> None:
        """Nothing to release."""
