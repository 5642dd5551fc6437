"""Lineage between sites (seed 001): site identity, bundles that carry an object's ancestry to
another site (pruned beyond a depth, with pointers to the site that holds the rest), and the
origin of every copy.

A site is one database, one data server and its HTTP API, named by the API's URL. Its data
server sends and receives files that carry their lineage (`site_data_server_app`)."""

from awlineage.federation._bundle import Bundle, BundleError, PointerRecord, read_bundle
from awlineage.federation._carrier import (
    DEFAULT_LINEAGE_DEPTH,
    DatabaseLineageCarrier,
    objects_with_file,
    site_data_server_app,
)
from awlineage.federation._export import export_bundle
from awlineage.federation._import import ImportReport, import_bundle
from awlineage.federation._pointer import RemotePointer
from awlineage.federation._records import ObjectRecord, content_hash
from awlineage.federation._site import (
    Origin,
    Site,
    known_sites,
    local_site,
    log_fetch,
    origins_of,
    set_local_site,
)

__all__ = [
    "DEFAULT_LINEAGE_DEPTH",
    "Bundle",
    "BundleError",
    "DatabaseLineageCarrier",
    "ImportReport",
    "ObjectRecord",
    "Origin",
    "PointerRecord",
    "RemotePointer",
    "Site",
    "content_hash",
    "export_bundle",
    "import_bundle",
    "known_sites",
    "local_site",
    "log_fetch",
    "objects_with_file",
    "origins_of",
    "read_bundle",
    "set_local_site",
    "site_data_server_app",
]
