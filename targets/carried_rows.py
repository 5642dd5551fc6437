"""Row-level remakes of a source list after a region retraction: the previous version's rows
whose lineage boxes do not reach a cell the retraction changed in the coadd are carried byte for
byte, and only the rows that do are taken from a fresh extraction of the new coadd.

Carrying happens only when the data say it is sound: a previous version of the same list
(object_name, filter) exists, made by today's code with the same extraction parameters, from a
coadd whose data and weight equal the new coadd's in every cell outside those that region
retractions in force reach in the two coadds (`awlineage.blast_radius.affected`). Otherwise the
whole coadd is extracted again, as it is when carrying is switched off
(``SourceListParameters.carry_rows``).

Carried rows keep the image-wide quantities of the version they came from (the background map
under them, the empty-aperture noise factor of their errors, the aperture correction in their
``aperture_correction`` column); the list's own ``background_*`` and ``aperture_correction``
attributes and header keywords are those of the fresh extraction.

Row order: the carried rows first, in their previous order, then the re-measured rows in the
fresh extraction's order; so ``awl diff`` pairs every carried row with its equal previous row,
and shows the re-measured ones as changed, removed or added.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce

import numpy as np
from astropy.io import fits

from awlineage import DataObject, DBObject, affected, ancestors, retractions_of, select
from awlineage.persistence import Expression
from awlineage.trace import unrecorded
from targets.extraction import SOURCE_DTYPE, ExtractionParameters, source_boxes
from targets.images import read_hdus
from targets.parameters import stage_parameters

SOURCES_HDU = 1
"""The FITS extension of a source list's table (as `targets.source_lists.SOURCES_HDU`)."""
SAME_SOURCE = 2.0
"""How far apart [pixel] (in x and in y) a previous and a fresh row may lie and be taken for
one source (the distance ``awl diff`` pairs changed rows within)."""


@dataclass(frozen=True)
class Carry:
    """What a remake may carry: the previous version, its rows, and the cells of the coadd
    (one grid for both coadds) that region retractions in force reach."""

    previous: DataObject
    rows: np.ndarray
    reached: np.ndarray


@dataclass(frozen=True)
class MergedRows:
    """The rows of the remade list (carried first, then re-measured) and how many of each."""

    rows: np.ndarray
    carried: int
    remeasured: int


def carry_from(source_list: DBObject, coadd: DataObject, shape: tuple[int, ...]
               ) -> Carry | None:
    """The previous version of `source_list` and the coadd cells retractions reached, when its
    unreached rows may be carried into a list made from `coadd`; None when the whole coadd must
    be extracted again (no previous version, other code or parameters, no region retraction
    reaching the coadds, or coadd cells changed outside the cells reached)."""
    with unrecorded():  # looking up versions and lineage: no input of the make
        found = previous_version(source_list)
        if found is None or not _same_making(found, source_list):
            return None
        if found.coadd is None:  # type: ignore[attr-defined]
            return None
        reached = reached_cells([found.coadd, coadd], shape)  # type: ignore[attr-defined]
    if reached is None or not reached.any():
        return None
    # what the carried rows come from is an input of the make: read again, recorded
    previous = select(type(source_list).object_id == found.object_id).first()
    if not isinstance(previous, DataObject):  # removed since it was looked up
        return None
    old_coadd = previous.coadd  # type: ignore[attr-defined]
    if not _equal_outside(old_coadd, coadd, reached):
        return None
    rows = _previous_rows(previous)
    if rows is None:
        return None
    return Carry(previous, rows, reached)


def previous_version(source_list: DBObject) -> DataObject | None:
    """The newest stored version of the list with the same identity, other than itself."""
    cls = type(source_list)
    terms: list[Expression] = [getattr(cls, name) == getattr(source_list, name)
                               for name in cls.identity]
    condition = reduce(operator.and_, terms)
    # every version, not `newest()`: the list being made may already be stored as the newest
    found = [o for o in select(condition, cls).all()
             if o is not source_list and o.object_id != source_list.object_id]
    return max(found, key=lambda o: o.version) if found else None  # type: ignore[return-value]


def _same_making(previous: DBObject, source_list: DBObject) -> bool:
    """Whether `previous` was made by today's code of the class with the same extraction."""
    run = previous.process_run  # type: ignore[attr-defined]
    today = type(source_list).class_code_version()
    if run is None or run.code_version != today:
        return False
    return stage_parameters(previous.process_params,  # type: ignore[attr-defined]
                            ExtractionParameters) == \
        stage_parameters(source_list.process_params,  # type: ignore[attr-defined]
                         ExtractionParameters)


def reached_cells(coadds: list[DataObject], shape: tuple[int, ...]) -> np.ndarray | None:
    """The cells of the coadds' grid (HDU 0) that the region retractions in force on their
    ancestors reach, in either coadd; None when no region retraction is in force there."""
    wanted = {c.object_id for c in coadds}
    lineage = {o.object_id for c in coadds for o in ancestors(c, follow_remote=False)}
    records = [r for found in retractions_of(lineage).values() for r in found if not r.whole]
    if not records:
        return None
    reached = np.zeros(shape, dtype=bool)
    for record in records:
        for array in affected(None, record).arrays:
            if array.obj.object_id in wanted and array.hdu == 0:
                reached |= array.region.to_mask()
    return reached


def _equal_outside(old: DataObject, new: DataObject, reached: np.ndarray) -> bool:
    """Whether the two coadds' data and weight are equal (NaN equal to NaN) outside
    `reached`, with the same WCS and unit."""
    (old_data, old_header), (old_weight, _) = read_hdus(old, (0, "WEIGHT"))
    (new_data, new_header), (new_weight, _) = read_hdus(new, (0, "WEIGHT"))
    if old_data.shape != reached.shape or new_data.shape != reached.shape:
        return False
    for key in ("BUNIT", "CTYPE1", "CTYPE2", "CRVAL1", "CRVAL2", "CRPIX1", "CRPIX2",
                "CD1_1", "CD1_2", "CD2_1", "CD2_2", "CDELT1", "CDELT2"):
        if old_header.get(key) != new_header.get(key):
            return False
    outside = ~reached
    return all(np.array_equal(a[outside], b[outside], equal_nan=True)
               for a, b in ((old_data, new_data), (old_weight, new_weight)))


def _previous_rows(previous: DataObject) -> np.ndarray | None:
    """The previous version's SOURCES rows as `SOURCE_DTYPE`; None when its table has other
    columns (made by a code whose rows this one would not write)."""
    with previous.open_fits(memmap=False) as hdul:
        data = hdul[SOURCES_HDU].data
        names = tuple(hdul[SOURCES_HDU].columns.names)
        if names != SOURCE_DTYPE.names:
            return None
        if data is None:
            return np.zeros(0, dtype=SOURCE_DTYPE)
        return np.array(data).astype(SOURCE_DTYPE)


def reaching(rows: np.ndarray, reached: np.ndarray) -> np.ndarray:
    """Which rows' lineage boxes (`source_boxes`) hold a cell of `reached`."""
    if not len(rows):
        return np.zeros(0, dtype=bool)
    total = np.zeros((reached.shape[0] + 1, reached.shape[1] + 1), dtype=np.int64)
    total[1:, 1:] = reached.astype(np.int64).cumsum(0).cumsum(1)
    boxes = source_boxes(rows)
    y0 = np.clip(boxes[:, 0], 0, reached.shape[0] - 1)
    x0 = np.clip(boxes[:, 1], 0, reached.shape[1] - 1)
    y1 = np.clip(boxes[:, 2], 0, reached.shape[0] - 1) + 1
    x1 = np.clip(boxes[:, 3], 0, reached.shape[1] - 1) + 1
    return (total[y1, x1] - total[y0, x1] - total[y1, x0] + total[y0, x0]) > 0


def _near(rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Which rows lie within `SAME_SOURCE` pixels (in x and in y) of one of `others`."""
    if not len(rows) or not len(others):
        return np.zeros(len(rows), dtype=bool)
    close = (np.abs(rows["x"][:, None] - others["x"][None, :]) <= SAME_SOURCE) & \
        (np.abs(rows["y"][:, None] - others["y"][None, :]) <= SAME_SOURCE)
    return close.any(axis=1)


def merge_rows(previous: np.ndarray, fresh: np.ndarray, reached: np.ndarray) -> MergedRows:
    """The remade list's rows: the `previous` rows whose boxes reach no cell of `reached`, in
    their order, then the `fresh` rows whose boxes do, in theirs.

    A source whose box grew or shrank across the edge of the reached cells must not appear
    twice nor vanish, so the two sets are closed over each other: a fresh row within
    `SAME_SOURCE` of a dropped previous row is taken, and a previous row within `SAME_SOURCE`
    of a taken fresh row is dropped, until neither changes.
    """
    dropped, taken = reaching(previous, reached), reaching(fresh, reached)
    while True:
        more_taken = taken | _near(fresh, previous[dropped])
        more_dropped = dropped | _near(previous, fresh[more_taken])
        if (more_taken == taken).all() and (more_dropped == dropped).all():
            break
        taken, dropped = more_taken, more_dropped
    rows = np.concatenate([previous[~dropped], fresh[taken]]).astype(SOURCE_DTYPE)
    return MergedRows(rows, int((~dropped).sum()), int(taken.sum()))


def record_carry(header: fits.Header, carry: Carry | None, merged: MergedRows | None) -> None:
    """Say on the SOURCES table's header which version rows were carried from and how many
    (by the previous file's content, so the same inputs give the same bytes)."""
    if carry is None or merged is None:
        return
    header["NCARRIED"] = (merged.carried, "rows carried from a previous version")
    header["NREMEAS"] = (merged.remeasured, "rows re-measured (reached retracted cells)")
    header["CARRYSHA"] = carry.previous.content_hash  # no room left for a comment
    header.add_comment("CARRYSHA: SHA-256 of the source list the carried rows are from")
