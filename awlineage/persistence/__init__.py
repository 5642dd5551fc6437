"""The object model: persistent classes, their properties, identity, immutability, and the
query expressions a class stands for. Knows nothing of SQL; a database implements
`ObjectStore`."""

from awlineage.persistence._dataobject import DataObject, DataObjectError
from awlineage.persistence._expressions import (
    And,
    Comparison,
    Contains,
    Expression,
    In,
    Like,
    Not,
    Or,
    Ordering,
    Path,
    Step,
    find_property,
    root_class,
)
from awlineage.persistence._identity import new_object_id
from awlineage.persistence._meta import (
    DBObjectMeta,
    class_by_name,
    concrete_subclasses,
    link_key,
    set_identity,
)
from awlineage.persistence._object import DBObject, get_persistent_properties
from awlineage.persistence._observe import (
    ObjectObserver,
    add_observer,
    notify_read,
    observers,
    remove_observer,
)
from awlineage.persistence._properties import Kind, Property, PropertyInfo, persistent
from awlineage.persistence._store import (
    FileStore,
    ObjectStore,
    SessionStores,
    StoredFile,
    activate_session,
    active_session,
    current_files,
    current_store,
    default_store,
    reset_session,
    set_current_store,
    set_default_files,
)
from awlineage.persistence._values import UTC, datetime_to_text, text_to_datetime

__all__ = [
    "UTC",
    "And",
    "Comparison",
    "Contains",
    "DBObject",
    "DBObjectMeta",
    "DataObject",
    "DataObjectError",
    "Expression",
    "FileStore",
    "In",
    "Kind",
    "Like",
    "Not",
    "ObjectObserver",
    "ObjectStore",
    "Or",
    "Ordering",
    "Path",
    "Property",
    "PropertyInfo",
    "SessionStores",
    "Step",
    "StoredFile",
    "activate_session",
    "active_session",
    "add_observer",
    "class_by_name",
    "concrete_subclasses",
    "current_files",
    "current_store",
    "datetime_to_text",
    "default_store",
    "find_property",
    "get_persistent_properties",
    "link_key",
    "new_object_id",
    "notify_read",
    "observers",
    "persistent",
    "remove_observer",
    "reset_session",
    "root_class",
    "set_current_store",
    "set_default_files",
    "set_identity",
    "text_to_datetime",
]
