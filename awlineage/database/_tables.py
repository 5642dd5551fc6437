"""The tables: the framework's own (described once, as data) and those built for each
persistent class."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import sqlalchemy as sa

from awlineage.database._index_tables import index_table, indexed_kind
from awlineage.database._types import UTCDateTime, scalar_type
from awlineage.persistence import Kind, Property

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s",
    "pk": "pk_%(table_name)s",
}

BUILTIN_COLUMNS = ("object_id", "creation_date", "version", "_identity")
FRAMEWORK_TABLES = ("awl_object", "awl_class", "awl_claim", "awl_closure_label",
                    "awl_closure_state", "awl_deleted_version")
REQUIRED_TABLES = ("awl_object", "awl_class", "awl_claim")
"""The tables every database that holds objects has (older ones lack the closure index's)."""


def new_metadata() -> sa.MetaData:
    """A MetaData holding the framework tables.

    Returns
    -------
    sqlalchemy.MetaData
        New metadata with the project's naming convention.
    """
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    framework_tables(metadata)
    return metadata


def framework_tables(metadata: sa.MetaData) -> dict[str, sa.Table]:
    """Add the framework's own tables to `metadata` and return them by name."""
    sa.Table(
        "awl_object", metadata,
        sa.Column("object_id", sa.BigInteger, primary_key=True, autoincrement=False,
                  comment="Every stored object, of every class: one global identifier space"),
        sa.Column("class_name", sa.String(200), nullable=False, index=True),
        sa.Column("creation_date", UTCDateTime, nullable=False),
    )
    sa.Table(
        "awl_class", metadata,
        sa.Column("class_name", sa.String(200), primary_key=True),
        sa.Column("class_version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("module", sa.String(400), nullable=False),
        sa.Column("table_name", sa.String(200), nullable=False),
        sa.Column("bases", sa.Text, nullable=False, comment="JSON list of persistent bases"),
        sa.Column("identity", sa.Text, nullable=False, comment="JSON list of attributes"),
        sa.Column("definition", sa.Text, nullable=False,
                  comment="JSON object: property name -> kind and type"),
        sa.Column("recorded", UTCDateTime, nullable=False),
        sa.Column("code_version", sa.String(200), nullable=True,
                  comment="Code version of the class's methods (process targets)"),
    )
    sa.Table(
        "awl_claim", metadata,
        sa.Column("target_key", sa.String(1000), primary_key=True,
                  comment="Class and identity of a target being made"),
        sa.Column("claimed_by", sa.String(200), nullable=False,
                  comment="host:pid:token of the processor making it"),
        sa.Column("heartbeat", UTCDateTime, nullable=False,
                  comment="Renewed while it is made; an old one is taken over"),
    )
    closure_index_tables(metadata)
    return {name: metadata.tables[name] for name in FRAMEWORK_TABLES}


def closure_index_tables(metadata: sa.MetaData) -> None:
    """The lineage graph's transitive-closure index (awlineage.lineage): one row per interval
    of the interval encoding, and one row saying the index is on. Interval ends are byte keys
    (base-256 fractions) so that nodes made later fit between any two."""
    sa.Table(
        "awl_closure_label", metadata,
        sa.Column("left_end", sa.LargeBinary, primary_key=True,
                  comment="Start of the interval; unique over the whole index"),
        sa.Column("right_end", sa.LargeBinary, nullable=False, unique=True,
                  comment="End of the interval: a contains b iff a.left < b.left and "
                          "b.right < a.right, and then a's object is an ancestor of b's"),
        sa.Column("node_id", sa.BigInteger, nullable=False, index=True,
                  comment="The object (several rows when the encoding copied it)"),
        sa.Column("anc_from", sa.LargeBinary, nullable=False,
                  comment="Smallest left_end of an interval containing this one"),
        sa.Column("desc_until", sa.LargeBinary, nullable=False,
                  comment="Largest left_end of an interval inside this one"),
        # PostgreSQL: the queries' range scans read only this index. SQLite stores the table
        # itself in left_end order (no rowid), which serves them without a second copy.
        sa.Index("ix_awl_closure_label_range", "left_end", "right_end", "node_id"
                 ).ddl_if(dialect="postgresql"),
        sqlite_with_rowid=False,
    )
    sa.Table(
        "awl_deleted_version", metadata,
        sa.Column("table_name", sa.String(200), nullable=False,
                  comment="The class table the deleted object was in"),
        sa.Column("identity", sa.Text, nullable=False,
                  comment="Its identity key (the class table's _identity)"),
        sa.Column("version", sa.Integer, nullable=False,
                  comment="Its version, never given to another object of the identity"),
        sa.Column("deleted", UTCDateTime, nullable=False),
        sa.Index("ix_awl_deleted_version_identity", "table_name", "identity"),
    )
    sa.Table(
        "awl_closure_state", metadata,
        sa.Column("name", sa.String(40), primary_key=True,
                  comment="'index': the closure index is on and kept up to date by commits"),
        sa.Column("built", UTCDateTime, nullable=False, comment="When it was last rebuilt"),
        sa.Column("rebuilds", sa.Integer, nullable=False,
                  comment="Rebuilds since then that commits needed (a node not placeable)"),
    )


@dataclass
class ClassTables:
    """The tables of one persistent class and the plan for reading and writing its rows."""

    cls: type
    table: sa.Table
    list_tables: dict[str, sa.Table] = field(default_factory=dict)
    index_tables: dict[str, sa.Table] = field(default_factory=dict)
    values: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    reads: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)
    """What reading these tables builds once (statements, row readers), by name (and the
    query it reads by, `load_class_rows_in`): the tables
    never change (a schema change describes new `ClassTables`), and these belong to one
    database."""

    @property
    def link_lists(self) -> list[str]:
        """Names of the link-list properties."""
        return list(self.list_tables)

    @property
    def side_tables(self) -> list[sa.Table]:
        """The link-list tables and the sky and time index tables (rows per object)."""
        return [*self.list_tables.values(), *self.index_tables.values()]


def list_table_name(table_name: str, attribute: str) -> str:
    """Name of the table that holds a link list.

    Parameters
    ----------
    table_name : str
        The table of the class declaring the link list.
    attribute : str
        The link list attribute's name.

    Returns
    -------
    str
        ``table_name__attribute``.

    Examples
    --------
    >>> list_table_name("mosaic", "frames")
    'mosaic__frames'
    """
    return f"{table_name}__{attribute}"


def _column(prop: Property, dialect: ModuleType) -> sa.Column:
    kind = prop.kind
    if kind is Kind.DESCRIPTOR:
        return sa.Column(prop.name, scalar_type(prop.type), nullable=True, index=prop.index,
                         comment=prop.doc[:200] or None)
    if kind is Kind.DESCRIPTOR_LIST:
        return sa.Column(prop.name, dialect.list_type(prop.type), nullable=True,
                         comment=prop.doc[:200] or None)
    return sa.Column(prop.name, sa.BigInteger, sa.ForeignKey("awl_object.object_id"),
                     nullable=True, index=True, comment=prop.doc[:200] or None)


def property_column(prop: Property, dialect: ModuleType) -> sa.Column:
    """The column of a descriptor, descriptor list or link property (detached)."""
    return _column(prop, dialect)


def build_class_tables(metadata: sa.MetaData, cls: type, dialect: ModuleType,
                       table_name: str | None = None) -> ClassTables:
    """Describe the tables of persistent class `cls` in `metadata` (not created), under
    `table_name` (the one a database recorded for it) or the class's own."""
    name = table_name or cls._table_name  # type: ignore[attr-defined]
    if name in metadata.tables:
        metadata.remove(metadata.tables[name])
    identity = tuple(cls.identity)  # type: ignore[attr-defined]
    columns: list[sa.schema.SchemaItem] = [
        sa.Column("object_id", sa.BigInteger, sa.ForeignKey("awl_object.object_id"),
                  primary_key=True, autoincrement=False),
        sa.Column("creation_date", UTCDateTime, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("_identity", sa.Text, nullable=True),
    ]
    result = ClassTables(cls=cls, table=None)  # type: ignore[arg-type]
    for prop in cls._properties.values():  # type: ignore[attr-defined]
        if prop.builtin:
            continue
        if prop.kind is Kind.LINK_LIST:
            result.list_tables[prop.name] = _link_list_table(metadata, name, prop)
            continue
        column = _column(prop, dialect)
        if prop.name in identity:
            column.index = True
        columns.append(column)
        (result.links if prop.kind.is_link else result.values).append(prop.name)
        if prop.kind is Kind.DESCRIPTOR and indexed_kind(prop) is not None:
            result.index_tables[prop.name] = index_table(
                metadata, list_table_name(name, prop.name), prop)
    columns.append(sa.UniqueConstraint("_identity", "version"))
    result.table = sa.Table(name, metadata, *columns)
    return result


def _link_list_table(metadata: sa.MetaData, owner: str, prop: Property) -> sa.Table:
    name = list_table_name(owner, prop.name)
    if name in metadata.tables:
        metadata.remove(metadata.tables[name])
    return sa.Table(
        name, metadata,
        sa.Column("object_id", sa.BigInteger, sa.ForeignKey("awl_object.object_id"),
                  primary_key=True, autoincrement=False),
        sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("target_id", sa.BigInteger, sa.ForeignKey("awl_object.object_id"),
                  nullable=False, index=True),
        comment=prop.doc[:200] or None,
    )
