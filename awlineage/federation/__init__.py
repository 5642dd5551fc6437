"""Lineage between sites (seed 001): site identity, bundles that carry an object's ancestry to
another site (pruned beyond a depth, with pointers to the site that holds the rest), the
origin of every copy, and the replication plan (which sites keep copies of whose lineage).

A site is one database, one data server and its HTTP API, named by the API's URL. Its data
server sends and receives files that carry their lineage (`site_data_server_app`)."""

from typing import TYPE_CHECKING

from awlineage.lazy import lazy_attributes

if TYPE_CHECKING:
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
    from awlineage.federation._definitions import refuse_differing_classes
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
    from awlineage.federation._replication_methods import REPLICATION_METHODS
    from awlineage.federation._replication_search import (
        LP_MAX_SITES,
        plan_replication,
    )
    from awlineage.federation._replication_table import plan_table
    from awlineage.federation._site import (
        SITE_TABLES,
        Origin,
        Site,
        check_site_settings,
        count_copies,
        known_sites,
        local_site,
        log_fetch,
        origins_of,
        recorded_site,
        set_local_site,
    )
    from awlineage.federation._workload import (
        FetchSummary,
        fetch_summary,
        lineage_size,
        read_workload,
        workload_problem,
    )

_WHERE = {
    "Bundle": "._bundle",
    "BUNDLE_TYPE": "._remote",
    "BundleError": "._bundle",
    "BundleLimits": "._bundle",
    "check_pointers": "._bundle",
    "check_site_settings": "._site",
    "consolidated_weights": "._replication",
    "content_hash": "._records",
    "correlation_objective": "._replication",
    "count_copies": "._site",
    "DatabaseLineageCarrier": "._carrier",
    "DEFAULT_LINEAGE_DEPTH": "._carrier",
    "evaluate_plan": "._replication",
    "exact_plan": "._replication",
    "export_bundle": "._export",
    "fetch_bundle": "._remote",
    "fetch_summary": "._workload",
    "FetchSummary": "._workload",
    "gather_workload": "._replicate",
    "import_bundle": "._import",
    "ImportReport": "._import",
    "known_sites": "._site",
    "lineage_size": "._workload",
    "local_site": "._site",
    "log_fetch": "._site",
    "LP_MAX_SITES": "._replication_search",
    "MAX_EXACT_SITES": "._replication",
    "ObjectRecord": "._records",
    "objects_with_file": "._carrier",
    "Origin": "._site",
    "origins_of": "._site",
    "plan_replication": "._replication_search",
    "plan_table": "._replication_table",
    "PointerRecord": "._bundle",
    "read_bundle": "._bundle",
    "refuse_differing_classes": "._definitions",
    "read_workload": "._workload",
    "recorded_site": "._site",
    "RemotePointer": "._pointer",
    "replicate": "._replicate",
    "REPLICATION_METHODS": "._replication_methods",
    "ReplicationPlan": "._replication",
    "ReplicationProblem": "._replication",
    "ReplicationRun": "._replicate",
    "resolve_pointers": "._remote",
    "ResolveReport": "._remote",
    "set_local_site": "._site",
    "Site": "._site",
    "site_data_server_app": "._carrier",
    "site_info": "._remote",
    "site_status": "._remote",
    "SITE_TABLES": "._site",
    "site_timeout": "._remote",
    "SiteUnreachableError": "._remote",
    "SubCluster": "._replication",
    "Workload": "._replicate",
    "workload_problem": "._workload",
}
"""The module of each public name (imported on first use, so that scipy is imported only
when a plan is made: `awlineage.lazy`)."""

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)

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
    "check_site_settings",
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
    "recorded_site",
    "refuse_differing_classes",
    "replicate",
    "resolve_pointers",
    "set_local_site",
    "site_data_server_app",
    "site_info",
    "site_status",
    "site_timeout",
    "workload_problem",
]
