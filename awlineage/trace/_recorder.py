"""Recording one make(): the objects it reads and creates (through the object model's
observers) and its calls. One observer serves every thread; it hands each event to the
recorder of the run active in the event's context."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from awlineage.persistence import DBObject, add_observer, remove_observer
from awlineage.trace._calls import CallLog
from awlineage.trace._context import current_recorder
from awlineage.trace._process import Process
from awlineage.trace._run import ProcessRun
from awlineage.trace._warnings import WarningLog


class RunRecorder:
    """What one make() reads, creates and calls, and the warnings it raises.

    Parameters
    ----------
    target
        The object whose make() runs.
    run
        Its `ProcessRun`, filled in when the make ends.
    parent
        The recorder of the make that called this one, if any.
    """

    def __init__(self, target: Process, run: ProcessRun, parent: RunRecorder | None) -> None:
        self.target = target
        self.run = run
        self.parent = parent
        self.read_objects: dict[int, DBObject] = {}
        self.created_objects: dict[int, DBObject] = {}
        self.children: list[ProcessRun] = []
        self.stored_by_children: list[DBObject] = []
        """Objects that nested makes (which succeeded) stored files for: if this make
        fails, those it did not commit leave their files behind unless removed."""
        self.calls = CallLog()
        self.warnings = WarningLog()

    def created(self, obj: DBObject) -> None:
        """A persistent object was constructed during the make (records about the make,
        such as runs and region tables, say ``__run_output__ = False`` and are left out)."""
        if getattr(type(obj), "__run_output__", True):
            self.created_objects[id(obj)] = obj

    def read(self, objects: Iterable[DBObject]) -> None:
        """Objects were read (loaded by a query or reached through a link)."""
        known = self.read_objects
        for obj in objects:
            known.setdefault(id(obj), obj)

    def inputs(self, committed_only: bool) -> list[DBObject]:
        """Objects read, other than the target and what this make created, by object_id."""
        made = self.created_objects
        target = self.target
        found = [o for key, o in self.read_objects.items()
                 if key not in made and o is not target]
        if committed_only:
            found = [o for o in found if o.__dict__["_committed"]]
        found.sort(key=lambda o: o.__dict__["object_id"])
        return found

    def committed_outputs(self) -> list[DBObject]:
        """Objects created during the make and committed by it (with their own commit),
        by object_id: the outputs of a make that then failed."""
        found = [o for o in self.created_objects.values() if o.__dict__.get("_committed")]
        found.sort(key=lambda o: o.__dict__["object_id"])
        return found

    def outputs(self) -> list[DBObject]:
        """Objects created during the make that can be stored (a DataObject whose file was
        never stored is a temporary, not a product)."""
        products = []
        for obj in self.created_objects.values():
            try:
                obj.check_committable()
            except Exception:
                continue
            products.append(obj)
        return products


class _Dispatcher:
    """The one observer registered while any make runs in this process."""

    def created(self, obj: Any) -> None:
        recorder = current_recorder.get()
        if recorder is not None:
            recorder.created(obj)

    def read(self, objects: Iterable[Any]) -> None:
        recorder = current_recorder.get()
        if recorder is not None:
            recorder.read(objects)


_dispatcher = _Dispatcher()
_lock = threading.Lock()
_active = 0


def start_observing() -> None:
    """Register the dispatcher (counted: once per make running in this process)."""
    global _active
    with _lock:
        if _active == 0:
            add_observer(_dispatcher)
        _active += 1


def stop_observing() -> None:
    """Undo one `start_observing`; the last one removes the dispatcher."""
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            remove_observer(_dispatcher)
