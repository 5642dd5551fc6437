"""awlineage: persistent Python classes for scientific pipelines, with lineage.

Everything a script needs is importable from here::

    from awlineage import DBObject, persistent, select, connect
"""

from awlineage.database import Database, connect, current_database
from awlineage.errors import (
    AwlError,
    ConfigurationError,
    DuplicateObjectError,
    ImmutableObjectError,
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
    current_run,
    traced,
)


def commit(objects: "list[DBObject] | tuple[DBObject, ...]") -> None:
    """Commit many objects (and what they link to) in one transaction.

    Parameters
    ----------
    objects
        Uncommitted objects; each is written once even if several link to it.
    """
    from awlineage.persistence import current_store

    current_store().commit(list(objects))


def get(object_id: int) -> DBObject:
    """The stored object with this id, of whatever class, from the current session's
    database."""
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
    "SchemaConflictError",
    "Session",
    "Shapes",
    "SkyRegion",
    "SkyRegionError",
    "TargetProcessor",
    "UnknownAttributeError",
    "UnknownClassError",
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
    "select",
    "stack",
    "traced",
    "use_data_server",
]
