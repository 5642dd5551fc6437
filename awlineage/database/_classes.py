"""Finding the Python class of stored objects: by qualified name or an unambiguous short name,
from the classes defined in this process, by importing the module the class registry names,
or else as a read-only stand-in rebuilt from the registry."""

from __future__ import annotations

import datetime
import importlib
import threading
from typing import TYPE_CHECKING, Any

from awlineage.database._sync import decode_default
from awlineage.errors import AmbiguousClassError, UnknownClassError
from awlineage.persistence import (
    DBObject,
    DBObjectMeta,
    Property,
    RecordedClass,
    ambiguity_message,
    build_stand_in,
    classes_named,
    guess_of,
    persistent,
    qualified_name,
    short_name,
)
from awlineage.spacetime import Footprint, Interval, skycoord_type

if TYPE_CHECKING:
    from awlineage.database._database import Database

BASIC_TYPES: dict[str, type] = {
    "int": int, "float": float, "str": str, "bool": bool, "datetime": datetime.datetime,
    "bytes": bytes, "Footprint": Footprint, "Interval": Interval,
}
"""Recorded type names of descriptors (SkyCoord is added when first needed: astropy is
imported only then)."""


def descriptor_type(name: str) -> type:
    """The descriptor type recorded as `name`."""
    if name == "SkyCoord":
        return skycoord_type()
    return BASIC_TYPES[name]

_failed_imports: set[str] = set()
_import_lock = threading.Lock()


class ClassFinder:
    """The classes of one database's stored objects, real where they can be imported and
    stand-ins otherwise (built once per database and kept)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._stand_ins: dict[str, type] = {}
        self._lock = threading.RLock()

    def class_named(self, name: str) -> type:
        """The class called `name`: a qualified name, or a short one that only one class
        (defined here or stored in the database) has; a class defined in the running script
        wins over classes of that short name known only to the database. A database open
        read-only takes a short name that one stored class has as that class.

        Raises
        ------
        UnknownClassError
            When neither this process nor the database knows the name.
        AmbiguousClassError
            For a short name of several classes, listing their qualified names.
        """
        if "." in name:
            return self._qualified(name)
        stored = {q for q in self.db.registered_classes() if short_name(q) == name}
        if self.db.read_only and len(stored) == 1:  # a reader can only mean what is stored
            return self._qualified(stored.pop())
        here = classes_named(name)
        candidates = {qualified_name(c) for c in here} | stored
        if len(candidates) == 1:
            return self._qualified(candidates.pop())
        scripts = [c for c in here if c.__module__ == "__main__"]
        if len(scripts) == 1:
            return scripts[0]
        if not candidates:
            guess = self.guess(name)
            unknown = UnknownClassError(f"unknown persistent class {name!r}{guess}: neither "
                                        "this process nor the database knows a class of that "
                                        "name")
            unknown.guess = guess
            raise unknown
        raise AmbiguousClassError(ambiguity_message(name, sorted(candidates)))

    def guess(self, name: str) -> str:
        """`` (did you mean A or B?)`` naming the known classes (stored, or defined in this
        process) whose short names look like `name`'s, a typo's likely meaning; else ``""``.
        """
        return guess_of(name, self.db.registered_classes())

    def _attribute_hint(self, name: str) -> str:
        """`` (Star.flux is an attribute: ...)`` when `name` is a known class's attribute
        written where a class (or a whole query) was wanted; else ``""``."""
        owner, _, attribute = name.rpartition(".")
        try:  # the owner's own lookup gives no hint: a long dotted name is one step, not many
            cls = self._qualified(owner, hint=False) if "." in owner else self.class_named(owner)
        except (UnknownClassError, AmbiguousClassError):
            return ""
        prop = getattr(cls, "_properties", {}).get(attribute)
        if prop is None:
            return ""
        example = "== true" if prop.type is bool else "== ..."
        return (f" ({name} is an attribute of {cls.__name__}, not a class: a query is a "
                f"condition, such as {name} {example})")

    def _qualified(self, name: str, hint: bool = True) -> type:
        cls = DBObjectMeta.registry.get(name)
        if cls is not None:
            return cls
        with self._lock:
            if name in self._stand_ins:
                return self._stand_ins[name]
            records = self.db.registered_classes()
            record = records.get(name)
            if record is None:
                said = self._attribute_hint(name) if hint else ""
                unknown = UnknownClassError(f"unknown persistent class {name!r}{said}: "
                                            "neither this process nor the database knows it")
                unknown.guess = said
                raise unknown
            imported = _import_class(record)
            if imported is not None:
                return imported
            return self._stand_in(record, records, building=set())

    def _stand_in(self, record: RecordedClass, records: dict[str, RecordedClass],
                  building: set[str]) -> type:
        """Build the stand-in of `record`, and those of its bases and link types first
        (`records`: the registry, read once for the whole build)."""
        if record.name in self._stand_ins:
            return self._stand_ins[record.name]
        building = building | {record.name}
        bases = _direct_bases([self._for_reference(b, records, building)
                               for b in record.bases])
        inherited = {attr: prop for b in reversed(bases)
                     for attr, prop in b._properties.items()}  # type: ignore[attr-defined]
        properties = {}
        for attr, spec in record.definition.items():
            prop = self._property(spec, records, building)
            if _declares_more(prop, inherited.get(attr)):
                properties[attr] = prop
        cls = build_stand_in(record, tuple(bases), properties)
        self._stand_ins[record.name] = cls
        return cls

    def _for_reference(self, name: str, records: dict[str, RecordedClass],
                       building: set[str]) -> type:
        """A class named as a base or a link type: real, stand-in, or (inside a cycle of
        links being built) `DBObject`."""
        cls = _framework_class(name) or DBObjectMeta.registry.get(name)
        if cls is not None:
            return cls
        if name in self._stand_ins:
            return self._stand_ins[name]
        record = records.get(name)
        if record is None or name in building:
            return DBObject
        return _import_class(record) or self._stand_in(record, records, building)

    def _property(self, spec: dict[str, Any], records: dict[str, RecordedClass],
                  building: set[str]) -> Property:
        kind, doc = spec["kind"], spec.get("doc", "")
        if kind == "self-link":
            return persistent(doc)
        if kind in ("descriptor", "descriptor list"):
            value_type = descriptor_type(spec["type"])
            default = decode_default(spec.get("default", [] if kind != "descriptor" else None))
            return persistent(doc, value_type, default, index=bool(spec.get("index")))
        target = self._for_reference(spec["type"], records, building)
        return persistent(doc, target, [] if kind == "link list" else None)


def _framework_class(name: str) -> type | None:
    """The class `name` when awlineage itself defines it (``awlineage.Process``), importing the
    framework's packages first if need be: they are imported on first use, and an abstract base
    such as `Process` has no registry record to import it from."""
    if not name.startswith("awlineage."):
        return None
    if name not in DBObjectMeta.registry:
        from awlineage.database._ddl import framework_classes

        framework_classes()
    return DBObjectMeta.registry.get(name)


def _import_class(record: RecordedClass) -> type | None:
    """The real class of `record` when its module imports here (once tried per process);
    never a script, which importing would run."""
    module = record.module
    if module.startswith("__main__"):
        return None
    with _import_lock:
        if module not in _failed_imports:
            try:
                importlib.import_module(module)
            except Exception:  # any failure to import means: read it from the registry
                _failed_imports.add(module)
    return DBObjectMeta.registry.get(record.name)


def _declares_more(prop: Property, inherited: Property | None) -> bool:
    """Whether a recorded property must be declared on the stand-in: one its bases lack, or
    a link the class narrowed to a subclass (a process target's parameters class)."""
    if inherited is None:
        return True
    return (prop.kind is inherited.kind and prop.type is not inherited.type
            and isinstance(prop.type, type) and isinstance(inherited.type, type)
            and issubclass(prop.type, inherited.type))


def _direct_bases(bases: list[type]) -> list[type]:
    """Of the recorded persistent bases (the whole ancestry), those no other one derives
    from, in order; `DBObject` when there are none."""
    direct = [b for b in bases if not any(o is not b and issubclass(o, b) for o in bases)]
    return direct or [DBObject]

