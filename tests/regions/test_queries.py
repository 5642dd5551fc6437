"""backward() and forward() over several hops of stored lineage, on both databases, against
brute force; stopping at targets; the entire-array shortcut; batched SQL; black boxes."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import backward, forward
from awlineage.database import recorded_statements
from awlineage.regions import Boxes, Operator, Region, RegionError, capture_regions
from awlineage.regions._loaders import register_array_loader, unregister_array_loader
from tests.regions.brute import flat_cells
from tests.regions.models import RegionTestRaw, RegionTestReduced
from tests.regions.pipeline import SHAPE, STARS, brute_force, build


def _assert_matches(result, start, cells, direction) -> None:
    expected = brute_force(start, cells, direction)
    stored = {k: v for k, v in expected.items() if not k[1].startswith("tmp:") and k != start}
    got = {(e.obj.object_id, f"hdu:{e.hdu}"): set(flat_cells(e.region).tolist())
           for e in result}
    assert {k: v for k, v in got.items() if v} == stored


@pytest.mark.parametrize("orientation", ["backward", "both"])
def test_backward_from_a_star_to_raw_pixels_matches_brute_force(db, orientation) -> None:
    p = build(orientation=orientation)
    start = (p.sources.object_id, "hdu:0")
    result = backward(p.sources, [[1]])
    _assert_matches(result, start, {1}, "backward")
    y0, x0, y1, x1 = STARS[1]
    assert result[p.coadd] == Region(p.coadd and (14, 18), (slice(y0, y1 + 1),
                                                              slice(x0, x1 + 1)))
    assert {type(o).__name__ for o in result.objects()} == {
        "RegionTestReduced", "RegionTestRaw", "RegionTestCalib"}


def test_backward_to_a_class_reports_only_its_objects(db) -> None:
    p = build()
    start = (p.sources.object_id, "hdu:0")
    result = backward(p.sources, [[0], [2]], to=RegionTestRaw)
    assert {o.object_id for o in result.objects()} == {r.object_id for r in p.raws}
    expected = brute_force(start, {0, 2}, "backward")
    for raw in p.raws:
        assert set(flat_cells(result[raw]).tolist()) == expected[(raw.object_id, "hdu:0")]


def test_backward_to_an_object_stops_there(db) -> None:
    p = build()
    result = backward(p.sources, [[0]], to=p.regridded[0])
    assert [o.object_id for o in result.objects()] == [p.regridded[0].object_id]
    assert result.stats.hops <= 4  # sources -> coadd cube -> regridded, no further


@pytest.mark.parametrize("orientation", ["backward", "forward"])
def test_forward_from_raw_pixels_matches_brute_force(db, orientation) -> None:
    p = build(orientation=orientation)
    cells = np.array([[3, 4], [3, 5], [12, 19], [8, 9]])
    result = forward(p.raws[0], cells)
    start = (p.raws[0].object_id, "hdu:0")
    flat = set(np.ravel_multi_index(tuple(cells.T), SHAPE).tolist())
    _assert_matches(result, start, flat, "forward")
    assert p.sources in result


def test_forward_to_a_class_reports_its_objects_all_along_the_path(db) -> None:
    p = build(frames=3)
    result = forward(p.bias, (slice(0, 2), slice(0, 3)), to=RegionTestReduced)
    start = (p.bias.object_id, "hdu:0")
    expected = brute_force(start, set(np.flatnonzero(
        Region(SHAPE, (slice(0, 2), slice(0, 3))).to_mask()).tolist()), "forward")
    for obj in [*p.reduced, *p.regridded, p.coadd]:
        assert set(flat_cells(result[obj]).tolist()) == expected[(obj.object_id, "hdu:0")]
    assert p.sources not in result


def test_entire_array_shortcut_applies_to_full_regions(db) -> None:
    p = build()
    result = backward(p.coadd, Region.full((14, 18)), to=RegionTestRaw)
    assert result.stats.shortcuts >= 1          # the median over the cube
    start = (p.coadd.object_id, "hdu:0")
    full = set(range(14 * 18))
    expected = brute_force(start, full, "backward")
    for raw in p.raws:
        assert set(flat_cells(result[raw]).tolist()) == expected[(raw.object_id, "hdu:0")]
    onward = forward(p.raws[0], Region.full(SHAPE))
    assert onward.stats.shortcuts >= 3          # debias, flat-field, cosmic-ray flags
    _assert_matches(onward, (p.raws[0].object_id, "hdu:0"), set(range(SHAPE[0] * SHAPE[1])),
                    "forward")


def _statement_count(db, action) -> int:
    """How many SELECTs `action` runs."""
    with recorded_statements(db) as statements:
        action()
    return sum(s.lstrip().upper().startswith("SELECT") for s in statements)


def test_the_coarse_path_is_found_in_batches_not_per_object(db) -> None:
    # Four more frames would cost a dozen more statements (three generations of four
    # objects) if records were looked up object by object; batched, the count stays put
    # (give or take loading an object the identity map has let go of).
    small = build(frames=2)
    large = build(frames=6, seed=4)
    few = _statement_count(db, lambda: backward(small.sources, [[1]]))
    many = _statement_count(db, lambda: backward(large.sources, [[1]]))
    assert many - few < 4
    few = _statement_count(db, lambda: forward(small.bias, [[0, 0]]))
    many = _statement_count(db, lambda: forward(large.bias, [[0, 0]]))
    assert many - few < 4


class BrightMask(Operator):
    """A black-box-able operator: pixels above a threshold, flagged with their 3x3
    neighbourhood; others one-to-one (full lineage when traced)."""

    supported_modes = ("full", "blackbox")
    runs = 0

    def __init__(self, threshold: float = 0.9) -> None:
        super().__init__("bright_mask", threshold=threshold)

    def run(self, image, *, lineage):
        type(self).runs += 1
        bright = image > self.params["threshold"]
        if lineage.wants("full"):
            cells = np.argwhere(np.ones(image.shape, bool))
            radius = np.where(bright.ravel(), 1, 0)[:, None]
            boxes = Boxes.from_cells(cells)
            lineage.lwrite_clipped(boxes, boxes.expand(radius))
        return bright


def test_black_box_operators_are_re_run_at_query_time(db) -> None:
    rng = np.random.default_rng(9)
    image = rng.random((12, 12))
    raw = RegionTestRaw(label="raw")
    raw.commit()
    stored = {raw.object_id: image}

    def loader(obj, hdu):
        return stored.get(obj.object_id) if hdu == 0 else None

    boxed, traced = RegionTestReduced(label="bb"), RegionTestReduced(label="full")
    for out, mode in ((boxed, "blackbox"), (traced, "full")):
        with capture_regions(out) as cap:
            cap.run(BrightMask(), [cap.array(raw, data=image)], [image], mode=mode)
        out.commit()
    register_array_loader(loader)
    try:
        BrightMask.runs = 0
        cells = np.argwhere(image > 0.9)[:3]
        found = backward(boxed, cells)
        assert BrightMask.runs == 1 and found.stats.reruns == 1
        assert found[raw] == backward(traced, cells)[raw]
        assert forward(raw, cells)[boxed] == forward(raw, cells)[traced]
    finally:
        unregister_array_loader(loader)
    with pytest.raises(RegionError, match="no array loader for RegionTestRaw"):
        backward(boxed, cells)


def test_queries_refuse_what_they_cannot_answer(db) -> None:
    p = build(frames=1)
    with pytest.raises(RegionError, match="no region lineage recorded into hdu:3"):
        backward(p.coadd, [[0, 0]], hdu=3)
    with pytest.raises(RegionError, match="outside the array of shape \\(14, 18\\)"):
        backward(p.coadd, [[20, 0]])
    with pytest.raises(RegionError, match="start at a committed persistent object"):
        backward(RegionTestRaw(), [[0, 0]])
    with pytest.raises(RegionError, match="to= takes persistent objects or classes"):
        backward(p.coadd, [[0, 0]], to="RegionTestRaw")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_relations_over_several_hops_match_brute_force(db, seed) -> None:
    # a -> b -> c, and c also reads a directly: random full-mode relations on every edge,
    # some cell pairs, some boxes; queries meet the two paths into a and must merge them.
    rng = np.random.default_rng(seed)
    shapes = {"a": (7, 6), "b": (9,), "c": (5, 4)}
    a = RegionTestRaw(label="a")
    a.commit()

    def random_rows(out_shape, in_shape, n):
        out = np.stack([rng.integers(0, s, n) for s in out_shape], 1)
        lo = np.stack([rng.integers(0, s, n) for s in in_shape], 1)
        hi = np.minimum(lo + rng.integers(0, 3, (n, len(in_shape))), np.array(in_shape) - 1)
        return out, Boxes(lo, hi)

    b = RegionTestReduced(label="b")
    with capture_regions(b) as cap:
        call = cap.operator("random_ab", [cap.array(a, shape=shapes["a"])], shape=shapes["b"])
        call.lwrite(*random_rows(shapes["b"], shapes["a"], 12))
        call.close()
    b.commit()
    c = RegionTestReduced(label="c")
    with capture_regions(c, orientation="both") as cap:
        refs = [cap.array(b, shape=shapes["b"]), cap.array(a, shape=shapes["a"])]
        call = cap.operator("random_bc", refs, shape=shapes["c"])
        out, boxes = random_rows(shapes["c"], shapes["b"], 15)
        call.lwrite(out, boxes, None)
        out, boxes = random_rows(shapes["c"], shapes["a"], 6)
        call.lwrite(out, None, boxes)
        call.close()
    c.commit()
    for _ in range(4):
        cells = np.stack([rng.integers(0, s, 3) for s in shapes["c"]], 1)
        flat = set(np.ravel_multi_index(tuple(cells.T), shapes["c"]).tolist())
        _assert_matches(backward(c, cells), (c.object_id, "hdu:0"), flat, "backward")
        cells = np.stack([rng.integers(0, s, 4) for s in shapes["a"]], 1)
        flat = set(np.ravel_multi_index(tuple(cells.T), shapes["a"]).tolist())
        _assert_matches(forward(a, cells), (a.object_id, "hdu:0"), flat, "forward")


def test_results_list_only_arrays_that_contributed(db) -> None:
    """Raw pixels far from every star reach the source list's array in the walk, with an
    empty region: it is not listed, indexing it raises KeyError, and keep_empty shows it
    marked."""
    p = build()
    corner = (slice(0, 2), slice(14, 16))
    result = forward(p.raws[0], corner)
    assert all(e.contributed and not e.region.is_empty() for e in result)
    assert p.coadd in result
    assert p.sources not in result
    assert p.sources.object_id not in {o.object_id for o in result.objects()}
    with pytest.raises(KeyError):
        result[p.sources]
    kept = forward(p.raws[0], corner, keep_empty=True)
    empty = [e for e in kept if not e.contributed]
    assert [e.obj.object_id for e in empty] == [p.sources.object_id]
    assert kept[p.sources].is_empty()
    assert p.sources.object_id not in {o.object_id for o in kept.objects()}
    assert {e.obj.object_id for e in kept if e.contributed} == \
        {e.obj.object_id for e in result}


def test_an_input_frame_with_no_cell_in_the_region_is_not_reported(db) -> None:
    """Two frames stacked into a cube: cells of slice 0 come from frame 0 only. Frame 1 is
    walked (its region comes out empty) but neither listed nor indexable, unless kept."""
    from awlineage.regions import stack

    frames = [RegionTestRaw(label=f"frame{k}") for k in range(2)]
    for frame in frames:
        frame.commit()
    cube = RegionTestReduced(label="cube")
    with capture_regions(cube) as cap:
        cap.apply(stack(), [cap.array(f, shape=(4, 5)) for f in frames], hdu=0)
    cube.commit()
    found = backward(cube, (slice(0, 1), slice(1, 3), slice(0, 5)))
    assert [o.object_id for o in found.objects()] == [frames[0].object_id]
    assert found[frames[0]].count() == 10
    assert frames[1] not in found
    with pytest.raises(KeyError):
        found[frames[1]]
    kept = backward(cube, (slice(0, 1), slice(1, 3), slice(0, 5)), keep_empty=True)
    assert {(e.obj.object_id, e.contributed) for e in kept} == {
        (frames[0].object_id, True), (frames[1].object_id, False)}
    assert [o.object_id for o in kept.objects()] == [frames[0].object_id]
    assert "empty" in repr(kept)
