"""A region retraction through the target processor, on both databases: the synthetic night
whose ccd1 master bias has a hot column is built; the column is retracted. The plan makes red
exactly what region lineage says the column reached (naming the retraction, also in ``awl
make --affected-by ID --dry-run``), ``make --retracted`` remakes those and nothing else, the
remade reduced frames give the column weight 0 and mask it while every other pixel stays
bit-identical, the remade coadd differs from the old one only inside the column's reach, and
the source rows the blast radius named all change. Reinstating the column makes the same
products red again."""

from __future__ import annotations

import numpy as np

from awlineage import (
    Database,
    StaleCauseCategory,
    TargetProcessor,
    reinstate,
    retract,
    select,
)
from awlineage.blast_radius import affected
from awlineage.persistence import DBObject
from awlineage.processing import State
from awlineage.retraction import RetractedCells
from targets.images import read_hdu
from targets.pipeline import (
    BiasFrame,
    CoaddedRegriddedFrame,
    DomeFlatFrame,
    ReducedScienceFrame,
    RegriddedFrame,
    Source,
    SourceList,
)
from tests.commands import run_awl
from tests.retraction.hot_night import HOT

REACHED = {DomeFlatFrame: 1, ReducedScienceFrame: 2, RegriddedFrame: 2,
           CoaddedRegriddedFrame: 1, SourceList: 1}
"""What the column reaches in NIGHT (one chip, two dithers): the flat is made with the bias."""


def _serial(db: Database) -> TargetProcessor:
    return TargetProcessor("serial", database=db, progress=False)


def _newest(cls: type, db: Database) -> list[DBObject]:
    return sorted(select(cls, database=db).newest().all(),  # type: ignore[attr-defined]
                  key=lambda o: o.object_id)


def _red_counts(db: Database, **kwargs) -> dict[type, int]:
    plan = _serial(db).plan(SourceList, **kwargs)
    counts: dict[type, int] = {}
    for node in plan.nodes:
        if node.state is State.RED:
            counts[node.cls] = counts.get(node.cls, 0) + 1
    return counts


def test_the_column_s_products_are_remade_and_only_its_pixels_change(built: Database) -> None:
    db = built
    (bias,) = select(BiasFrame, database=db).all()
    before = {cls: _newest(cls, db) for cls in REACHED}
    old_coadd = before[CoaddedRegriddedFrame][0]
    dry_run = ("make", "SourceList", "--affected-by", str(bias.object_id), "--import",
               "targets.pipeline", "--dry-run")
    done = run_awl(db, *dry_run)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert f"{bias.object_id} is neither a retraction in force nor an object retracted" \
        in done.stderr

    record = retract(bias, reason="hot column", region=RetractedCells.parse(HOT.fits_region()))
    done = run_awl(db, *dry_run)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"because bias: BiasFrame {bias.object_id} (HDU 0, cells" in done.stdout
    assert "because reads retracted cells: BiasFrame" in done.stdout
    answer = affected(db, record)
    hit_rows = {s.number for s in answer.of_class(Source)}
    (coadd_reach,) = [a for a in answer.arrays if a.obj.object_id == old_coadd.object_id
                      and a.hdu == 0]
    assert hit_rows and bias.object_id not in answer.ids()
    chosen = select(Source.affected_by(record), database=db).all()
    assert sorted(s.object_id for s in chosen) == sorted(answer.ids(Source))

    assert _red_counts(db) == REACHED
    plan = _serial(db).plan(SourceList, retracted=record.object_id)
    reduced = [n for n in plan.nodes if n.cls is ReducedScienceFrame]
    for node in reduced:
        (cause,) = [c for c in node.reasons if c.category is StaleCauseCategory.RETRACTED]
        assert cause.dependency == "bias" and cause.retraction == record.object_id
        assert cause.reason.startswith(f"bias: BiasFrame {bias.object_id} (HDU 0, cells "
                                       f"{HOT.column + 1}:{HOT.column + 1},*) was retracted")

    report = _serial(db).make(SourceList, retracted=True)
    assert report.made == sum(REACHED.values()) and not report.failures()
    assert _red_counts(db) == {}

    for old, new in zip(before[ReducedScienceFrame], _newest(ReducedScienceFrame, db),
                        strict=True):
        assert new.object_id != old.object_id and new.bias.object_id == bias.object_id
        assert np.array_equal(read_hdu(old)[0], read_hdu(new)[0])
        old_weight, new_weight = read_hdu(old, "WEIGHT")[0], read_hdu(new, "WEIGHT")[0]
        column = np.zeros(old_weight.shape, dtype=bool)
        column[:, HOT.column] = True
        assert (new_weight[column] == 0).all() and (old_weight[column] > 0).any()
        assert np.array_equal(old_weight[~column], new_weight[~column])
        assert read_hdu(new, "MASK")[0].astype(bool)[column].all()
        assert any(note.startswith(f"{column.sum()} pixels left out (weight 0, masked)")
                   for note in new.notes)

    (new_coadd,) = _newest(CoaddedRegriddedFrame, db)
    old_pixels, new_pixels = read_hdu(old_coadd)[0], read_hdu(new_coadd)[0]
    changed = ~((old_pixels == new_pixels) | (np.isnan(old_pixels) & np.isnan(new_pixels)))
    reach = coadd_reach.region.to_mask()
    assert changed.any() and not (changed & ~reach).any()

    (old_list,) = before[SourceList]
    (new_list,) = _newest(SourceList, db)
    old_rows = {s.number: s for s in select(Source.sourcelist == old_list, database=db)}
    new_rows = {s.number: s for s in select(Source.sourcelist == new_list, database=db)}
    for number in hit_rows:
        assert number not in new_rows or new_rows[number].flux != old_rows[number].flux

    # reinstated, the column is used again: what left it out is made again
    reinstate(record, reason="the column was fine after all")
    plan = _serial(db).plan(SourceList, retracted=True)
    reduced = [n for n in plan.nodes if n.cls is ReducedScienceFrame]
    assert len(reduced) == 2 and all(n.state is State.RED for n in reduced)
    assert all("(its cells are used again)" in str(n.reasons[0]) for n in reduced)
    _serial(db).make(SourceList, retracted=True)
    for frame in _newest(ReducedScienceFrame, db):
        assert (read_hdu(frame, "WEIGHT")[0][:, HOT.column] > 0).any()
    assert _red_counts(db) == {}
