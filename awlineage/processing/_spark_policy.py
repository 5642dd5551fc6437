"""`SparkWhenItPays`: the Spark executor of a local-mode make, started only once the work
left is worth its start.

Spark's start costs several seconds of the machine's cores (the JVM, a Python worker per core
importing the classes), so on a small plan it makes the job slower than making every target
here. Until Spark is started, the scheduler's local executor makes ready targets in this
process (`awlineage.processing._scheduler`); this executor times them (and knows how long the
targets of each class took in earlier makes, from their runs in the database) and estimates the
work left: from `SPARK_PAYS_SECONDS` of it, it starts Spark in the background, and the targets
go to Spark once it is up. The estimate does not wait for a target to end: while the first
target of a class never timed is being made, the CPU time it has taken so far stands for that
class's duration (a lower bound of it), so a plan of many long targets starts Spark a fraction
of a second into its first one instead of after it. The processor's report says which way it
went (`SparkWhenItPays.note`)."""

from __future__ import annotations

import collections
import concurrent.futures
import statistics
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from awlineage.processing._task import MADE, Settings, TaskSpec

SPARK_PAYS_SECONDS = 20.0
"""Estimated CPU seconds of work left from which Spark is started:
Spark's start in local mode takes about 5 s of wall time and 8-10 s of core time on a
2-core machine (measured with ``benchmarks/processor_spark.py``), so it pays back only from
a few times that much work."""
WATCH_SECONDS = 0.05
"""Seconds between two looks at the estimate while a target is being made here."""


class _TimedLocal:
    """The scheduler's local executor, telling `SparkWhenItPays` how much CPU time (of every
    thread of this process) each target took: the work Spark could spread over its cores,
    which wall time on a busy machine overstates."""

    name = "serial"
    capacity = 1
    cores = 1
    ready = True

    def __init__(self, local: Any, heard: Callable[[TaskSpec, Any, float], None],
                 making: Callable[[TaskSpec, float], None]) -> None:
        self._local = local
        self._heard = heard
        self._making = making

    def submit_batch(self, specs: list[TaskSpec], settings: Settings
                     ) -> list[concurrent.futures.Future]:
        """Make the targets here (the local executor), one at a time, reporting the CPU time
        each took."""
        futures = []
        for spec in specs:
            began = time.process_time()
            self._making(spec, began)
            future = self._local.submit_batch([spec], settings)[0]
            self._heard(spec, future.result(), time.process_time() - began)
            futures.append(future)
        return futures

    def cancel(self) -> None:
        """Nothing to cancel: every target is made before `submit_batch` returns."""

    def close(self) -> None:
        """Close the local executor."""
        self._local.close()


class SparkWhenItPays:
    """An executor that starts Spark (with `start`) only when the estimated work left is at
    least `threshold` seconds; until then it is not ``ready``, and the scheduler makes the
    ready targets with `local` (wrapped: use the ``local`` attribute).

    Parameters
    ----------
    start
        Starts the Spark executor in the background and returns it.
    classes
        The class name (qualified, as in `TaskSpec`) of every target to make.
    history
        Typical seconds per target of some classes, from earlier makes.
    local
        The executor that makes targets in this process (a `SerialExecutor`).
    threshold
        Seconds of estimated work from which Spark pays.
    """

    name = "spark"

    def __init__(self, start: Callable[[], Any], classes: Iterable[str],
                 history: dict[str, float], local: Any,
                 threshold: float = SPARK_PAYS_SECONDS) -> None:
        self._start = start
        self._left = collections.Counter(classes)
        self._total = sum(self._left.values())
        self._typical = dict(history)
        self._seen: dict[str, list[float]] = {}
        self.threshold = threshold
        self.local = _TimedLocal(local, self._heard, self._making)
        self.spark: Any = None
        """The Spark executor, once started."""
        self._lock = threading.RLock()
        self._in_flight: tuple[str, float] | None = None
        """Class name and CPU clock at the start of the target being made here."""
        self._watching = threading.Event()
        """Set once a watcher is running, and to stop it: `close`."""
        self._stopped = threading.Event()
        self._decide()

    def _making(self, spec: TaskSpec, began: float) -> None:
        """A target of `spec` starts here at CPU clock `began`: the estimate counts it as it
        runs, and a watcher looks at it every `WATCH_SECONDS` until Spark is started."""
        with self._lock:
            self._in_flight = (spec.class_name, began)
            if self.spark is not None or self._watching.is_set():
                return
            self._watching.set()
        threading.Thread(target=self._watch, name="awl-spark-pays", daemon=True).start()

    def _watch(self) -> None:
        while not self._stopped.wait(WATCH_SECONDS):
            with self._lock:
                self._decide()
                if self.spark is not None:
                    return

    def _heard(self, spec: TaskSpec, result: Any, seconds: float) -> None:
        with self._lock:
            self._in_flight = None
            self._left[spec.class_name] -= 1
            if result.status == MADE:
                self._seen.setdefault(spec.class_name, []).append(seconds)
                self._typical[spec.class_name] = statistics.median(self._seen[spec.class_name])

    def estimate(self) -> float | None:
        """CPU seconds of work left: each class's typical duration
        times its targets left (a class not timed yet counts as the median of those timed;
        while the first of a class is being made, as the CPU time it has taken so far);
        None while nothing is timed or being made."""
        typical = dict(self._typical)
        if self._in_flight is not None and self._in_flight[0] not in typical:
            typical[self._in_flight[0]] = time.process_time() - self._in_flight[1]
        if not typical:
            return None
        guess = statistics.median(typical.values())
        return sum(n * typical.get(name, guess) for name, n in self._left.items() if n > 0)

    def _decide(self) -> None:
        if self.spark is not None:
            return
        estimate = self.estimate()
        if estimate is not None and estimate >= self.threshold:
            self.spark = self._start()
            self._started_at = self._total - sum(n for n in self._left.values() if n > 0)
            self._started_while = self._in_flight is not None
            self._estimate = estimate

    @property
    def ready(self) -> bool:
        """Whether Spark is started and ready (deciding whether to start it first)."""
        with self._lock:
            self._decide()
        return self.spark is not None and getattr(self.spark, "ready", True)

    @property
    def started(self) -> bool:
        """Whether Spark was started."""
        return self.spark is not None

    @property
    def cores(self) -> int:
        """Spark's cores (waits for it to start)."""
        return self.spark.cores

    @property
    def capacity(self) -> int:
        """Spark's capacity (waits for it to start)."""
        return self.spark.capacity

    def submit_batch(self, specs: list[TaskSpec], settings: Settings
                     ) -> list[concurrent.futures.Future]:
        """Submit to Spark (only called once it is ready)."""
        return self.spark.submit_batch(specs, settings)

    def cancel(self) -> None:
        """Cancel Spark's jobs in flight, if it was started."""
        if self.spark is not None:
            self.spark.cancel()

    def close(self) -> None:
        """Stop watching the estimate; close Spark's executor, if it was started."""
        self._stopped.set()
        with self._lock:
            spark = self.spark
        if spark is not None:
            spark.close()

    def note(self) -> str:
        """One line saying where the targets were made and why."""
        total = f"{self._total} target{'s' if self._total != 1 else ''} to make"
        if self.spark is None:
            work = sum(self._seen_seconds())
            return (f"{total}: made here, Spark would not pay ({work:.1f} CPU s of work; "
                    f"it starts once {self.threshold:.0f} CPU s are left to make)")
        made = f"after {self._started_at} made here"
        if self._started_while:
            made = f"while making the {self._started_at + 1}{_ordinal(self._started_at + 1)} here"
        elif not self._started_at:
            made = "at once (from earlier makes' runs)"
        return (f"{total}: Spark started {made}, with about {self._estimate:.0f} CPU s of "
                f"work left (it starts from {self.threshold:.0f})")

    def _seen_seconds(self) -> list[float]:
        return [s for seconds in self._seen.values() for s in seconds]


def _ordinal(number: int) -> str:
    if number % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def typical_seconds(db: Any, classes: Iterable[type]) -> dict[str, float]:
    """The median wall time of the latest successful runs (up to 50) of each of `classes` in
    `db`'s run records, by qualified class name (classes never made are left out)."""
    import sqlalchemy as sa

    from awlineage.persistence import qualified_name
    from awlineage.trace import ProcessRun

    names = {cls.__name__: qualified_name(cls) for cls in classes}
    if not names:
        return {}
    try:
        table = db.tables_for(ProcessRun).table
    except Exception:  # no run table yet: nothing was ever made here
        return {}
    found: dict[str, float] = {}
    with db.engine.connect() as conn:
        for name in names:
            rows = conn.execute(sa.select(table.c.duration).where(
                table.c.target_class == name, table.c.duration.is_not(None),
                table.c.error_type.is_(None)).order_by(table.c.object_id.desc()).limit(50)
            ).scalars().all()
            if rows:
                found[names[name]] = statistics.median(rows)
    return found
