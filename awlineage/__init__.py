"""awlineage: persistent Python classes for scientific pipelines, with lineage.

Everything a script needs is importable from here::

    from awlineage import DBObject, persistent, select, connect

The names are imported when first used (`awlineage.lazy`), so that ``import awlineage`` and
``awl --help`` stay quick; ``import awlineage.persistence`` and the rest work as always.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from awlineage.errors import (
    AwlError,
    ConfigurationError,
    DuplicateObjectError,
    ImmutableObjectError,
    MissingExtraError,
    NotConnectedError,
    ObjectInUseError,
    ObjectNotFoundError,
    PersistentTypeError,
    PersistentValueError,
    PropertyDefinitionError,
    QueryError,
    QuerySyntaxError,
    ReadOnlyDatabaseError,
    SchemaConflictError,
    SkyRegionError,
    UnknownAttributeError,
    UnknownClassError,
)
from awlineage.lazy import lazy_attributes

if TYPE_CHECKING:
    from collections.abc import Sequence

    from awlineage.blast_radius import affected, affected_by
    from awlineage.database import Database, connect, current_database
    from awlineage.federation import (
        Bundle,
        BundleError,
        RemotePointer,
        export_bundle,
        import_bundle,
        read_bundle,
    )
    from awlineage.lineage import (
        ancestors,
        descendants,
        diff,
        get_dependencies,
        get_inverse_properties,
        get_onthefly_dependencies,
        info,
        openlineage_events,
        prov_json,
    )
    from awlineage.persistence import (
        DataObject,
        DataObjectError,
        DBObject,
        DBObjectMeta,
        get_persistent_properties,
        persistent,
    )
    from awlineage.persistence import Path as AttributePath
    from awlineage.processing import (
        Needs,
        OnePer,
        OnePerGroup,
        StaleCause,
        StaleCauseCategory,
        TargetOutcome,
        TargetProcessor,
        closest,
        newest,
    )
    from awlineage.query import Query, parse_query, select
    from awlineage.regions import (
        ArrayRef,
        Boxes,
        Operator,
        Region,
        RegionCapture,
        RegionLineage,
        RegionTable,
        Shapes,
        backward,
        capture_regions,
        elementwise,
        elementwise_with_globals,
        flagged_with_globals,
        forward,
        global_summary,
        payload_boxes,
        reduce,
        stack,
    )
    from awlineage.retraction import (
        Retraction,
        region_mask,
        reinstate,
        retract,
        retractions_of,
    )
    from awlineage.spacetime import (
        Box,
        Circle,
        Footprint,
        Interval,
        Polygon,
        SkyRegion,
        footprint_from_wcs,
    )
    from awlineage.storage import Session, current_session, use_data_server
    from awlineage.trace import (
        Process,
        ProcessParameters,
        ProcessRun,
        RunStatus,
        current_run,
        traced,
    )

_WHERE = {  # the module of each public name not defined here
    "ancestors": "awlineage.lineage",
    "ArrayRef": "awlineage.regions",
    "AttributePath": "awlineage.persistence:Path",
    "backward": "awlineage.regions",
    "Box": "awlineage.spacetime",
    "Boxes": "awlineage.regions",
    "Bundle": "awlineage.federation",
    "BundleError": "awlineage.federation",
    "capture_regions": "awlineage.regions",
    "Circle": "awlineage.spacetime",
    "closest": "awlineage.processing",
    "connect": "awlineage.database",
    "current_database": "awlineage.database",
    "current_run": "awlineage.trace",
    "current_session": "awlineage.storage",
    "Database": "awlineage.database",
    "DataObject": "awlineage.persistence",
    "DataObjectError": "awlineage.persistence",
    "DBObject": "awlineage.persistence",
    "DBObjectMeta": "awlineage.persistence",
    "descendants": "awlineage.lineage",
    "diff": "awlineage.lineage",
    "elementwise": "awlineage.regions",
    "elementwise_with_globals": "awlineage.regions",
    "export_bundle": "awlineage.federation",
    "flagged_with_globals": "awlineage.regions",
    "Footprint": "awlineage.spacetime",
    "footprint_from_wcs": "awlineage.spacetime",
    "forward": "awlineage.regions",
    "get_dependencies": "awlineage.lineage",
    "get_inverse_properties": "awlineage.lineage",
    "get_onthefly_dependencies": "awlineage.lineage",
    "get_persistent_properties": "awlineage.persistence",
    "global_summary": "awlineage.regions",
    "import_bundle": "awlineage.federation",
    "info": "awlineage.lineage",
    "Interval": "awlineage.spacetime",
    "Needs": "awlineage.processing",
    "newest": "awlineage.processing",
    "OnePer": "awlineage.processing",
    "OnePerGroup": "awlineage.processing",
    "openlineage_events": "awlineage.lineage",
    "Operator": "awlineage.regions",
    "parse_query": "awlineage.query",
    "payload_boxes": "awlineage.regions",
    "persistent": "awlineage.persistence",
    "Polygon": "awlineage.spacetime",
    "Process": "awlineage.trace",
    "ProcessParameters": "awlineage.trace",
    "ProcessRun": "awlineage.trace",
    "prov_json": "awlineage.lineage",
    "Query": "awlineage.query",
    "read_bundle": "awlineage.federation",
    "reduce": "awlineage.regions",
    "Region": "awlineage.regions",
    "RegionCapture": "awlineage.regions",
    "RegionLineage": "awlineage.regions",
    "RegionTable": "awlineage.regions",
    "RemotePointer": "awlineage.federation",
    "Retraction": "awlineage.retraction",
    "affected": "awlineage.blast_radius",
    "affected_by": "awlineage.blast_radius",
    "region_mask": "awlineage.retraction",
    "reinstate": "awlineage.retraction",
    "retract": "awlineage.retraction",
    "retractions_of": "awlineage.retraction",
    "RunStatus": "awlineage.trace",
    "select": "awlineage.query",
    "Session": "awlineage.storage",
    "Shapes": "awlineage.regions",
    "SkyRegion": "awlineage.spacetime",
    "stack": "awlineage.regions",
    "StaleCause": "awlineage.processing",
    "StaleCauseCategory": "awlineage.processing",
    "TargetOutcome": "awlineage.processing",
    "TargetProcessor": "awlineage.processing",
    "traced": "awlineage.trace",
    "use_data_server": "awlineage.storage",
}
"""Where each public name is defined (`lazy_attributes`)."""

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)


def commit(objects: Sequence[DBObject]) -> None:
    """Commit many objects (and what they link to) in one transaction.

    Either all of them are stored or, when one is refused, none is.

    Parameters
    ----------
    objects : sequence of DBObject
        Uncommitted objects; each is written once even if several link to it.

    Raises
    ------
    NotConnectedError
        When no database is connected and no session is active.
    DuplicateObjectError
        When one of the objects, or another with its object_id, is already stored.
    ReadOnlyDatabaseError
        When the current database was opened read-only.

    Examples
    --------
    >>> from awlineage import DBObject, commit, connect, persistent, select
    >>> class Nebula(DBObject):
    ...     name = persistent("Catalogue name", str, "")
    ...     parent = persistent("The nebula this one is part of")
    >>> db = connect("sqlite:///doc.db")
    >>> orion = Nebula(name="M42")
    >>> commit([orion, Nebula(name="M43", parent=orion), Nebula(name="NGC 1977")])
    >>> sorted(nebula.name for nebula in select(Nebula))
    ['M42', 'M43', 'NGC 1977']
    """
    from awlineage.persistence import current_store

    current_store().commit(list(objects))


def get(object_id: int | str) -> DBObject:
    """Return the stored object with this id, of whatever class.

    It is read from the current database (that of the active session, else of `connect`).

    Parameters
    ----------
    object_id : int or str
        The object's `DBObject.object_id`, or its digits as text (an id read back from a
        file or a command's output).

    Returns
    -------
    DBObject
        The object, as an instance of its own class.

    Raises
    ------
    ObjectNotFoundError
        When the database holds no object with this id (or the number does not fit in 64
        bits, as no id does).
    TypeError
        For a value that is no object id (a bool, a float, None).
    ValueError
        For text that is not a whole number.
    UnknownClassError
        When the object's class can be neither found nor rebuilt from the database.

    Examples
    --------
    >>> from awlineage import DBObject, connect, get, persistent
    >>> class Nebula(DBObject):
    ...     name = persistent("Catalogue name", str, "")
    >>> db = connect("sqlite:///doc.db")
    >>> crab = Nebula(name="M1")
    >>> crab.commit()
    >>> found = get(crab.object_id)
    >>> type(found).__name__, found.name
    ('Nebula', 'M1')
    """
    from awlineage.database import current_database

    return current_database().get(object_id)


__all__ = [
    "ArrayRef",
    "AttributePath",
    "AwlError",
    "Box",
    "Boxes",
    "Bundle",
    "BundleError",
    "Circle",
    "ConfigurationError",
    "DBObject",
    "DBObjectMeta",
    "DataObject",
    "DataObjectError",
    "Database",
    "DuplicateObjectError",
    "Footprint",
    "ImmutableObjectError",
    "Interval",
    "MissingExtraError",
    "Needs",
    "NotConnectedError",
    "ObjectInUseError",
    "ObjectNotFoundError",
    "OnePer",
    "OnePerGroup",
    "Operator",
    "PersistentTypeError",
    "PersistentValueError",
    "Polygon",
    "Process",
    "ProcessParameters",
    "ProcessRun",
    "PropertyDefinitionError",
    "Query",
    "QueryError",
    "QuerySyntaxError",
    "ReadOnlyDatabaseError",
    "Region",
    "RegionCapture",
    "RegionLineage",
    "RegionTable",
    "RemotePointer",
    "Retraction",
    "RunStatus",
    "SchemaConflictError",
    "Session",
    "Shapes",
    "SkyRegion",
    "SkyRegionError",
    "StaleCause",
    "StaleCauseCategory",
    "TargetOutcome",
    "TargetProcessor",
    "UnknownAttributeError",
    "UnknownClassError",
    "affected",
    "affected_by",
    "ancestors",
    "backward",
    "capture_regions",
    "closest",
    "commit",
    "connect",
    "current_database",
    "current_run",
    "current_session",
    "descendants",
    "diff",
    "elementwise",
    "elementwise_with_globals",
    "export_bundle",
    "flagged_with_globals",
    "footprint_from_wcs",
    "forward",
    "get",
    "get_dependencies",
    "get_inverse_properties",
    "get_onthefly_dependencies",
    "get_persistent_properties",
    "global_summary",
    "import_bundle",
    "info",
    "newest",
    "openlineage_events",
    "parse_query",
    "payload_boxes",
    "persistent",
    "prov_json",
    "read_bundle",
    "reduce",
    "region_mask",
    "reinstate",
    "retract",
    "retractions_of",
    "select",
    "stack",
    "traced",
    "use_data_server",
]
