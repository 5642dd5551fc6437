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
    """Remove the files that `objects` (uncommitted, of a make that raised) stored anew
    under a name of their own.

    Only a name holding the object's id (its canonical name, or a name made unique with
    it) is removed: another writer may have stored the same content under a shared name
    (the base name of a path) and be about to commit it, so such a file is left to ``awl
    dataserver gc`` and its grace period, as is one a committed object refers to. Failing
    to remove one is a warning: the make's own exception is what the caller sees.

    Parameters
    ----------
    objects : Iterable of DBObject
        The failed make's target, the objects it created, and those its successful nested
        makes stored and it did not commit.

    Returns
    -------
    list of str
        The names of the files removed.
    """
    written = [o for o in objects if not o.__dict__.get("_committed")
               and o.__dict__.get("_file_written")
               and str(o.__dict__["object_id"]) in (o.__dict__.get("filename") or "")]
    if not written:
        return []
    removed: list[str] = []
    try:
        from awlineage.storage import referenced_among

        names = list(dict.fromkeys(o.__dict__["filename"] for o in written))
        kept = referenced_among(current_store(), names)  # type: ignore[arg-type]
        server = getattr(current_files(), "server", None)
    except Exception as failure:  # the make's exception must reach the caller
        _warn(failure)
        return []
    for name in names:
        if name in kept or server is None:
            continue
        try:
            server.delete(name)
        except Exception as failure:  # one that cannot go does not keep the others
            _warn(failure)
            continue
        removed.append(name)
    for obj in written:
        if obj.__dict__["filename"] in removed:
            obj.__dict__.update(UNSTORED)
            obj.__dict__.pop("_stored_file", None)
            obj.__dict__.pop("_file_written", None)
    return removed


def _warn(failure: Exception) -> None:
    warnings.warn(f"a file stored by a failed make could not be removed: {failure} (awl "
                  "dataserver gc removes it later)", RuntimeWarning, stacklevel=5)
