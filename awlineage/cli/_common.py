"""What several commands share: importing the modules of stored classes, printing objects."""

from __future__ import annotations

import datetime
import importlib
import sys
from collections.abc import Sequence
from typing import TextIO

from awlineage.database import Database
from awlineage.persistence import DBObject, DBObjectMeta


def import_modules(names: Sequence[str]) -> None:
    """Import modules named on the command line (``--import``)."""
    for name in names:
        importlib.import_module(name)


def import_registered_modules(db: Database) -> list[str]:
    """Import the modules that defined the classes stored in `db`; return those that failed."""
    failed = []
    for entry in db.registered_classes().values():
        if entry.name in DBObjectMeta.registry or entry.module.startswith("__main__"):
            continue
        try:
            importlib.import_module(entry.module)
        except ImportError:
            failed.append(entry.module)
    return failed


def format_value(value: object, width: int = 40) -> str:
    """A short, readable form of an attribute value."""
    if isinstance(value, DBObject):
        return f"<{type(value).__name__} {value.object_id}>"
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def print_objects(objects: Sequence[DBObject], out: TextIO = sys.stdout) -> None:
    """Print objects as a table: id, class, then each descriptor."""
    for obj in objects:
        values = [
            f"{name}={format_value(obj.__dict__.get(name))}"
            for name, prop in type(obj)._properties.items()  # type: ignore[attr-defined]
            if not prop.builtin and not (prop.kind.is_link or prop.kind.is_list)
        ]
        print(f"{obj.object_id}  {type(obj).__name__} v{obj.version}  {'  '.join(values)}",
              file=out)
