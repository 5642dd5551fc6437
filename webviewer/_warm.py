"""Importing the stored classes' modules when the viewer starts, not on the first page that
shows one of their objects.

The viewer reads objects as instances of their real classes, imported from the modules the
class registry names. A pipeline's modules can take a second or more to import (the demo's
``targets`` pulls in scipy, dask and reproject), which the first page showing such an object
used to pay: 4.3 s for the first ``/obj/ID/sources`` after ``awl serve`` on a busy machine,
against 0.2 s for the next. `warm_up` imports them in a background thread as the app
starts, so a server that has been up a few seconds answers its first page as fast as its
hundredth; a request that needs a module still being imported waits for that import only.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import sys
import threading

from awlineage import Database

log = logging.getLogger("webviewer")


def modules_to_import(database: Database) -> list[str]:
    """The modules of the stored classes not imported yet (never a script's ``__main__``)."""
    names = {entry.module for entry in database.registered_classes().values()}
    return sorted(n for n in names if not n.startswith("__main__") and n not in sys.modules)


def warm_up(database: Database) -> threading.Thread | None:
    """Import the stored classes' modules in a daemon thread (None when there are none to
    import). A module that fails to import is left to the pages, which show its objects as
    stand-ins and say why."""
    modules = modules_to_import(database)
    if not modules:
        return None

    def run() -> None:
        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        log.debug("imported %d modules of stored classes", len(modules))

    thread = threading.Thread(target=run, name="awl-viewer-warm-up", daemon=True)
    thread.start()
    return thread
