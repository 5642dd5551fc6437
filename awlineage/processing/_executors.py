"""Executors run the tasks the scheduler submits: `SerialExecutor` in this process, one at a
time (for debugging); `SparkExecutor` as Spark tasks, a batch of ready targets per Spark job."""

from __future__ import annotations

import concurrent.futures
import importlib.util
from typing import Any, Protocol

from awlineage.processing._executor_names import EXECUTOR_NAMES
from awlineage.processing._task import Settings, TaskResult, TaskSpec, make_target


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


class SerialExecutor:
    """Makes targets one after the other in this process, in the processor's session (its
    database and data server).

    Parameters
    ----------
    session
        The `awlineage.storage.Session` every make() runs in.
    """

    capacity = 1
    cores = 1
    ready = True
    name = "serial"

    def __init__(self, session: Any) -> None:
        self.session = session

    def submit(self, spec: TaskSpec, settings: Settings) -> concurrent.futures.Future:
        """Make the target now and return a finished future."""
        future: concurrent.futures.Future[TaskResult] = concurrent.futures.Future()
        future.set_result(make_target(spec, self.session))
        return future

    def submit_batch(self, specs: list[TaskSpec], settings: Settings
                     ) -> list[concurrent.futures.Future]:
        """Make the targets now, in order, and return finished futures."""
        return [self.submit(spec, settings) for spec in specs]

    def cancel(self) -> None:
        """Nothing to cancel: every target submitted is made already."""

    def close(self) -> None:
        """Nothing to release."""
