"""The fixed cost of captured calls, counted in SQL statements (never timed): a capture block
adds its records to the output's commit and reads the stored strategy choices again only when
they changed (here or in another session); its statements do not grow with its calls; and
a failing block leaves nothing behind. The statistics' cell counts agree with `Region`."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import select
from awlineage.database import Database, recorded_statements
from awlineage.regions import (
    Operator,
    RegionTable,
    capture_regions,
    elementwise,
)
from awlineage.regions._boxes import Boxes
from awlineage.regions._cell_count import covered_cells
from awlineage.regions._region import Region
from awlineage.regions._strategy_choice import RegionStrategy
from tests.regions.models import RegionTestRaw, RegionTestReduced, raw_frames_load

IMAGE = np.arange(12.0).reshape(3, 4)


class Shift(Operator):
    """Output pixel (r, c) depends on input pixel (r, c + 1) where there is one (full
    lineage when traced)."""

    supported_modes = ("full",)

    def __init__(self) -> None:
        super().__init__("shift")

    def run(self, image, *, lineage):
        if lineage.wants("full"):
            rows, columns = image.shape
            cells = np.argwhere(np.ones((rows, columns - 1), bool))
            lineage.lwrite(cells, cells + np.array([0, 1]))
        return np.roll(image, -1, axis=1)


def _block(raw: RegionTestRaw, calls: int = 1) -> list[RegionTable]:
    """One capture block of `calls` mapping calls (a chain), committed with its output."""
    out = RegionTestReduced(label="out")
    with capture_regions(out) as cap:
        ref = cap.array(raw, data=IMAGE)
        for k in range(calls - 1):  # mapping calls, then the traced one
            ref = cap.apply(elementwise(), [ref], name=f"step{k}")
        image = cap.intermediate(f"step{calls - 2}") if calls > 1 else ref
        cap.run(Shift(), [image], [IMAGE])
    out.commit()
    return cap.records


def _reads_choices(statement: str) -> bool:
    """A statement reading stored choices' rows (not the count telling they changed)."""
    text = statement.lower().replace("_", "")
    return "regionstrategy" in text and "count(" not in text


@pytest.fixture(autouse=True)
def _raw_images_load_again():
    with raw_frames_load(IMAGE):
        yield


@pytest.fixture
def raw(db: Database) -> RegionTestRaw:
    frame = RegionTestRaw(label="raw")
    frame.commit()
    _block(frame)  # the record classes' tables exist from here on
    return frame


def test_a_capture_block_adds_at_most_three_statements_to_its_commit(db, raw) -> None:
    with recorded_statements(db) as plain:
        RegionTestReduced(label="plain").commit()
    for _ in range(2):
        with recorded_statements(db) as captured:
            _block(raw)
        # the record's row, its input links, and the check that the choices did not change
        assert len(captured) - len(plain) <= 3, captured


def test_statements_of_a_block_do_not_grow_with_its_calls(db, raw) -> None:
    with recorded_statements(db) as one:
        assert len(_block(raw, 1)) == 1
    with recorded_statements(db) as six:
        assert len(_block(raw, 6)) == 6
    assert len(six) == len(one)


def test_stored_choices_are_read_again_only_when_they_changed(db, raw) -> None:
    RegionStrategy(operator="shift", strategies=["full-forward"]).commit()
    assert _block(raw)[-1].orientation == "forward"
    with recorded_statements(db) as statements:
        for _ in range(3):
            assert _block(raw)[-1].orientation == "forward"
    assert not [s for s in statements if _reads_choices(s)]
    RegionStrategy(operator="shift", strategies=["blackbox"]).commit()
    assert _block(raw)[-1].mode == "blackbox"


def test_a_choice_stored_by_another_session_is_followed(db, raw) -> None:
    assert _block(raw)[-1].orientation == "backward"
    other = Database(db.url.render_as_string(hide_password=False), schema=db.schema)
    try:
        other.commit([RegionStrategy(operator="shift", strategies=["full-forward"])])
    finally:
        other.close()
    assert _block(raw)[-1].orientation == "forward"


def test_a_failing_block_leaves_no_records(db, raw) -> None:
    before = select(RegionTable).count()
    out = RegionTestReduced(label="failed")
    with pytest.raises(ZeroDivisionError), capture_regions(out) as cap:
        ref = cap.array(raw, data=IMAGE)
        cap.apply(elementwise(), [ref], name="half")
        1 / 0  # noqa: B018
    out.commit()
    assert cap.records == [] and select(RegionTable).count() == before


def test_covered_cells_counts_as_a_region_does() -> None:
    rng = np.random.default_rng(39)
    for _ in range(300):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 9, ndim))
        lo = rng.integers(-3, 10, (int(rng.integers(0, 6)), ndim))
        boxes = Boxes(lo, lo + rng.integers(-1, 5, lo.shape))  # some empty, some outside
        assert covered_cells(boxes, shape) == Region.from_boxes(boxes, shape).count()
