"""What the viewer answers when an object's file cannot be given: the object and the file
named, and the data server's URL without credentials (none in public mode, which hides where
the files are). A damaged file and a data server that fails are 502 (the viewer is a gateway
to the data server), a file the data server does not hold 404."""

from __future__ import annotations

from typing import Any

from awlineage.storage import shown_data_url
from webviewer._errors import NotFound, ViewerError
from webviewer._viewer import Viewer


def data_server_named(viewer: Viewer | None) -> str:
    """The viewer's data server for a message: ``the data server at URL`` (credentials
    left out), or ``the data server`` alone in public mode (or when no viewer is known)."""
    if viewer is None or viewer.public is not None:
        return "the data server"
    return f"the data server at {shown_data_url(viewer.session.data_url)}"


def describe(obj: Any) -> str:
    """An object for a message: its class and id."""
    return f"{type(obj).__name__} {obj.object_id}"


def file_failure(viewer: Viewer | None, obj: Any, exc: Exception) -> ViewerError | None:
    """The answer to `exc`, raised while reading `obj`'s file; None when it is not a data
    server's error (it is then the caller's to handle).

    - `dataserver.CorruptFileError`: 502 naming the object and the file, saying that its
      content does not match the SHA-256 recorded for it, with both hashes;
    - `dataserver.FileNotFoundOnServer`: 404 naming them;
    - any other `dataserver.DataServerError` (an unreachable or failing data server): 502
      naming them and the data server (its URL without credentials; not in public mode,
      nor when `viewer` is None: a request outside the pages).

    The JSON answer carries ``object_id``, ``file`` and ``kind`` (the error's class name).
    """
    from dataserver import CorruptFileError, DataServerError, FileNotFoundOnServer

    if not isinstance(exc, DataServerError):
        return None
    name = obj.filename
    detail = {"object_id": obj.object_id, "file": name, "kind": type(exc).__name__}
    where = data_server_named(viewer)
    if isinstance(exc, CorruptFileError):
        return ViewerError(
            f"the file {name!r} of {describe(obj)} is damaged on {where}: its content does "
            f"not match the SHA-256 recorded for it (recorded {exc.expected}, found "
            f"{exc.actual}); it is not sent", status=502, detail=detail)
    if isinstance(exc, FileNotFoundOnServer):
        return NotFound(f"the file {name!r} of {describe(obj)} is not on {where}",
                        detail=detail)
    return ViewerError(f"the file {name!r} of {describe(obj)} could not be read from "
                       f"{where}: {_reason(viewer, exc)}", status=502, detail=detail)


def server_failure(viewer: Viewer | None, exc: Exception) -> ViewerError | None:
    """The answer to a data server's error met outside `file_failure`'s callers (a
    cutout's, a gallery's read): 502 (404 for a missing file) naming the file when the
    error does and the data server as `data_server_named` does; None for other errors."""
    from dataserver import CorruptFileError, DataServerError, FileNotFoundOnServer

    if not isinstance(exc, DataServerError):
        return None
    name = getattr(exc, "name", None)
    what = f"the file {name!r}" if name else "a file"
    detail = {"file": name, "kind": type(exc).__name__}
    where = data_server_named(viewer)
    if isinstance(exc, CorruptFileError):
        return ViewerError(f"{what} is damaged on {where}: its content does not match the "
                           f"SHA-256 recorded for it (recorded {exc.expected}, found "
                           f"{exc.actual})", status=502, detail=detail)
    if isinstance(exc, FileNotFoundOnServer):
        return NotFound(f"{what} is not on {where}", detail=detail)
    return ViewerError(f"{what} could not be read from {where}: {_reason(viewer, exc)}",
                       status=502, detail=detail)


def _reason(viewer: Viewer | None, exc: Exception) -> str:
    """The error's own message with the data server's URL taken out (it is named beside it,
    without credentials); only the error's class when no viewer says which URL it is."""
    if viewer is None:
        return type(exc).__name__
    server = viewer.session.data_url
    # an HTTP data server names itself as shown_data_url does, an S3 one by its URL as given
    reason = str(exc).replace(shown_data_url(server), "").replace(server, "")
    return reason.replace("data server  ", "data server ")
