"""Retraction: marking a stored object, or some cells of one of its arrays, as bad after the
fact, and finding everything that the bad data reached (its blast radius).

Objects stay immutable: a retraction is a record of its own (who, when, why, which cells),
and a later record can reinstate what an earlier one retracted.
"""

from awlineage.retraction._affected import affected
from awlineage.retraction._affected_answer import AffectedArray, AffectedRows, BlastRadius
from awlineage.retraction._affected_text import render_blast_radius
from awlineage.retraction._cells import RetractedCells, RetractedCellsError
from awlineage.retraction._record import (
    Retraction,
    RetractionError,
    reinstate,
    retract,
    retraction_history,
    retractions_of,
)

__all__ = ["AffectedArray", "AffectedRows", "BlastRadius", "RetractedCells",
           "RetractedCellsError", "Retraction", "RetractionError", "affected", "reinstate",
           "render_blast_radius", "retract", "retraction_history", "retractions_of"]
