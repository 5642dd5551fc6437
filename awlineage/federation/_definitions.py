"""Whether a bundle's objects fit this database's classes: every attribute they carry must be
declared here with the same kind and type, by the rule schema sync applies to a class's own
stored objects (`awlineage.database.changed_properties`), so that an import stores the
origin's values unchanged; a class here may add attributes (the copies read None for them,
as a class's older objects do for an attribute added since).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from awlineage.database import Database, changed_properties, definition_here, describe_property
from awlineage.errors import SchemaConflictError
from awlineage.federation._bundle import Bundle, BundleError
from awlineage.federation._records import ObjectRecord


def refuse_differing_classes(db: Database | None, bundle: Bundle,
                             records: Iterable[ObjectRecord]) -> None:
    """Refuse `records` of `bundle` when a class of theirs differs here, naming each class
    and each attribute that differs (before anything is written).

    Parameters
    ----------
    db : Database or None
        The database they would be stored in; None for one not made yet (``awl import
        bundle`` checks the classes of the process before it makes one).
    bundle : Bundle
        The bundle, whose class entries define the records' classes.
    records : Iterable of ObjectRecord
        The records to be stored (not those already here).

    Raises
    ------
    SchemaConflictError
        Naming every attribute the records carry that the class here lacks or declares with
        another kind or type (a link to another class).
    BundleError
        For a class entry whose definition is not a JSON object of property records.
    """
    carried: dict[str, set[str]] = {}
    for record in records:
        names = carried.setdefault(record.class_name, set())
        names.update(record.values, record.links, record.link_lists)
    problems = []
    for name in sorted(carried):
        entry = bundle.classes.get(name)
        if entry is None:
            continue  # refused by the import, naming the record
        theirs = _definition(entry, name, bundle)
        here = definition_here(db, name, str(entry.get("module", "")))
        if here is None:
            continue  # recorded here as the bundle defines it
        differences = [f"{attribute}: {describe_property(theirs[attribute])} in the bundle, "
                       f"{describe_property(here[attribute])} here"
                       for attribute in changed_properties(here, theirs)]
        differences += [f"{attribute}: {_described(theirs, attribute)} in the bundle, "
                        "missing here"
                        for attribute in sorted((set(theirs) | carried[name]) - set(here))]
        if differences:
            problems.append(f"{name} ({'; '.join(differences)})")
    if problems:
        raise SchemaConflictError(
            f"cannot import the bundle from {bundle.origin.describe()}: its objects do not fit "
            f"the class of the same name here: {', '.join(problems)}. An import stores the "
            "values as their origin stored them, and stored objects cannot change the kind "
            "or type of a property: import into a database whose class declares these "
            "attributes as the bundle's does (attributes only the class here has are fine), "
            "or give one of the classes another name or __namespace__; nothing was stored")


def _described(definition: dict[str, Any], attribute: str) -> str:
    if attribute in definition:
        return describe_property(definition[attribute])
    return "a value"  # carried by a record, though its class entry does not declare it


def _definition(entry: dict[str, Any], name: str, bundle: Bundle) -> dict[str, Any]:
    """The property records of a bundle's class entry."""
    definition = entry.get("definition")
    try:
        if isinstance(definition, str):
            definition = json.loads(definition)
        if not isinstance(definition, dict) or not all(
                isinstance(spec, dict) and "kind" in spec and "type" in spec
                for spec in definition.values()):
            raise TypeError
    except (TypeError, ValueError):
        raise BundleError(f"the bundle from {bundle.origin.describe()} garbles the "
                          f"definition of class {name}; nothing was stored") from None
    return definition
