"""The object model: persistent classes, their properties, identity, immutability, and the
query expressions a class stands for. Knows nothing of SQL; a database implements
`ObjectStore`."""

from awlineage.persistence._arithmetic import (
    ArithmeticComparison,
    Attribute,
    Negation,
    Number,
    Operation,
    Term,
)
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
    brief,
    find_property,
    root_class,
)
from awlineage.persistence._identity import new_object_id
from awlineage.persistence._lists import FrozenList, PersistentList, frozen_list, open_list
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
    notify_read,
    observers,
    remove_observer,
)
from awlineage.persistence._properties import Kind, Property, PropertyInfo, persistent
<<<<<<< HEAD
from awlineage.persistence._ranges import InRange, in_range
=======
from awlineage.persistence._sky_predicates import SkyPredicate, TimePredicate
>>>>>>> main
from awlineage.persistence._standin import (
    RecordedClass,
    StandInMeta,
    build_stand_in,
    describe_class,
    is_stand_in,
    origin_text,
    refuse_stand_in,
)
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
    "ArithmeticComparison",
    "Attribute",
    "Comparison",
    "Contains",
    "DBObject",
    "DBObjectMeta",
    "DataObject",
    "DataObjectError",
    "Expression",
    "FileStore",
    "FrozenList",
    "In",
    "InRange",
    "Kind",
    "Like",
    "Negation",
    "Not",
    "Number",
    "ObjectObserver",
    "ObjectStore",
    "Operation",
    "Or",
    "Ordering",
    "Path",
    "PersistentList",
    "Property",
    "PropertyInfo",
    "RecordedClass",
    "SessionStores",
    "SkyPredicate",
    "StandInMeta",
    "Step",
    "StoredFile",
<<<<<<< HEAD
    "Term",
=======
    "TimePredicate",
>>>>>>> main
    "activate_session",
    "active_session",
    "add_observer",
    "ambiguity_message",
    "brief",
    "build_stand_in",
    "class_by_name",
    "classes_named",
    "concrete_subclasses",
    "current_files",
    "current_store",
    "datetime_to_text",
    "default_store",
    "describe_class",
    "find_property",
    "frozen_list",
    "get_persistent_properties",
    "in_range",
    "is_stand_in",
    "link_key",
    "namespace_of_module",
    "new_object_id",
    "notify_read",
    "observers",
    "open_list",
    "origin_text",
    "persistent",
    "qualified_name",
    "refuse_stand_in",
    "remove_observer",
    "reset_session",
    "root_class",
    "set_current_store",
    "set_default_files",
    "set_identity",
    "short_name",
    "text_to_datetime",
]
