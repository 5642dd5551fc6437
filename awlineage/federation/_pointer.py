"""RemotePointer: what a site stores for an object whose record is held elsewhere (Bonsai,
seed 001 Fig. 2): the lineage beyond a bundle's depth is replaced by a pointer to the site
that made it. The pointer keeps the object's own id, so links to it stay valid; following it
(`awlineage.federation.resolve`) replaces it by the object itself."""

from __future__ import annotations

from awlineage.persistence import DBObject, persistent


class RemotePointer(DBObject):
    """An object held at another site, known here by its id, class and content hash.

    Lineage queries that meet one follow it by asking ``origin_url`` (`resolve`); until then
    it stands in the graph as a leaf. `import_bundle` makes one for each object a bundle
    links to beyond its depth, and replaces it by the object when a later bundle brings it.

    Parameters
    ----------
    **values : Any
        Persistent attributes: ``remote_class``, ``origin_url``, ``origin_site`` and
        ``content_hash`` (and ``object_id``, the id of the object it stands for).

    Raises
    ------
    UnknownAttributeError
        For a keyword that is not one of these.

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent
    >>> class Courier(DBObject):
    ...     label = persistent("What the product is", str, "")
    ...     source = persistent("The product it was made from")
    >>> here = connect("sqlite:///here.db")
    >>> raw = Courier(label="raw")
    >>> calibrated = Courier(label="calibrated", source=raw)
    >>> coadd = Courier(label="coadd", source=calibrated)
    >>> coadd.commit()
    >>> from awlineage import Database, export_bundle, import_bundle
    >>> there = Database("sqlite:///there.db")
    >>> _ = import_bundle(export_bundle(coadd, depth=1), database=there)
    >>> pointer = there.get(raw.object_id)
    >>> isinstance(pointer, RemotePointer), pointer.remote_class
    (True, 'awlineage.Courier')
    >>> there.close()
    """

    __tablename__ = "awl_remote_pointer"
    __run_output__ = False

    remote_class = persistent("Qualified class name of the object at its origin", str, "")
    origin_url = persistent("URL of the HTTP API of the site that holds it", str, "")
    origin_site = persistent("Site id of that site", str, "")
    content_hash = persistent("SHA-256 of the object's record at its origin", str, "")

    def describe(self) -> str:
        """The pointer for people: class, id and where it is held."""
        return (f"{self.remote_class.rpartition('.')[2]} {self.object_id} "
                f"(held at {self.origin_url or 'site ' + self.origin_site})")
