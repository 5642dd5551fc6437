"""Lineage between sites (seed 001): site identity, bundles that carry an object's ancestry to
another site (pruned beyond a depth, with pointers to the site that holds the rest), and the
origin of every copy.

A site is one database, one data server and its HTTP API, named by the API's URL."""

from awlineage.federation._bundle import Bundle, BundleError, PointerRecord, read_bundle
from awlineage.federation._export import export_bundle
from awlineage.federation._import import ImportReport, import_bundle
from awlineage.federation._pointer import RemotePointer
from awlineage.federation._records import ObjectRecord, content_hash
from awlineage.federation._remote import (
    BUNDLE_TYPE,
    ResolveReport,
    SiteUnreachableError,
    fetch_bundle,
    resolve_pointers,
    site_info,
    site_timeout,
)
from awlineage.federation._site import (
    Origin,
    Site,
    known_sites,
    local_site,
    log_fetch,
    origins_of,
    set_local_site,
)
from awlineage.lineage import LineageIncompleteWarning, MissingLineage

__all__ = [
    "BUNDLE_TYPE",
    "Bundle",
    "BundleError",
    "ImportReport",
    "LineageIncompleteWarning",
    "MissingLineage",
    "ObjectRecord",
    "Origin",
    "PointerRecord",
    "RemotePointer",
    "ResolveReport",
    "Site",
    "SiteUnreachableError",
    "content_hash",
    "export_bundle",
    "fetch_bundle",
    "import_bundle",
    "known_sites",
    "local_site",
    "log_fetch",
    "origins_of",
    "read_bundle",
    "resolve_pointers",
    "set_local_site",
    "site_info",
    "site_timeout",
]
