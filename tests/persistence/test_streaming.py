"""Streaming a query with `yield_per`: the same objects as a plain query, in the same order,
and in memory that does not grow with the number of objects, on both backends."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from awlineage import DBObject, QueryError, commit, persistent, select
from tests.memory import reset_resident_peak, resident_peak_kib


class StreamedField(DBObject):
    name = persistent("Field name", str, "")


class StreamedSource(DBObject):
    """A source with a sizeable value, so that holding rows or objects would show."""

    field = persistent("Field number", int, 0, index=True)
    flux = persistent("Flux", float, 0.0)
    note = persistent("A kilobyte of text", str, "")
    parent = persistent("The field it was found in", StreamedField, None)


BATCH = 500
NOTE = "x" * 1000


def _add_sources(count: int, parent: StreamedField, start: int = 0) -> None:
    commit([StreamedSource(field=(start + i) % 7, flux=float(start + i), note=NOTE,
                           parent=parent) for i in range(count)])


def _stream_peaks(db) -> tuple[int, int | None, int]:
    """(tracemalloc peak in bytes, resident high-water growth in KiB or None, objects seen)
    while streaming every StreamedSource and dropping each one."""
    gc.collect()
    db.identity_map.sweep()
    resettable = reset_resident_peak()
    before = resident_peak_kib()
    tracemalloc.start()
    try:
        seen = 0
        total = 0.0
        for source in select(StreamedSource, database=db).yield_per(BATCH):
            total += source.flux
            seen += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    after = resident_peak_kib()
    growth = after - before if resettable and before is not None and after is not None \
        else None
    assert total == pytest.approx(sum(range(seen)))
    return peak, growth, seen


def test_yield_per_gives_the_objects_of_a_plain_query_in_order(db):
    field = StreamedField(name="COSMOS")
    _add_sources(23, field)
    plain = select(StreamedSource.field == 3, database=db).all()
    streamed = list(select(StreamedSource.field == 3, database=db).yield_per(2))
    assert [s.object_id for s in streamed] == [s.object_id for s in plain]
    # the same stored object, while referenced, is the same Python object
    assert all(a is b for a, b in zip(streamed, plain, strict=True))
    assert {s.parent.name for s in streamed} == {"COSMOS"}
    assert streamed[0].note == NOTE


def test_yield_per_on_an_empty_result_and_a_limit(db):
    _add_sources(5, StreamedField(name="GOODS"))
    assert list(select(StreamedSource.flux > 100.0, database=db).yield_per(3)) == []
    limited = list(select(StreamedSource, database=db).order_by("-flux").limit(4).yield_per(3))
    assert [s.flux for s in limited] == [4.0, 3.0, 2.0, 1.0]


def test_yield_per_refuses_a_count_that_is_not_positive(db):
    for bad in (0, -1, 2.5, True):
        with pytest.raises(QueryError, match="yield_per"):
            select(StreamedSource, database=db).yield_per(bad)


def test_a_streamed_object_kept_by_the_caller_stays_the_identity_mapped_one(db):
    _add_sources(BATCH * 3, StreamedField(name="UDS"))
    kept = [s for i, s in enumerate(select(StreamedSource, database=db).yield_per(BATCH))
            if i % 250 == 0]
    again = {s.object_id: s for s in select(StreamedSource, database=db).yield_per(BATCH)
             if s.object_id in {k.object_id for k in kept}}
    assert all(again[k.object_id] is k for k in kept)


def test_streaming_memory_does_not_grow_with_the_number_of_objects(db):
    field = StreamedField(name="HDF")
    _add_sources(5_000, field)
    small_peak, small_rss, small_seen = _stream_peaks(db)
    _add_sources(15_000, field, start=5_000)
    large_peak, large_rss, large_seen = _stream_peaks(db)
    assert (small_seen, large_seen) == (5_000, 20_000)
    # Four times the objects: holding rows or objects would at least double the peak
    # (each object carries a kilobyte), streaming keeps one batch.
    assert large_peak < 1.5 * small_peak, (small_peak, large_peak)
    assert large_peak < 6 * BATCH * len(NOTE), large_peak
    # The driver's own buffers are C memory: 15,000 more kilobyte rows held client-side
    # would raise the resident high-water mark by over 15 MB.
    if small_rss is not None and large_rss is not None:
        assert large_rss < small_rss + 8 * 1024, (small_rss, large_rss)
