"""What a failed make leaves behind: the files it stored for objects that will never be
committed (its target, and objects it created and did not commit) are removed from the data
server, unless a committed object refers to them, so a failure leaves no file that nothing
points at."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from awlineage.persistence import DBObject, current_files, current_store

UNSTORED = {"filename": "", "file_size": None, "content_hash": None}
"""A DataObject's file attributes before `store`, put back once its file is removed."""


def remove_files_of_failed_make(objects: Iterable[DBObject]) -> list[str]:
    """Remove the files that `objects` (uncommitted, of a make that raised) stored anew.

    A file that was already on the data server when it was stored (the same name and
    content, put there by another object) stays, as does one a committed object refers to.
    Failing to remove one is a warning: the make's own exception is what the caller sees.

    Parameters
    ----------
    objects : Iterable of DBObject
        The failed make's target and the objects it created.

    Returns
    -------
    list of str
        The names of the files removed.
    """
    written = [o for o in objects if not o.__dict__.get("_committed")
               and o.__dict__.get("_file_written") and o.__dict__.get("filename")]
    if not written:
        return []
    removed: list[str] = []
    try:
        from awlineage.storage import referenced_among

        names = list(dict.fromkeys(o.__dict__["filename"] for o in written))
        kept = referenced_among(current_store(), names)  # type: ignore[arg-type]
        server = getattr(current_files(), "server", None)
        for name in names:
            if name not in kept and server is not None:
                server.delete(name)
                removed.append(name)
    except Exception as failure:  # the make's exception must reach the caller
        warnings.warn(f"files stored by a failed make could not be removed: {failure} (awl "
                      "dataserver gc removes them later)", RuntimeWarning, stacklevel=4)
    for obj in written:
        if obj.__dict__["filename"] in removed:
            obj.__dict__.update(UNSTORED)
            obj.__dict__.pop("_stored_file", None)
            obj.__dict__.pop("_file_written", None)
    return removed
