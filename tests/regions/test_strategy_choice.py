"""Stored strategy choices: captures that give no mode follow them (mode and orientation),
orientation can be chosen per call, choices an operator cannot follow fall back with one
warning, and the adaptive start makes new operators black-box."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from awlineage.database import recorded_statements
from awlineage.persistence import default_store
from awlineage.regions import (
    Operator,
    RegionError,
    capture_regions,
    decode_record,
    elementwise,
)
from awlineage.regions._optimiser import Candidate, optimise
from awlineage.regions._strategy_choice import (
    RegionStrategy,
    set_adaptive,
    store_plan,
    stored_choices,
)
from tests.regions.models import (
    RegionTestCalib,
    RegionTestRaw,
    RegionTestReduced,
    raw_frames_load,
)


class Smear(Operator):
    """Each output pixel depends on itself and its right-hand neighbour (full lineage when
    traced; can be re-run)."""

    supported_modes = ("full",)

    def __init__(self) -> None:
        super().__init__("smear")

    def run(self, image, *, lineage):
        if lineage.wants("full"):
            cells = np.argwhere(np.ones(image.shape, bool))
            right = cells.copy()
            right[:, 1] = np.minimum(right[:, 1] + 1, image.shape[1] - 1)
            lineage.lwrite(cells, cells)
            lineage.lwrite(cells, right)
        return image + np.roll(image, -1, axis=1)


IMAGE = np.arange(12.0).reshape(3, 4)


@pytest.fixture(autouse=True)
def _raw_images_load_again():
    with raw_frames_load(IMAGE):
        yield


def _choose(operator: str, *strategies: str, pinned: bool = False) -> None:
    RegionStrategy(operator=operator, strategies=list(strategies), pinned=pinned).commit()


def _capture(**options):
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="out")
    with capture_regions(out) as cap:
        image = cap.array(raw, data=IMAGE)
        cap.run(Smear(), [image], [IMAGE], **options)
    out.commit()
    (record,) = cap.records
    return record


def _tables(record):
    decoded = decode_record(record)
    return decoded.backward[0] is not None, decoded.forward[0] is not None


def test_captures_follow_the_newest_stored_choice(db) -> None:
    assert _capture().mode == "full" and _capture().orientation == "backward"
    _choose("smear", "full-forward")
    record = _capture()
    assert (record.mode, record.orientation) == ("full", "forward")
    assert _tables(record) == (False, True)
    _choose("smear", "full-both", "blackbox")
    record = _capture()
    assert (record.mode, record.orientation) == ("full", "both")
    assert _tables(record) == (True, True)
    _choose("smear", "blackbox")
    record = _capture()
    assert record.mode == "blackbox" and record.encoding is None


def test_a_mode_given_by_the_caller_beats_the_stored_choice(db) -> None:
    _choose("smear", "blackbox")
    record = _capture(mode="full")
    assert (record.mode, record.orientation) == ("full", "backward")
    record = _capture(orientation="forward")   # the mode still comes from the choice
    assert record.mode == "blackbox"


def test_orientation_is_chosen_per_call(db) -> None:
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="out")
    with capture_regions(out, orientation="both") as cap:
        image = cap.array(raw, data=IMAGE)
        first = cap.run(Smear(), [image], [IMAGE], name="first", orientation="forward")
        cap.run(Smear(), [cap.intermediate("first")], [first], hdu=0)
        cap.run(Smear(), [image], [IMAGE], hdu=1, orientation="backward")
    out.commit()
    assert [r.orientation for r in cap.records] == ["forward", "both", "backward"]
    assert [_tables(r) for r in cap.records] == [(False, True), (True, True), (True, False)]
    with pytest.raises(RegionError, match="orientation must be one of"), \
            capture_regions(RegionTestReduced()) as cap:
        cap.run(Smear(), [cap.array(raw, data=IMAGE)], [IMAGE], orientation="sideways")


def test_a_choice_the_operator_cannot_follow_falls_back_with_one_warning(db) -> None:
    _choose("smear", "blackbox")
    _choose("lines", "blackbox")          # a caller writing lineage itself is not steered
    _choose("elementwise", "pay")         # a mapping operator keeps no payload
    raw = RegionTestRaw(label="raw")
    raw.commit()
    with pytest.warns(UserWarning) as caught:
        for _ in range(2):
            out = RegionTestReduced(label="out")
            with capture_regions(out) as cap:
                image = cap.array(raw, data=IMAGE)
                tmp = cap.apply(elementwise(), [image], name="scaled")
                cap.run(Smear(), [tmp], [IMAGE], hdu=0)       # input not stored: no re-run
                call = cap.operator("lines", [image], hdu=1, shape=(3,))
                call.lwrite([[0]], [[0, 0]])
                call.close()
            out.commit()
            assert [r.mode for r in cap.records] == ["map", "full", "full"]
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "elementwise" in messages[0] and "'pay'" in messages[0]
    assert "smear" in messages[1] and "cannot all be loaded again" in messages[1]


def test_black_box_needs_inputs_that_load_again(db) -> None:
    """A stored black-box choice for a call whose input no loader gives back would lose
    the lineage: the capture keeps the operator's default mode and warns."""
    _choose("smear", "blackbox")
    calib = RegionTestCalib(label="no loader gives this one back")
    calib.commit()
    out = RegionTestReduced(label="out")
    with pytest.warns(UserWarning, match="cannot all be loaded again"), \
            capture_regions(out) as cap:
        cap.run(Smear(), [cap.array(calib, data=IMAGE)], [IMAGE])
    assert [r.mode for r in cap.records] == ["full"]
    assert _capture().mode == "blackbox"  # a raw frame loads again


def test_adaptive_start_makes_operators_without_a_choice_black_box(db) -> None:
    set_adaptive()
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="out")
    with warnings.catch_warnings():
        warnings.simplefilter("error")    # operators that cannot re-run fall back silently
        with capture_regions(out) as cap:
            image = cap.array(raw, data=IMAGE)
            cap.run(Smear(), [image], [IMAGE], name="smeared")
            cap.apply(elementwise(), [cap.intermediate("smeared")], hdu=0)
            cap.run(Smear(), [cap.intermediate("smeared")], [IMAGE], hdu=1)
    out.commit()
    assert [r.mode for r in cap.records] == ["blackbox", "map", "full"]
    _choose("smear", "full-forward")       # the optimiser refined it
    assert (_capture().mode, _capture().orientation) == ("full", "forward")
    set_adaptive(False)
    _choose("smear")                        # an empty choice: the operator's default
    assert _capture().mode == "full" and _capture().orientation == "backward"


def test_choices_are_read_once_per_capture(db) -> None:
    _choose("smear", "full-forward")
    raw = RegionTestRaw(label="raw")
    raw.commit()
    with recorded_statements(db) as statements, \
            capture_regions(RegionTestReduced(label="out")) as cap:
        image = cap.array(raw, data=IMAGE)
        for hdu in range(4):
            cap.run(Smear(), [image], [IMAGE], hdu=hdu)
    # the choices' rows are read once (besides the count telling whether they changed)
    strategy_reads = [s for s in statements if "regionstrategy" in s.lower().replace("_", "")
                      and "count(" not in s.lower()]
    assert len(strategy_reads) == 1
    assert {r.orientation for r in cap.records} == {"forward"}


def test_a_plan_is_stored_as_choices_with_pins(db) -> None:
    cands = [Candidate("smear", "full-backward", 100, 0.1, {"backward": 0.01}),
             Candidate("smear", "full-forward", 100, 0.1, {"backward": 1.0}),
             Candidate("smear", "blackbox", 0, 0.0, {"backward": 2.0}),
             Candidate("scale", "map", 0, 0.0, {"backward": 0.001})]
    plan = optimise(cands, {("smear", "backward"): 1.0}, pinned={"scale": "map"})
    store_plan(plan)
    choices = stored_choices()
    assert choices["smear"].strategies == ["full-backward"]
    assert not choices["smear"].pinned and choices["smear"].source == "optimiser"
    assert choices["smear"].expected_query_seconds == pytest.approx(0.01)
    assert choices["smear"].expected_disk_bytes == 100
    assert choices["scale"].pinned and choices["scale"].strategies == ["map"]
    assert _capture().orientation == "backward"


def test_outside_a_database_captures_use_the_operators_default() -> None:
    assert default_store() is None
    assert stored_choices() == {}
    out = RegionTestReduced(label="out")
    with capture_regions(out) as cap:
        cap.run(Smear(), [cap.array(RegionTestRaw(), data=IMAGE)], [IMAGE])
    assert cap.records[0].mode == "full"
    assert default_store() is None          # no default database was opened on the way
