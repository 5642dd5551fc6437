"""Databases: engines from URLs (SQLite by default, PostgreSQL through psycopg 3), the
framework's tables, schema sync of persistent classes, and reading and writing objects."""

from awlineage.database._commit import (
    WriteHook,
    add_write_hook,
    find_or_commit,
    identity_key,
    identity_key_of,
    take_lock,
)
from awlineage.database._copies import (
    StoredRow,
    definition_here,
    ensure_recorded_class,
    read_stored_rows,
    write_stored_rows,
)
from awlineage.database._database import (
    NOT_CREATED_TO_READ,
    Database,
    RegisteredClass,
    connect,
    current_database,
    default_database,
)
from awlineage.database._ddl import DIALECTS, framework_ddl
from awlineage.database._load import (
    RowReader,
    load_class_rows,
    load_class_rows_in,
    load_objects,
    prefetch,
)
from awlineage.database._rows import column_batches, row_batches
from awlineage.database._statements import recorded_statements
from awlineage.database._sync import changed_properties, describe_property
from awlineage.database._tables import ClassTables, list_table_name, new_metadata

__all__ = [
    "DIALECTS",
    "NOT_CREATED_TO_READ",
    "ClassTables",
    "Database",
    "RegisteredClass",
    "RowReader",
    "StoredRow",
    "WriteHook",
    "add_write_hook",
    "changed_properties",
    "column_batches",
    "connect",
    "current_database",
    "default_database",
    "definition_here",
    "describe_property",
    "ensure_recorded_class",
    "find_or_commit",
    "framework_ddl",
    "identity_key",
    "identity_key_of",
    "list_table_name",
    "load_class_rows",
    "load_class_rows_in",
    "load_objects",
    "new_metadata",
    "prefetch",
    "read_stored_rows",
    "recorded_statements",
    "row_batches",
    "take_lock",
    "write_stored_rows",
]
