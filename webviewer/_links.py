"""An object's links and link lists, read for a page in a number of queries that does not grow
with the number of members: one per link list (its count and first members together), then one
bulk load of every object shown (`Database.get_many`: one query per class)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from awlineage import Database, DBObject, get_persistent_properties
from awlineage.persistence import link_ids

LINK_KINDS = ("link", "self-link")
LIST_KIND = "link list"


@dataclass
class LinkList:
    """The first members of a link list, and how many it has."""

    count: int
    member_ids: list[int]
    type_name: str
    members: list[DBObject] = field(default_factory=list)

    @property
    def hidden(self) -> int:
        """Members not shown."""
        return self.count - len(self.member_ids)

    def as_data(self) -> dict[str, Any]:
        """The list as the JSON answer gives it."""
        return {"count": self.count, "type": self.type_name, "members": self.members,
                "shown": len(self.members)}


@dataclass
class Links:
    """What an object links to: single links by attribute (None when unset) and link lists,
    with the other objects the page asked to load alongside (`extra`)."""

    single: dict[str, DBObject | None]
    lists: dict[str, LinkList]
    extra: dict[int, DBObject]


def list_heads(db: Database, obj: DBObject, limit: int) -> dict[str, LinkList]:
    """Each link list of `obj`: its length and the ids of its first `limit` members, one
    query per list."""
    lists: dict[str, LinkList] = {}
    infos = [i for i in get_persistent_properties(obj) if i.kind == LIST_KIND]
    if not infos:
        return lists
    state = obj.__dict__
    tables = db.tables_for(type(obj)).list_tables
    with db.engine.connect() as conn:
        for info in infos:
            type_name = getattr(info.type, "__name__", str(info.type))
            if info.name in state:  # loaded already: no query
                ids = [m.object_id for m in state[info.name]]
                lists[info.name] = LinkList(len(ids), ids[:limit], type_name)
                continue
            table = tables[info.name]
            rows = conn.execute(
                sa.select(table.c.target_id, sa.func.count().over().label("n"))
                .where(table.c.object_id == obj.object_id)
                .order_by(table.c.position).limit(max(limit, 1))).all()
            count = rows[0][1] if rows else 0
            lists[info.name] = LinkList(count, [r[0] for r in rows][:limit], type_name)
    return lists


def load_links(db: Database, obj: DBObject, limit: int,
               extra_ids: Iterable[int] = ()) -> Links:
    """The single links of `obj`, the first `limit` members of each of its link lists, and the
    objects `extra_ids` (which must exist), all loaded in one bulk load."""
    single_ids = link_ids(obj)
    lists = list_heads(db, obj, limit)
    extra = list(extra_ids)
    wanted = [i for i in single_ids.values() if i is not None]
    for head in lists.values():
        wanted.extend(head.member_ids)
    wanted.extend(extra)
    loaded = db.get_many(wanted) if wanted else {}
    for head in lists.values():
        head.members = [loaded[i] for i in head.member_ids]
    single = {name: None if i is None else loaded[i] for name, i in single_ids.items()}
    return Links(single, lists, {i: loaded[i] for i in extra})


def present_ids(db: Database, ids: Iterable[int]) -> set[int]:
    """Which of `ids` are stored objects (plain id attributes such as a run's ``target_id``
    are not foreign keys: their object may be gone, or never stored)."""
    wanted = list(dict.fromkeys(i for i in ids if i is not None))
    if not wanted:
        return set()
    registry = db.framework["awl_object"]
    with db.engine.connect() as conn:
        return set(conn.execute(sa.select(registry.c.object_id)
                                .where(registry.c.object_id.in_(wanted))).scalars())
