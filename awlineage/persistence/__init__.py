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
from awlineage.persistence._lists import FrozenList, PersistentList, frozen_list, open_list
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
    remove_observer,
)
from awlineage.persistence._properties import Kind, Property, PropertyInfo, persistent
from awlineage.persistence._store import ObjectStore, current_store, set_current_store

__all__ = [
    "And",
    "Comparison",
    "Contains",
    "DBObject",
    "DBObjectMeta",
    "DataObject",
    "DataObjectError",
    "Expression",
    "FrozenList",
    "In",
    "Kind",
    "Like",
    "Not",
    "ObjectObserver",
    "ObjectStore",
    "Or",
    "Ordering",
    "Path",
    "PersistentList",
    "Property",
    "PropertyInfo",
    "Step",
    "add_observer",
    "class_by_name",
    "concrete_subclasses",
    "current_store",
    "find_property",
    "frozen_list",
    "get_persistent_properties",
    "link_key",
    "new_object_id",
    "open_list",
    "persistent",
    "remove_observer",
    "root_class",
    "set_current_store",
    "set_identity",
]
