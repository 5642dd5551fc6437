"""The scheduler sequences the pieces that decide: targets are made in this process while
the executor starts and on the executor once it is ready; a target another processor holds
waits and goes once it is free; one another processor made since the plan was made is
reused (and what depends on it links that object), through the claims service."""

from __future__ import annotations

import concurrent.futures
import threading

from awlineage import TargetProcessor, select
from awlineage.processing._claims import TargetClaims
from awlineage.processing._executors import SerialExecutor
from awlineage.processing._outcomes import TargetOutcome
from awlineage.processing._plan import Plan, PlanNode
from awlineage.processing._scheduler import NoClaims, Scheduler
from awlineage.processing._task import TaskResult
from tests.processing.models import Calibrated, RawSci, Stack, utc

MADE, REUSED = TargetOutcome.MADE, TargetOutcome.REUSED
FAILED, SKIPPED = TargetOutcome.FAILED, TargetOutcome.SKIPPED


class CountingSerial(SerialExecutor):
    """The serial executor, counting the targets submitted to it."""

    made = 0

    def submit_batch(self, specs, settings):
        self.made += len(specs)
        return super().submit_batch(specs, settings)


class StartsAfter:
    """The serial executor behind an executor that is ready once `local` has made `count`
    targets (as Spark is ready after a while); records what was submitted to it."""

    name = "starts-after"
    capacity = 4
    cores = 2

    def __init__(self, serial: SerialExecutor, local: CountingSerial, count: int) -> None:
        self.serial, self.local, self.count = serial, local, count
        self.submitted: list[str] = []

    @property
    def ready(self) -> bool:
        return self.local.made >= self.count

    def submit_batch(self, specs, settings):
        assert self.ready, "nothing goes to the executor before it is ready"
        self.submitted += [spec.class_name for spec in specs]
        return self.serial.submit_batch(specs, settings)

    def cancel(self) -> None: ...

    def close(self) -> None: ...


class HeldOnce:
    """Another processor holds `node` when it is first asked for; every other node, and
    `node` the second time, is this processor's. Records the order of the claims."""

    def __init__(self, node: PlanNode) -> None:
        self.node = node
        self.asked: list[PlanNode] = []

    def claim(self, node: PlanNode) -> bool | int:
        self.asked.append(node)
        return not (node is self.node and self.asked.count(node) == 1)

    def release(self, node: PlanNode) -> None: ...


class HoldsBatchWithAFailure:
    """Makes a batch's targets serially; when one fails, it reports that failure at once and
    holds the results of the others until `cancel`, which reports them ``cancelled`` (as
    Spark does with tasks in flight). Held results not cancelled go out as they are after
    `GIVE_UP` seconds, so that a scheduler that never cancels fails the test, not hangs it."""

    GIVE_UP = 30.0
    name = "holds"
    capacity = 16
    cores = 8
    ready = True

    def __init__(self, serial: SerialExecutor) -> None:
        self.serial = serial
        self.held: list[concurrent.futures.Future] = []
        self.cancelled_ids: list[int] = []
        self.lock = threading.Lock()

    def submit_batch(self, specs, settings):
        results = [f.result() for f in self.serial.submit_batch(specs, settings)]
        futures = [concurrent.futures.Future() for _ in specs]
        failed = any(r.status == FAILED for r in results)
        for future, result in zip(futures, results, strict=True):
            if failed and result.status != FAILED:
                future.result_held = result  # type: ignore[attr-defined]
                self.held.append(future)
            else:
                future.set_result(result)
        if self.held:
            threading.Timer(self.GIVE_UP, self._give_up).start()
        return futures

    def cancel(self) -> None:
        with self.lock:
            held, self.held = self.held, []
        for future in held:
            result: TaskResult = future.result_held  # type: ignore[attr-defined]
            self.cancelled_ids.append(result.object_id)
            future.set_result(TaskResult(result.object_id, TargetOutcome.CANCELLED, 0.0, 0))

    def _give_up(self) -> None:
        with self.lock:
            held, self.held = self.held, []
        for future in held:
            future.set_result(future.result_held)  # type: ignore[attr-defined]

    def close(self) -> None: ...


def _planned(processor: TargetProcessor, cls: type) -> Plan:
    plan = processor.plan(cls)
    processor._commit_parameters(plan)
    return plan


def test_targets_are_made_locally_until_the_executor_is_ready_then_on_it(db, night) -> None:
    processor = TargetProcessor("serial", progress=False)
    plan = _planned(processor, Stack)
    local = CountingSerial(processor.session)
    executor = StartsAfter(SerialExecutor(processor.session), local, count=3)
    outcome = Scheduler(executor, processor.settings(plan), claims=NoClaims(),
                        local=local).run(plan)
    assert outcome.count(MADE) == len(plan.red()) and outcome.local == 3
    assert len(executor.submitted) == len(plan.red()) - 3
    assert select(Stack).count() == 3


def test_a_target_another_processor_holds_waits_and_goes_once_free(db, night) -> None:
    processor = TargetProcessor("serial", progress=False)
    plan = _planned(processor, Calibrated)
    first = plan.red()[0]
    claims = HeldOnce(first)
    outcome = Scheduler(SerialExecutor(processor.session), processor.settings(plan),
                        claims=claims).run(plan)
    assert outcome.count(MADE) == len(plan.red())
    asked_again = len(claims.asked) - 1 - claims.asked[::-1].index(first)
    assert claims.asked.count(first) == 2
    assert asked_again > claims.asked.index(first) + 1  # another went meanwhile


def test_a_target_made_meanwhile_is_reused_and_linked_by_what_needs_it(db, night) -> None:
    processor = TargetProcessor("serial", progress=False)
    plan = _planned(processor, Stack)
    TargetProcessor("serial", progress=False).make(Calibrated, "chip == 'ccd52'")
    theirs = select(Calibrated.chip == "ccd52").first()
    claims = TargetClaims(processor.db)
    try:
        outcome = Scheduler(SerialExecutor(processor.session), processor.settings(plan),
                            claims=claims).run(plan)
    finally:
        claims.close()
    (reused,) = [n for n in plan.red() if outcome.status[id(n)] == REUSED]
    assert reused.cls is Calibrated and reused.result_id == theirs.object_id
    assert outcome.count(MADE) == len(plan.red()) - 1
    stack = select((Stack.pointing == "F2") & (Stack.filter == "r")).first()
    assert theirs.object_id in [f.object_id for f in stack.frames]
    assert select(Calibrated.chip == "ccd52").count() == 1


def test_the_claims_service_says_held_elsewhere_until_released(db, night) -> None:
    processor = TargetProcessor("serial", progress=False)
    node = _planned(processor, Calibrated).red()[0]
    ours, theirs = TargetClaims(processor.db), TargetClaims(processor.db)
    try:
        assert ours.claim(node) is True
        assert theirs.claim(node) is False
        ours.close()  # sends the releases
        assert theirs.claim(node) is True
    finally:
        ours.close()
        theirs.close()


def test_without_keep_going_a_failure_cancels_what_is_in_flight_and_it_is_skipped(
        db, night) -> None:
    RawSci(chip="ccd52", filter="r", pointing="F2", obs_date=utc(2024, 3, 2, 23),
           counts=-1.0).commit()
    processor = TargetProcessor("serial", progress=False)
    plan = _planned(processor, Calibrated)
    executor = HoldsBatchWithAFailure(SerialExecutor(processor.session))
    outcome = Scheduler(executor, processor.settings(plan), claims=NoClaims()).run(plan)
    assert outcome.count(FAILED) == 1 and executor.cancelled_ids
    cancelled = [n for n in plan.red() if n.obj.object_id in executor.cancelled_ids]
    assert all(outcome.status[id(n)] == SKIPPED for n in cancelled)
    assert outcome.count(MADE) == 0  # nothing but the first batch went out
