"""Lineage between sites (seed 001): site identity, bundles that carry an object's ancestry to
another site (pruned beyond a depth, with pointers to the site that holds the rest), the
origin of every copy, and the replication plan (which sites keep copies of whose lineage).

A site is one database, one data server and its HTTP API, named by the API's URL. Its data
server sends and receives files that carry their lineage (`site_data_server_app`)."""

from awlineage.federation._bundle import (
    Bundle,
    BundleError,
    BundleLimits,
    PointerRecord,
    check_pointers,
    read_bundle,
)
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
from awlineage.federation._remote import (
    BUNDLE_TYPE,
    ResolveReport,
    SiteUnreachableError,
    fetch_bundle,
    resolve_pointers,
    site_info,
    site_status,
    site_timeout,
)
from awlineage.federation._replicate import (
    ReplicationRun,
    Workload,
    gather_workload,
    replicate,
)
from awlineage.federation._replication import (
    MAX_EXACT_SITES,
    ReplicationPlan,
    ReplicationProblem,
    SubCluster,
    consolidated_weights,
    correlation_objective,
    evaluate_plan,
    exact_plan,
)
from awlineage.federation._replication_search import (
    LP_MAX_SITES,
    REPLICATION_METHODS,
    plan_replication,
)
from awlineage.federation._replication_table import plan_table
from awlineage.federation._site import (
    SITE_TABLES,
    Origin,
    Site,
    count_copies,
    known_sites,
    local_site,
    log_fetch,
    origins_of,
    set_local_site,
)
from awlineage.federation._workload import (
    FetchSummary,
    fetch_summary,
    lineage_size,
    read_workload,
    workload_problem,
)

__all__ = [
    "BUNDLE_TYPE",
    "DEFAULT_LINEAGE_DEPTH",
    "LP_MAX_SITES",
    "MAX_EXACT_SITES",
    "REPLICATION_METHODS",
    "SITE_TABLES",
    "Bundle",
    "BundleError",
    "BundleLimits",
    "DatabaseLineageCarrier",
    "FetchSummary",
    "ImportReport",
    "ObjectRecord",
    "Origin",
    "PointerRecord",
    "RemotePointer",
    "ReplicationPlan",
    "ReplicationProblem",
    "ReplicationRun",
    "ResolveReport",
    "Site",
    "SiteUnreachableError",
    "SubCluster",
    "Workload",
    "check_pointers",
    "consolidated_weights",
    "content_hash",
    "correlation_objective",
    "count_copies",
    "evaluate_plan",
    "exact_plan",
    "export_bundle",
    "fetch_bundle",
    "fetch_summary",
    "gather_workload",
    "import_bundle",
    "known_sites",
    "lineage_size",
    "local_site",
    "log_fetch",
    "objects_with_file",
    "origins_of",
    "plan_replication",
    "plan_table",
    "read_bundle",
    "read_workload",
    "replicate",
    "resolve_pointers",
    "set_local_site",
    "site_data_server_app",
    "site_info",
    "site_status",
    "site_timeout",
    "workload_problem",
]
