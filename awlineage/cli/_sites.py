"""Lineage between sites: ``awl export bundle`` (with `awlineage.cli._lineage`'s other export
formats), ``awl import bundle``, and the ``awl sites`` group: ``init`` names this site,
``list`` shows it and the sites it has exchanged lineage with."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from awlineage.cli._arguments import real_number
from awlineage.cli._common import import_modules, open_database, prepare
from awlineage.cli._ids import resolve_id

if TYPE_CHECKING:
    from awlineage.federation import Workload


def export_bundle_command(args: argparse.Namespace) -> int:
    """``awl export bundle ID --depth L -o x.awlb [--files]``."""
    from awlineage.federation import export_bundle

    if not args.output:
        raise SystemExit("awl export bundle: give the bundle's file with -o/--output "
                         "(a bundle is binary)")
    db = open_database(args)
    prepare(db, args.imports)
    bundle = export_bundle(resolve_id(db, args.id), depth=args.depth, database=db,
                           files=getattr(args, "files", False))
    size = bundle.write(args.output, overwrite=args.overwrite)
    print(f"wrote {args.output}: {bundle.summary()} ({size} bytes)", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from awlineage.federation import import_bundle, read_bundle, refuse_differing_classes

    new = not _database_exists(args)
    if new:
        import_modules(args.imports)
    for path in args.paths:  # every bundle verified before a database is made, if new;
        bundle = read_bundle(Path(path))  # one held at a time (each may carry gigabytes)
        if new:  # and its classes checked against this process's
            refuse_differing_classes(None, bundle, bundle.records)
    db = open_database(args, create=True)
    prepare(db, args.imports)
    for path in args.paths:
        bundle = read_bundle(Path(path))
        report = import_bundle(bundle, database=db)
        print(f"{path}: {report.summary()} (from {bundle.origin.describe()})")
    return 0


def _database_exists(args: argparse.Namespace) -> bool:
    """Whether the database a command names exists (opening it creates nothing)."""
    from awlineage.errors import ConfigurationError

    try:
        open_database(args).close()
    except ConfigurationError:  # none yet, or none reachable: said again when made
        return False
    return True


def _init(args: argparse.Namespace) -> int:
    from awlineage.federation import check_site_settings, set_local_site

    check_site_settings(args.url, args.name)  # before a database is made for them
    db = open_database(args, create=True, files=False)  # names the site, stores no file
    site = set_local_site(db, url=args.url, name=args.name)
    print(f"this site: {site.site_id} {site.url or '(no URL yet: awl sites init --url ...)'}"
          f"{' ' + site.name if site.name else ''}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from awlineage.federation import known_sites, local_site

    db = open_database(args)
    here = local_site(db)
    print(f"this site  {here.site_id}  {here.url or '(no URL)'}  {here.name}".rstrip())
    for site in known_sites(db):
        print(f"known      {site.site_id}  {site.url or '(no URL)'}  {site.name}".rstrip())
    return 0


def _plan(args: argparse.Namespace) -> int:
    from awlineage.federation import plan_replication, plan_table

    problem = _workload(args).problem
    plan = plan_replication(problem, method=args.method)
    print(plan_table(plan, unit="B" if args.unit == "bytes" else args.unit))
    return 0


def _workload(args: argparse.Namespace) -> Workload:
    """The workload of a file (``--workload``), else as this site and the sites it knows
    tell it; the sites that did not answer are named on stderr."""
    from awlineage.federation import Workload, gather_workload, read_workload

    if args.workload:
        problem = read_workload(args.workload, communication_weight=args.communication_weight,
                                storage_weight=args.storage_weight)
        return Workload(problem, here="")
    db = open_database(args)
    workload = gather_workload(db, timeout=args.timeout,
                               communication_weight=args.communication_weight,
                               storage_weight=args.storage_weight)
    for url, reason in workload.unreachable.items():
        print(f"awl sites: left out {url}: {reason}", file=sys.stderr)
    return workload


def _replicate(args: argparse.Namespace) -> int:
    from awlineage.federation import plan_table, replicate

    db = open_database(args)
    if args.workload:
        raise SystemExit("awl sites replicate: asks the sites themselves; --workload is for "
                         "awl sites plan")
    run = replicate(db, _workload(args), timeout=args.timeout, method=args.method)
    print(plan_table(run.plan))
    print()
    print(run.summary())
    return 0


def _plan_arguments(parser: argparse.ArgumentParser) -> None:
    from awlineage.federation import REPLICATION_METHODS

    parser.add_argument("--workload", help="a workload file (JSON: sizes per site, and a log "
                        "of which site asked which for how many bytes) instead of asking "
                        "this site and the sites it knows")
    parser.add_argument("--method", choices=REPLICATION_METHODS, default="best",
                        help="how the plan is searched: best (a local search from every "
                        "start, the best plan kept), greedy (the agglomeration alone), "
                        "greedy+local or lp+local (a local search from one start) "
                        "(default %(default)s)")
    parser.add_argument("--communication-weight", type=real_number("a weight"), default=1.0,
                        help="cost of one unit of communication (default 1)")
    parser.add_argument("--storage-weight", type=real_number("a weight"), default=1.0,
                        help="cost of one byte of replicated lineage (default 1)")
    parser.add_argument("--unit", default="bytes", help="unit of the log's amounts, for "
                        "printing (default bytes)")
    parser.add_argument("--timeout", type=real_number("a number of seconds", above=True),
                        default=None,
                        help="seconds to wait for each site (default AWL_SITE_TIMEOUT or 5)")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``awl import`` and ``awl sites``."""
    imports = commands.add_parser("import", help="store a bundle made at another site")
    imports.add_argument("format", choices=("bundle",),
                         help="the format of the files: bundle (what awl export bundle "
                         "writes)")
    imports.add_argument("paths", nargs="+", metavar="FILE", help="bundle files (.awlb)")
    imports.add_argument("--import", dest="imports", action="append", default=[],
                         help="module defining persistent classes (repeatable)")
    imports.set_defaults(run=_import)
    sites = commands.add_parser("sites", help="this site and the others it exchanges lineage "
                                "with")
    actions = sites.add_subparsers(dest="action", required=True)
    init = actions.add_parser("init", help="record this site's URL and name")
    init.add_argument("--url", help="base URL of this site's HTTP API (awl serve)")
    init.add_argument("--name", help="a short name for people")
    init.set_defaults(run=_init)
    listing = actions.add_parser("list", help="this site and the sites it knows")
    listing.set_defaults(run=_list)
    plan = actions.add_parser("plan", help="which sites should replicate whose lineage "
                              "(correlation clustering, Gehani et al., section 6)")
    _plan_arguments(plan)
    plan.set_defaults(run=_plan)
    replicate = actions.add_parser("replicate", help="carry out this site's part of the plan: "
                                   "fetch, in full, the lineage its objects point to at the "
                                   "sites of its sub-cluster")
    _plan_arguments(replicate)
    replicate.set_defaults(run=_replicate)
