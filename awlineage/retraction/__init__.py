"""Retraction: marking a stored object, or some cells of one of its arrays, as bad after the
fact (what the bad data reached is `awlineage.blast_radius`'s).

Objects stay immutable: a retraction is a record of its own (who, when, why, which cells),
and a later record can reinstate what an earlier one retracted.
"""

from awlineage.retraction._cells import RetractedCells, RetractedCellsError
from awlineage.retraction._mask import region_mask
from awlineage.retraction._record import (
    Retraction,
    RetractionError,
    in_force,
    reinstate,
    retract,
    retraction_history,
    retractions_of,
    standing,
)

__all__ = ["RetractedCells", "RetractedCellsError", "Retraction", "RetractionError", "in_force",
           "region_mask", "reinstate",
           "retract", "retraction_history", "retractions_of", "standing"]
