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
from awlineage.persistence._lists import PersistentList
from awlineage.persistence._meta import (
    DBObjectMeta,
    ambiguity_message,
    class_by_name,
    classes_named,
    concrete_subclasses,
    link_key,
    namespace_of_module,
    qualified_name,
    set_identity,
    short_name,
)
from awlineage.persistence._object import DBObject, get_persistent_properties
from awlineage.persistence._observe import (
    ObjectObserver,
    add_observer,
    remove_observer,
)
from awlineage.persistence._properties import Kind, Property, PropertyInfo, persistent
from awlineage.persistence._standin import (
    RecordedClass,
    StandInMeta,
    build_stand_in,
    describe_class,
    is_stand_in,
    origin_text,
)
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
    "RecordedClass",
    "StandInMeta",
    "Step",
    "add_observer",
    "ambiguity_message",
    "build_stand_in",
    "class_by_name",
    "classes_named",
    "concrete_subclasses",
    "current_store",
    "describe_class",
    "find_property",
    "get_persistent_properties",
    "is_stand_in",
    "link_key",
    "namespace_of_module",
    "new_object_id",
    "origin_text",
    "persistent",
    "qualified_name",
    "remove_observer",
    "root_class",
    "set_current_store",
    "set_identity",
    "short_name",
]
