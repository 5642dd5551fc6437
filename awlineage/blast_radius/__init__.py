"""The blast radius of bad data: everything a retracted object reached (its descendants), or
what some of its cells reached through region lineage, down to the rows of the source lists
made from them (`affected`, ``awl affected``); `affected_by` makes the answer a condition
for `select`.

It reads the lineage graph and region lineage, and takes a `Retraction` record for the object
and cells it names; records themselves are `awlineage.retraction`'s.
"""

from awlineage.blast_radius._affected import affected
from awlineage.blast_radius._affected_answer import AffectedArray, AffectedRows, BlastRadius
from awlineage.blast_radius._affected_by import affected_by
from awlineage.blast_radius._affected_text import render_blast_radius

__all__ = ["AffectedArray", "AffectedRows", "BlastRadius", "affected", "affected_by",
           "render_blast_radius"]
