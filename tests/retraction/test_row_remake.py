"""The row-level remake of a source list after a region retraction, on both databases: the
synthetic night whose ccd1 master bias has a hot column is built and the column retracted;
``make --retracted`` remakes the list carrying every row the blast radius does not name byte
for byte (all columns, and the Source objects' values) and re-measuring the named ones, says so
on the list and its header, keeps region lineage per row (the blast radius still names the
re-measured rows of the new version), and ``diff`` shows exactly the named rows changed. With
carrying switched off the whole coadd is extracted again, and far rows change in low bits (the
image-wide background, noise and aperture correction move): the behaviour carrying replaces."""

from __future__ import annotations

import numpy as np
from astropy.io import fits

from awlineage import Database, TargetProcessor, ancestors, retract, select
from awlineage.blast_radius import affected
from awlineage.lineage import diff
from awlineage.retraction import RetractedCells
from targets.carried_rows import reaching
from targets.pipeline import BiasFrame, Source, SourceList, SourceListParameters
from targets.source_lists import SOURCES_HDU
from tests.retraction.hot_night import HOT


def _rows(source_list: SourceList) -> np.ndarray:
    with source_list.open_fits(memmap=False) as hdul:
        return np.array(hdul[SOURCES_HDU].data)


def _values(source: Source) -> tuple:
    return tuple(getattr(source, name) for name in Source.MEASURED)


def _sources(source_list: SourceList, db: Database) -> dict[int, Source]:
    return {s.number: s for s in select(Source.sourcelist == source_list, database=db)}


def test_rows_no_retracted_cell_reached_are_carried_byte_for_byte(built: Database) -> None:
    db = built
    (bias,) = select(BiasFrame, database=db).all()
    (old,) = select(SourceList, database=db).all()
    record = retract(bias, reason="hot column", region=RetractedCells.parse(HOT.fits_region()))
    named = {s.number for s in affected(db, record).of_class(Source)}
    old_rows = _rows(old)
    assert named and len(named) < len(old_rows)

    TargetProcessor("serial", database=db, progress=False).make(SourceList, retracted=True)
    (new,) = select(SourceList, database=db).newest().all()
    new_rows = _rows(new)
    kept = [n for n in range(len(old_rows)) if n not in named]
    new_bytes = [row.tobytes() for row in new_rows]
    assert [n for n in kept if old_rows[n].tobytes() not in new_bytes] == []
    assert new.carried_from == old.object_id and new.rows_carried == len(kept)
    assert new.rows_remeasured == len(new_rows) - len(kept) == new.nsources - len(kept)
    # carried rows first, in their order, every column the same bytes
    assert new_rows[:len(kept)].tobytes() == old_rows[kept].tobytes()
    with new.open_fits(memmap=False) as hdul:
        header = hdul[SOURCES_HDU].header
        assert (header["NCARRIED"], header["NREMEAS"]) == (len(kept), new.rows_remeasured)
        assert header["CARRYSHA"] == old.content_hash
    old_sources, new_sources = _sources(old, db), _sources(new, db)
    assert [_values(new_sources[i]) for i in range(len(kept))] == \
        [_values(old_sources[n]) for n in kept]
    # the named rows are all re-measured: none of their rows is still there byte for byte
    remeasured = {new_rows[i].tobytes() for i in range(len(kept), len(new_rows))}
    assert not any(old_rows[n].tobytes() in remeasured for n in named)

    (table,) = diff(old, new, database=db).tables
    assert len(table.identical) == len(kept)
    assert sorted({i for i, _ in table.changed} | set(table.only_a)) == sorted(named)

    # region lineage per row: the blast radius on the new version names its re-measured rows
    coadd_cells = next(a for a in affected(db, record).arrays
                       if a.obj.object_id == new.coadd.object_id and a.hdu == 0)
    reached_new = {s.number for s in affected(db, record).of_class(Source)
                   if s.sourcelist.object_id == new.object_id}
    assert reached_new == set(np.flatnonzero(reaching(new_rows,
                                                      coadd_cells.region.to_mask())))
    assert reached_new <= set(range(len(kept), len(new_rows)))
    chosen = select(Source.affected_by(record) & (Source.sourcelist == new), database=db).all()
    assert {s.number for s in chosen} == reached_new

    # the run's inputs: what the new coadd was made of, the previous list and its coadd; not
    # what the make looked up to decide (older versions, the retractions' other reach)
    made_of = {o.object_id for o in ancestors(new.coadd, database=db)} | \
        {new.coadd.object_id, new.process_params.object_id}
    extra = {o.object_id for o in new.process_run.inputs} - made_of
    assert extra == {old.object_id, old.coadd.object_id}


def test_without_carrying_the_whole_coadd_is_extracted_again(built: Database) -> None:
    db = built
    (bias,) = select(BiasFrame, database=db).all()
    (old,) = select(SourceList, database=db).all()
    record = retract(bias, reason="hot column", region=RetractedCells.parse(HOT.fits_region()))
    named = {s.number for s in affected(db, record).of_class(Source)}
    off = TargetProcessor("serial", database=db, progress=False,
                          parameters=(SourceListParameters(carry_rows=False),))
    off.make(SourceList, retracted=True)
    (new,) = select(SourceList, database=db).newest().all()
    assert new.object_id != old.object_id
    assert new.carried_from is None and new.rows_carried == 0
    assert new.rows_remeasured == new.nsources
    with new.open_fits(memmap=False) as hdul:
        assert "NCARRIED" not in hdul[SOURCES_HDU].header
    old_rows, new_rows = _rows(old), _rows(new)
    new_bytes = {row.tobytes() for row in new_rows}
    far_changed = [n for n in range(len(old_rows))
                   if n not in named and old_rows[n].tobytes() not in new_bytes]
    assert far_changed, "far rows kept their bytes without carrying: the test shows nothing"
    assert fits.getheader(new.retrieve(), SOURCES_HDU)["COADDSHA"] == new.coadd.content_hash
