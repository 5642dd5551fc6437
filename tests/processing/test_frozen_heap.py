"""During a make, what the process held before it is frozen for Python's cycle collector, and
unfrozen when the make ends; a heap someone else froze, or a collector switched off, is left
as it is."""

from __future__ import annotations

import gc

from awlineage import OnePerGroup, Process, TargetProcessor, persistent, select
from awlineage.processing._frozen_heap import older_objects_frozen
from tests.processing.models import RawCal


class FreezeWitness(Process):
    """Records how many objects were frozen while it was made."""

    targets = OnePerGroup(RawCal, link="raws", by=("chip",))

    raws = persistent("Raw calibrations", RawCal, [])
    chip = persistent("CCD name", str, "")
    frozen = persistent("Objects frozen for the cycle collector during the make", int, None)

    def make(self) -> None:
        self.frozen = gc.get_freeze_count()


def test_what_the_process_held_is_frozen_during_a_make_and_unfrozen_after(db, night) -> None:
    assert gc.get_freeze_count() == 0
    held = [[n] for n in range(10_000)]  # the caller's data, older than the make
    TargetProcessor("serial", progress=False).make(FreezeWitness)
    witnesses = select(FreezeWitness).all()
    assert len(witnesses) == 2 and all(w.frozen > len(held) for w in witnesses)
    assert gc.get_freeze_count() == 0


def test_a_heap_frozen_before_the_make_stays_frozen_after_it(db, night) -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        TargetProcessor("serial", progress=False).make(FreezeWitness)
        assert all(w.frozen <= before for w in select(FreezeWitness))  # nothing added
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_nested_makes_unfreeze_when_the_outermost_ends() -> None:
    with older_objects_frozen():
        with older_objects_frozen():
            pass
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_a_collector_switched_off_is_left_alone() -> None:
    gc.disable()
    try:
        with older_objects_frozen():
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


class _Cycle:
    def __init__(self, payload: bytearray) -> None:
        self.payload = payload
        self.me = self


def test_garbage_a_make_leaves_is_freed_when_it_ends() -> None:
    import weakref

    with older_objects_frozen():
        garbage = _Cycle(bytearray(1024))
        alive = weakref.ref(garbage)
        del garbage  # a cycle: only the collector frees it
        assert alive() is not None
    assert alive() is None  # before a next make could freeze it


def test_the_end_collection_walks_only_what_the_make_allocated() -> None:
    """A cycle older than the make is still frozen while the make's garbage is collected;
    the next full collection, after the unfreeze, frees it."""
    import weakref

    gc.collect()  # counts start at zero: no automatic collection before the freeze
    older = _Cycle(bytearray(1024))
    alive = weakref.ref(older)
    del older
    with older_objects_frozen():
        pass
    assert alive() is not None
    gc.collect()
    assert alive() is None
