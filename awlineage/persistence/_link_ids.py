"""The ids an object's single links point to, read from its state without loading them: a
viewer or a lineage walk can follow many objects' links in one query per class."""

from __future__ import annotations

from typing import Any

from awlineage.persistence._meta import link_key


def link_ids(obj: Any) -> dict[str, int | None]:
    """The object ids an object's single links (links and self-links) point to.

    Nothing is loaded: a link read before gives its object's id, one not read yet the id
    stored in the object's row.

    Parameters
    ----------
    obj : Any
        A persistent object (a `DBObject`).

    Returns
    -------
    dict of str to int or None
        The id each link attribute points to, by attribute name in declaration order;
        None for a link that is not set.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class LinkIdsChip(DBObject):
    ...     pass
    >>> class LinkIdsFrame(DBObject):
    ...     chip = persistent("the chip", LinkIdsChip, None)
    ...     earlier = persistent("the frame before", None, None)
    >>> chip = LinkIdsChip()
    >>> ids = link_ids(LinkIdsFrame(chip=chip))
    >>> ids == {"chip": chip.object_id, "earlier": None}
    True
    """
    state = obj.__dict__
    ids: dict[str, int | None] = {}
    for name in type(obj)._link_names:
        if name in state:  # loaded already
            target = state[name]
            ids[name] = None if target is None else target.object_id
        else:
            ids[name] = state.get(link_key(name))
    return ids
