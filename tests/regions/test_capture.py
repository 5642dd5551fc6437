"""The capture API: what each mode stores, how records commit with their output, and the
errors bad calls get (with nothing written)."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import select
from awlineage.regions import (
    Boxes,
    Operator,
    RegionError,
    RegionTable,
    capture_regions,
    elementwise,
    flagged_neighbourhood,
    set_run_provider,
)
from tests.regions.models import RegionTestFrame, RegionTestRaw, RegionTestReduced


def _grid(shape: tuple[int, ...]) -> np.ndarray:
    return np.argwhere(np.ones(shape, bool))


def test_records_commit_with_their_output_and_read_back(db, reconnect) -> None:
    raw = RegionTestRaw(label="raw")
    raw.commit()
    reduced = RegionTestReduced(label="reduced")
    shape = (300, 400)
    with capture_regions(reduced) as cap:
        image = cap.array(raw, 0, shape=shape)
        half = cap.apply(elementwise(), [image], name="scaled")
        call = cap.operator("sum_rows", [half], hdu=1, shape=(300,))
        cells = _grid(shape)
        call.lwrite(cells[:, :1], cells)            # 120,000 pairs in one call
        call.close()
    assert select(RegionTable.output == reduced).count() == 0     # nothing before commit
    reduced.commit()
    again = reconnect()
    records = select(RegionTable.output == reduced, database=again).order_by("step").all()
    assert [(r.operator, r.mode, r.output_array) for r in records] == [
        ("elementwise", "map", "tmp:scaled"), ("sum_rows", "full", "hdu:1")]
    full = records[1]
    assert full.output_shape == [300]
    assert [o.object_id for o in full.inputs] == [reduced.object_id]
    assert full.input_arrays == ["tmp:scaled"]
    assert len(full.encoding) < 200              # 120,000 pairs -> one ProvRC row
    assert "provrc" in full.encoding_name


def test_a_failing_make_leaves_no_records(db) -> None:
    raw = RegionTestRaw(label="raw")
    raw.commit()
    reduced = RegionTestReduced(label="reduced")
    with pytest.raises(ZeroDivisionError), capture_regions(reduced) as cap:
        cap.apply(elementwise(), [cap.array(raw, shape=(4, 4))])
        1 / 0  # noqa: B018
    reduced.commit()
    assert select(RegionTable.output == reduced).count() == 0


def test_process_run_hook_names_the_run(db) -> None:
    run = RegionTestFrame(label="a process run")
    raw = RegionTestRaw(label="raw")
    raw.commit()
    reduced = RegionTestReduced(label="reduced")
    set_run_provider(lambda: run)
    try:
        with capture_regions(reduced) as cap:
            cap.apply(elementwise(), [cap.array(raw, shape=(2, 2))])
    finally:
        set_run_provider(None)
    reduced.commit()
    (record,) = select(RegionTable.output == reduced).all()
    assert record.process_run.object_id == run.object_id
    assert run.is_committed


def test_lwrite_pairs_rows_and_broadcasts_single_rows() -> None:
    raw, out = RegionTestRaw(), RegionTestReduced()
    with capture_regions(out) as cap:
        call = cap.operator("op", [cap.array(raw, shape=(5, 5))], shape=(5,))
        call.lwrite([[1]], Boxes([[0, 0]], [[4, 1]]))            # one out row, one box
        call.lwrite([[2], [3]], [[2, 2], [3, 3]])                 # row by row
        call.lwrite([[4]], [[4, 0], [4, 4]])                      # one out cell, two cells
        call.lwrite_region([[0], [1]], [[0, 4], [1, 4]])          # region pair, all-to-all
        call.close()
    table = call.recorder.backward_tables()[0]
    keys, values = table.expand()
    pairs = {(k[0], *v) for k, v in zip(keys.tolist(), values.tolist(), strict=True)}
    expected = {(1, y, x) for y in range(5) for x in (0, 1)} | {(2, 2, 2), (3, 3, 3),
                                                               (4, 4, 0), (4, 4, 4)}
    expected |= {(o, y, 4) for o in (0, 1) for y in (0, 1)}
    assert pairs == expected


class _Counting(Operator):
    supported_modes = ("comp", "full")

    def __init__(self) -> None:
        super().__init__("counting")

    def map_b(self, boxes, i, shapes):
        return boxes

    def map_p(self, boxes, payload, i, shapes):
        return boxes.expand(payload[:, 0]).clip(shapes.inputs[i])

    def run(self, image, *, lineage):
        flagged = np.argwhere(image > 0.5)
        if lineage.wants("comp"):
            lineage.lwrite_payload(flagged, 1)
        elif lineage.wants("full"):
            lineage.lwrite(_grid(image.shape), _grid(image.shape))
        return image > 0.5


def test_modes_are_chosen_cheapest_first_and_can_be_forced() -> None:
    raw, out = RegionTestRaw(), RegionTestReduced()
    image = np.random.default_rng(1).random((6, 6))
    with capture_regions(out) as cap:
        ref = cap.array(raw, data=image)
        cap.run(_Counting(), [ref], [image], name="comp")
        cap.run(_Counting(), [ref], [image], name="full", mode="full")
        cap.run(_Counting(), [ref], [image], name="bb", mode="blackbox")
    modes = {r.output_array: (r.mode, r.encoding is None) for r in cap.records}
    assert modes == {"tmp:comp": ("comp", False), "tmp:full": ("full", False),
                     "tmp:bb": ("blackbox", True)}


def test_capture_refuses_a_committed_output(db) -> None:
    done = RegionTestReduced()
    done.commit()
    with pytest.raises(RegionError, match="already committed; capture region lineage before"):
        capture_regions(done)


@pytest.mark.parametrize(("action", "message"), [
    (lambda cap, a: cap.apply(elementwise(), [a, "raw"]), "input 1 must be an array declared"),
    (lambda cap, a: cap.operator("op", [a]).lwrite([[0, 0]], [[0, 0]]),
     "output shape unknown; give shape="),
    (lambda cap, a: cap.operator("op", [a], shape=(4,)).lwrite([[9]], [[0, 0]]),
     "output cells: coordinates outside the array of shape \\(4,\\)"),
    (lambda cap, a: cap.operator("op", [a], shape=(4,)).lwrite([[0]], [[0, 7]]),
     r"cells of input 0 .* outside the array"),
    (lambda cap, a: cap.operator("op", [a], shape=(4,)).lwrite([[0]], [[0, 0]], [[1, 1]]),
     "got cells for 2 inputs; the operator has 1"),
    (lambda cap, a: cap.operator("op", [a], shape=(4,)).lwrite([[0], [1]], [[0, 0]] * 3),
     "2 output rows but 3 rows for input 0"),
    (lambda cap, a: cap.operator(elementwise(), [a]).lwrite([[0, 0]], [[0, 0]]),
     "records 'map' lineage; lwrite\\(\\) is for mode full"),
    (lambda cap, a: cap.operator(flagged_neighbourhood(), [a]).lwrite_payload([[0, 0]], 1.5),
     "payloads are integers"),
    (lambda cap, a: cap.operator(elementwise(), [a], mode="pay"), "does not support mode 'pay'"),
    (lambda cap, a: (cap.apply(elementwise(), [a]), cap.apply(elementwise(), [a])),
     "hdu:0 of RegionTestReduced .* already written"),
    (lambda cap, a: cap.operator(elementwise(), [a], hdu=0, name="x"), "not both"),
    (lambda cap, a: cap.array(cap.output, 1), "hdu:1 of the output .* not written"),
    (lambda cap, a: cap.array(a.owner), "give shape= or data="),
])
def test_bad_calls_say_what_was_wrong(action, message) -> None:
    raw, out = RegionTestRaw(), RegionTestReduced()
    cap = capture_regions(out)
    ref = cap.array(raw, shape=(4, 4))
    with pytest.raises(RegionError, match=message):
        action(cap, ref)
        cap.finish()


def test_black_box_needs_stored_inputs() -> None:
    raw, out = RegionTestRaw(), RegionTestReduced()
    with capture_regions(out) as cap:
        tmp = cap.apply(elementwise(), [cap.array(raw, shape=(3, 3))], name="tmp")
        with pytest.raises(RegionError, match=r"black-box mode re-runs .* intermediate tmp:tmp"):
            cap.operator(_Counting(), [tmp], mode="blackbox")


def test_an_operator_named_but_never_described_is_all_to_all() -> None:
    raw, out = RegionTestRaw(), RegionTestReduced()
    with capture_regions(out) as cap:
        cap.apply("mystery", [cap.array(raw, shape=(3, 3))], shape=(2,))
    (record,) = cap.records
    assert (record.mode, record.operator, record.encoding) == ("all", "mystery", None)


def test_an_intermediate_written_by_lwrite_can_be_read_once_closed() -> None:
    raw, out = RegionTestRaw(), RegionTestReduced()
    with capture_regions(out) as cap:
        call = cap.operator("shift", [cap.array(raw, shape=(4, 4))], name="shifted",
                            shape=(4, 4))
        call.lwrite([[0, 0]], [[1, 1]])
        shifted = call.close()
        final = cap.apply(elementwise(), [shifted])
    assert shifted.array == "tmp:shifted" and final.array == "hdu:0"
