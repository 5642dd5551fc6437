"""The blast radius against known truth, on both databases: a synthetic night whose second raw
bias of ccd1 carries a hot column is built through the target processor; the master bias's
region of that column is retracted. The sources `affected` names must be exactly those whose
payload boxes in the coadd reach a pixel the column reached through reduction, regridding and
stacking: checked against an independent forward written here from the stored arrays and
records (no missing row, no extra row), and against the generator's geometry. The coarse
answer must be a plain walk of everything that links to the bias, transitively."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from astropy.wcs import WCS

from awlineage import Database, select
from awlineage.blast_radius import affected
from awlineage.lineage import get_inverse_properties
from awlineage.persistence import set_current_store
from awlineage.regions import Boxes, Region, RegionTable, Shapes, decode_record
from awlineage.retraction import RetractedCells
from targets.images import read_hdu
from targets.parameters import stage_parameters
from targets.pipeline import (
    BiasFrame,
    CoaddedRegriddedFrame,
    DomeFlatFrame,
    ReducedScienceFrame,
    RegriddedFrame,
    Source,
    SourceList,
)
from targets.region_operators import WcsResample
from targets.regrid import PixelTransform, RegridParameters
from targets.science import reduced_wcs
from targets.sky import SkyParameters, WrittenNight
from targets.sky_defects import HotColumn
from targets.source_lists import read_sources
from tests.retraction.hot_night import HOT, NIGHT, built_night


@dataclass
class Built:
    db: Database
    night: WrittenNight
    bias: BiasFrame


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          night: WrittenNight) -> Iterator[Built]:
    """The night ingested and every SourceList made, serially, once per backend."""
    folder = tmp_path_factory.mktemp(f"built-{request.param}")
    with built_night(request.param, request, folder, night) as db:
        (bias,) = select(BiasFrame, database=db).all()
        yield Built(db, night, bias)


@pytest.fixture
def current(built: Built) -> Iterator[Built]:
    set_current_store(built.db)
    yield built
    set_current_store(None)


def column_cells() -> RetractedCells:
    return RetractedCells.parse(HOT.fits_region())


# -- the independent forward: masks, hop by hop, from the stored products and records --------

def flagged_radii(db: Database, reduced: ReducedScienceFrame) -> list[tuple[Boxes, int]]:
    """The cosmic-ray cells of a reduced frame and the radius each depends on, read from its
    stored comp-mode record (boxes of flagged cells sharing a radius)."""
    (record,) = [r for r in select(RegionTable.output == reduced, database=db)
                 if r.mode == "comp"]
    table = decode_record(record).payload
    assert table is not None and (table.ref == -1).all()
    return [(Boxes(table.lo[k:k + 1, :2], table.hi[k:k + 1, :2]), int(table.lo[k, 2]))
            for k in range(len(table))]


def reduced_reach(db: Database, reduced: ReducedScienceFrame, column: int) -> np.ndarray:
    """Cells of a reduced frame that depend on `column` of its bias (through the debiased and
    flattened images, and the flat, which the bias reaches column for column): the column
    itself, and every flagged cell whose neighbourhood (its radius) reaches the column."""
    shape = read_hdu(reduced)[0].shape
    mask = np.zeros(shape, dtype=bool)
    mask[:, column] = True
    for boxes, radius in flagged_radii(db, reduced):
        for row, col in boxes.cells():
            if abs(col - column) <= radius:
                mask[row, col] = True
    return mask


def regrid_reach(regridded: RegriddedFrame, reduced_mask: np.ndarray) -> Region:
    """The regridded cells the reduced cells reach: the pipeline's resampling operator, built
    here from the stored frames as `RegriddedFrame.make` builds it, mapped forward box by box
    over the reduced cells."""
    reduced = regridded.reduced
    data = read_hdu(reduced)[0]
    parameters = stage_parameters(regridded.process_params, RegridParameters)
    transform = PixelTransform(reduced_wcs(reduced, data.shape), data.shape,
                               regridded.grid.sky_grid(),
                               (regridded.origin_row, regridded.origin_col), parameters.order)
    operator = WcsResample.for_regrid(transform)
    out_shape = read_hdu(regridded)[0].shape
    boxes = Region(data.shape, reduced_mask).to_boxes()
    shapes = Shapes(tuple(out_shape), (tuple(data.shape),))
    return Region.from_boxes(operator.map_f(boxes, 0, shapes), out_shape)


def coadd_reach(db: Database, bias: BiasFrame, column: int
                ) -> tuple[dict[int, np.ndarray], dict[int, Region], np.ndarray]:
    """(reduced masks, regridded regions, coadd mask) reached by `column` of `bias`."""
    (coadd,) = select(CoaddedRegriddedFrame, database=db).all()
    coadd_shape = read_hdu(coadd)[0].shape
    reached = np.zeros(coadd_shape, dtype=bool)
    reduced_masks, regridded_regions = {}, {}
    for frame in coadd.regridded_frames:
        assert frame.reduced.bias.object_id == bias.object_id
        reduced_masks[frame.reduced.object_id] = mask = reduced_reach(db, frame.reduced, column)
        regridded_regions[frame.object_id] = region = regrid_reach(frame, mask)
        offset = (coadd.origin_row - frame.origin_row, coadd.origin_col - frame.origin_col)
        placed = np.zeros(coadd_shape, dtype=bool)
        for (r0, c0), (r1, c1) in zip(region.to_boxes().lo, region.to_boxes().hi, strict=True):
            rows = slice(max(r0 - offset[0], 0), max(r1 - offset[0] + 1, 0))
            cols = slice(max(c0 - offset[1], 0), max(c1 - offset[1] + 1, 0))
            placed[rows, cols] = True
        reached |= placed
    return reduced_masks, regridded_regions, reached


def rows_touching(source_list: SourceList, coadd_mask: np.ndarray) -> list[int]:
    """Rows of the stored SOURCES table whose pixel box (xmin..xmax, ymin..ymax) holds a
    reached coadd pixel."""
    table = read_sources(source_list)
    rows = []
    for number in range(len(table)):
        y0, y1 = int(table["ymin"][number].value), int(table["ymax"][number].value)
        x0, x1 = int(table["xmin"][number].value), int(table["xmax"][number].value)
        if coadd_mask[y0:y1 + 1, x0:x1 + 1].any():
            rows.append(number)
    return rows


# -- the tests -------------------------------------------------------------------------------

def test_the_generator_puts_the_hot_column_in_one_raw_bias(current: Built):
    names = {raw.original_name: raw for raw in current.bias.raw_frames}
    assert HOT.filename in names and current.night.truth.hot_column == HOT
    for name, raw in names.items():
        pixels = read_hdu(raw)[0].astype(float)
        step = np.median(pixels[:, HOT.column]) - np.median(pixels[:, HOT.column + 2])
        assert (step > HOT.excess / 2) == (name == HOT.filename), name


def test_sources_named_are_exactly_those_the_column_reached(current: Built):
    db, bias = current.db, current.bias
    answer = affected(db, bias, column_cells())
    reduced_masks, regridded_regions, coadd_mask = coadd_reach(db, bias, HOT.column)
    (source_list,) = select(SourceList, database=db).all()
    expected_rows = rows_touching(source_list, coadd_mask)
    assert expected_rows and len(expected_rows) < source_list.nsources  # fine, not everything

    found = {(a.obj.object_id, a.hdu): a.region for a in answer.arrays}
    for oid, mask in reduced_masks.items():
        assert np.array_equal(found[(oid, 0)].to_mask(), mask)
    for oid, region in regridded_regions.items():
        assert np.array_equal(found[(oid, 0)].to_mask(), region.to_mask())
    coadd = source_list.coadd
    assert np.array_equal(found[(coadd.object_id, 0)].to_mask(), coadd_mask)
    (flat,) = select(DomeFlatFrame, database=db).all()
    assert found[(flat.object_id, 0)].to_boxes().lo.tolist() == [[0, HOT.column]]

    named = answer.of_class(Source)
    assert [s.number for s in named] == expected_rows  # no missing row, no extra row
    assert all(s.sourcelist.object_id == source_list.object_id for s in named)
    assert sorted(s.object_id for s in select(answer.where(Source), database=db)) == \
        sorted(answer.ids(Source))
    counts = answer.counts()
    assert counts["Source"] == len(expected_rows)
    assert counts["ReducedScienceFrame"] == counts["RegriddedFrame"] == 2
    assert list(counts)[:1] == ["DomeFlatFrame"] and "ProcessRun" not in counts


def test_the_named_sources_lie_where_the_generator_put_the_column(current: Built):
    """Geometry from the generator alone: a coadd pixel whose sky position falls within half
    a pixel of the column in an exposure's own WCS is read from the column by the bilinear
    resampling, so every source whose box holds one must be named; and every source named has
    a box within reach of the column (its pixels, the cosmic-ray neighbourhoods of at most
    2 x 11 + 11 pixels, and the few pixels by which map lineage is conservative)."""
    db, bias = current.db, current.bias
    answer = affected(db, bias, column_cells())
    (source_list,) = select(SourceList, database=db).all()
    coadd_wcs = WCS(read_hdu(source_list.coadd)[1])
    rows, cols = read_hdu(source_list.coadd)[0].shape
    yy, xx = np.mgrid[0:rows, 0:cols]
    ra, dec = coadd_wcs.wcs_pix2world(xx.ravel(), yy.ravel(), 0)
    distance = np.full(rows * cols, np.inf)
    truth = current.night.truth
    for exposure in truth.exposures.values():
        if exposure.kind != "science" or exposure.chip != HOT.chip:
            continue
        x, y = exposure.wcs.wcs_world2pix(ra, dec, 0)
        inside = (y > -0.5) & (y < NIGHT.chip_shape[0] - 0.5)
        distance = np.where(inside, np.minimum(distance, np.abs(x - HOT.column)), distance)
    distance = distance.reshape(rows, cols)
    table = read_sources(source_list)
    named = {s.number for s in answer.of_class(Source)}
    for number in range(len(table)):
        box = distance[int(table["ymin"][number].value):int(table["ymax"][number].value) + 1,
                       int(table["xmin"][number].value):int(table["xmax"][number].value) + 1]
        if box.min() < 0.5:
            assert number in named, f"row {number} reads the column but is not named"
        if number in named:
            assert box.min() < 2 * 11 + 11 + 4, f"row {number} is named but far from it"


def test_coarse_answer_is_a_plain_descendant_walk(current: Built):
    db, bias = current.db, current.bias
    seen: dict[int, str] = {}
    frontier = [bias]
    while frontier:
        following = []
        for obj in frontier:
            for link in get_inverse_properties(obj, database=db):
                found = link.obj
                if isinstance(found, RegionTable) or type(found).__name__ == "RegionQueryStat":
                    continue
                if found.object_id not in seen:
                    seen[found.object_id] = type(found).__name__
                    following.append(found)
        frontier = following
    answer = affected(db, bias)
    assert not answer.fine and answer.arrays == [] and answer.rows == []
    assert sorted(answer.ids()) == sorted(seen)
    (source_list,) = select(SourceList, database=db).all()
    assert answer.counts()["Source"] == source_list.nsources
    fine = affected(db, bias, column_cells())
    assert set(fine.ids()) < set(answer.ids())


def test_a_region_outside_the_frame_or_a_mask_of_another_shape_is_refused(
        current: Built, tmp_path: Path):
    from awlineage.retraction import RetractedCellsError

    with pytest.raises(RetractedCellsError, match=r"reaches column 301, beyond HDU 0 of "
                       r"BiasFrame .* 128x128 pixels"):
        affected(current.db, current.bias, RetractedCells.parse("300:301,*"))
    with pytest.raises(RetractedCellsError, match=r"reaches column 1000"):
        affected(current.db, current.bias, RetractedCells.parse("1:1000,*"))
    np.save(tmp_path / "mask.npy", np.ones((10, 12), dtype=bool))
    with pytest.raises(RetractedCellsError, match="is 12x10 pixels but the array is 128x128"):
        affected(current.db, current.bias, RetractedCells.from_mask_file(tmp_path / "mask.npy"))
    mask = np.zeros((128, 128), dtype=np.uint8)
    mask[:, HOT.column] = 1
    np.save(tmp_path / "column.npy", mask)
    by_mask = affected(current.db, current.bias,
                       RetractedCells.from_mask_file(tmp_path / "column.npy"))
    assert by_mask.ids() == affected(current.db, current.bias, column_cells()).ids()


def test_awl_affected_prints_counts_then_the_table_or_json(current: Built):
    import json

    from awlineage.blast_radius import render_blast_radius
    from tests.commands import run_awl

    bias_id = str(current.bias.object_id)
    expected = affected(current.db, current.bias, column_cells())
    done = run_awl(current.db, "affected", bias_id, "--region", HOT.fits_region(), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["counts"] == expected.counts() and data["region"] == HOT.fits_region()
    assert [o["object_id"] for table in data["rows"] for o in table["objects"]] == \
        expected.ids(Source)
    lines = render_blast_radius(expected).splitlines()  # what the command prints without --json
    assert lines[0].startswith(f"blast radius of BiasFrame {bias_id} cells "
                               f"{HOT.fits_region()} of HDU 0: {len(expected)} objects")
    assert lines[1].split() == ["1", "DomeFlatFrame"]
    assert f"  {len(expected.ids(Source))} Source" in lines
    assert any(line.startswith("CoaddedRegriddedFrame ") for line in lines)
    assert sum(line.startswith("Source ") for line in lines) == len(expected.ids(Source))


def test_a_retraction_stands_for_its_object_and_cells(current: Built):
    from awlineage.retraction import RetractionError, reinstate, retract
    from tests.commands import run_awl

    record = retract(current.bias, reason="hot column", region=HOT.fits_region())
    try:
        expected = affected(current.db, current.bias, column_cells())
        assert affected(current.db, record).ids() == expected.ids()
        done = run_awl(current.db, "affected", str(record.object_id), "--json")
        assert done.returncode == 0, done.stderr
        assert '"region": "' + HOT.fits_region() + '"' in done.stdout
        # the object's id alone asks about its retraction in force, as the viewer's page does
        by_object = run_awl(current.db, "affected", str(current.bias.object_id))
        assert by_object.returncode == 0, by_object.stderr
        first, second = by_object.stdout.splitlines()[:2]
        assert first == f"the retraction in force (record {record.object_id}): " \
            f"{record.sentence()}"
        assert second.startswith(f"blast radius of BiasFrame {current.bias.object_id} cells "
                                 f"{HOT.fits_region()} of HDU 0: {len(expected)} objects")
        with pytest.raises(RetractionError, match="names its own cells"):
            affected(current.db, record, column_cells())
    finally:
        undone = reinstate(record, reason="test over")
    with pytest.raises(RetractionError, match="reinstates an earlier one"):
        affected(current.db, undone)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--region", "41:x,*"], "awl: RetractedCellsError: region '41:x,*' at position 0: x "
                             "must be N, N:M or *, not '41:x'"),
    (["--hdu", "1"], "awl: RetractedCellsError: --hdu names the HDU of a --region or --mask"),
    (["--region", "1:1,*", "--mask", "m.npy"], "not allowed with argument"),
])
def test_bad_arguments_are_one_line_and_exit_2(arguments, message, capsys):
    from awlineage.cli import main

    with pytest.raises(SystemExit) if "--mask" in arguments else _nothing():
        status = main(["affected", "123", *arguments])
        assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1]


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_the_hot_column_is_off_by_default_and_changes_one_column_of_one_frame():
    from targets.sky import generate_night

    tiny = dict(n_chips=1, filters=("r",), sky_rates=(15.0,), n_dithers=1, n_biases=2,
                n_flats=1, chip_shape=(48, 48))
    assert SkyParameters().hot_column is None
    plain = generate_night(SkyParameters(**tiny))
    hot = generate_night(SkyParameters(**tiny, hot_column=HotColumn(bias=2, column=5)))
    assert plain.truth.hot_column is None and hot.truth.hot_column.filename == \
        "bias_ccd1_02.fits"
    for a, b in zip(plain.frames, hot.frames, strict=True):
        differ = np.argwhere(a.data != b.data)
        if a.filename == "bias_ccd1_02.fits":
            assert set(differ[:, 1]) == {5} and len(differ) == 48
        else:
            assert not len(differ), a.filename
    with pytest.raises(ValueError, match=r"hot_column.column must be 0..47, got 48"):
        SkyParameters(**tiny, hot_column=HotColumn(column=48))
    with pytest.raises(ValueError, match=r"hot_column.chip 'ccd9' is not a chip"):
        SkyParameters(**tiny, hot_column=HotColumn(chip="ccd9"))
