"""The retracted cells of an array as a boolean mask: what a target's ``make`` reads to leave
out the cells of an input that were retracted by region (the input itself stays in use)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from awlineage.retraction._record import Retraction


def region_mask(records: Iterable[Retraction], shape: tuple[int, ...], hdu: int = 0
                ) -> np.ndarray:
    """The cells of HDU `hdu` that `records` retract, as a boolean array of `shape`.

    Parameters
    ----------
    records : iterable of Retraction
        Retractions in force of one object (``retractions_of([obj])[obj.object_id]``);
        whole-object retractions and those of other HDUs are left out.
    shape : tuple of int
        The array's shape (rows, columns last).
    hdu : int, optional
        The HDU whose cells are wanted.

    Returns
    -------
    numpy.ndarray
        True where a region retraction names the cell; all False when none does.

    Examples
    --------
    >>> from awlineage import DBObject, commit, connect, persistent, retract, retractions_of
    >>> from awlineage.retraction import region_mask
    >>> db = connect("sqlite:///doc.db")
    >>> class DocMaskedBias(DBObject):
    ...     chip = persistent("CCD name", str, "")
    >>> bias = DocMaskedBias(chip="ccd1")
    >>> bias.commit()
    >>> records = retractions_of([bias])  # nothing retracted yet
    >>> int(region_mask(records.get(bias.object_id, []), (4, 6)).sum())
    0
    """
    mask = np.zeros(shape, dtype=bool)
    for record in records:
        cells = record.region
        if cells is not None and cells.hdu == hdu:
            mask |= cells.mask(shape)
    return mask
