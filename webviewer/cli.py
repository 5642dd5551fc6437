"""``awl serve``: the web object viewer under uvicorn, read-only, on loopback unless told
otherwise; a command of ``awl`` found through the ``awlineage.commands`` entry point ``serve``
(contract: ``awlineage.cli._plugins``). The viewer's packages (the ``web`` extra) are imported
only when it runs."""

from __future__ import annotations

import argparse
import os
import sys
from urllib.parse import urlsplit

from awlineage import config
from awlineage.cli import LOG_LEVELS, listening_socket, port_number, serve_on, shown_url
from awlineage.errors import ConfigurationError
from awlineage.extras import require_extra

DATA_SCHEMES = ("file", "s3", "http", "https")
"""The schemes of a data URL (`dataserver.open_storage`)."""
MAX_WORKERS = 256
"""More worker processes than any machine serving a viewer has cores for."""


def _serve(args: argparse.Namespace) -> int:
    for package in ("starlette", "jinja2", "uvicorn"):
        require_extra(package, "web", "the web viewer (awl serve)")
    import uvicorn

    from awlineage.storage import shown_data_url
    from webviewer import create_app
    from webviewer._public import public_setting

    database_url = config.setting("database_url", args.database)
    public = public_setting(args.public)
    if public and args.site_url:
        raise ConfigurationError(
            "--site-url: a public viewer serves no lineage bundles, so it records no site URL "
            "for other sites to come back to; record it with awl serve without --public, or "
            "awl sites init --url URL")
    data_url = config.setting("data_url", args.data_url)
    _check_data_url(str(data_url))
    schema = config.setting("database_schema", args.schema)
    where = f"http://{args.host}:{args.port}"
    if args.workers > 1:
        # Worker processes build their own app from the environment: the factory's defaults.
        os.environ["AWL_DATABASE_URL"] = database_url
        os.environ["AWL_DATA_URL"] = str(data_url)
        if schema:
            os.environ["AWL_DATABASE_SCHEMA"] = schema
        if public:
            os.environ["AWL_VIEWER_PUBLIC"] = "1"
    # Fail here, not later.
    app = create_app(database_url, data_url=data_url, schema=schema, public=public)
    # The site's address is recorded only once the port is ours: a failed bind must not
    # leave bundles and files exported later naming another process's server.
    with listening_socket(args.host, args.port) as sock:
        print(f"awl serve: {shown_url(database_url)} (read-only), files from "
              f"{shown_data_url(str(data_url))}, "
              f"on {where}" + (" (public)" if public else ""), file=sys.stderr)
        if public:
            _leave_site(database_url, schema)
        else:
            _record_site(database_url, schema, args.site_url or where,
                         replace=bool(args.site_url))
        if args.workers == 1:
            return serve_on(app, sock, args.log_level)
        uvicorn.run("webviewer:create_app", factory=True, fd=sock.fileno(),
                    workers=args.workers, log_level=args.log_level)
    return 0


def _check_data_url(url: str) -> None:
    """Refuse a data URL of no known scheme now: the viewer opens it only when a file is
    asked for, and would otherwise serve pages whose every file fails."""
    scheme = urlsplit(url).scheme.lower()
    if len(scheme) > 1 and scheme not in DATA_SCHEMES:  # one letter: a Windows drive
        raise ConfigurationError(f"data URL {url!r}: unknown scheme {scheme!r} (use a "
                                 "directory, file://, s3:// or http(s)://)")


def _record_site(database_url: str, schema: str | None, url: str, replace: bool) -> None:
    """Give the database a site id and URL before the read-only viewer serves it (the
    viewer cannot write one; other sites' pointers to this one need a stable id and a URL to
    come back to). A URL recorded before is kept unless ``--site-url`` names another, or it
    is a loopback address (another ``awl serve`` of this machine recorded it: the site is
    where this one listens now); a server that listens elsewhere than the site's URL says
    so."""
    from awlineage import Database
    from awlineage.federation import local_site, set_local_site

    try:
        db = Database(database_url, schema=schema, create=False)
    except Exception as exc:  # the viewer still serves; other sites just cannot point here
        print(f"awl serve: the site is not recorded ({exc}); run awl sites init --url URL",
              file=sys.stderr)
        return
    try:
        site = local_site(db)
        before = site.url
        if replace or before is None or (_on_loopback(before) and before != url.rstrip("/")):
            site = set_local_site(db, url=url)
        print(f"awl serve: site {site.site_id} at {site.url}"
              + (f" (recorded at {before} before)" if before and before != site.url else ""),
              file=sys.stderr)
        if site.url != url.rstrip("/"):
            print(f"awl serve: this server listens on {url}, not at the site's URL: bundles "
                  "and files exported here point other sites there (--site-url URL records "
                  "another)", file=sys.stderr)
    finally:
        db.close()


def _leave_site(database_url: str, schema: str | None) -> None:
    """Say that a public viewer leaves the site as it is: it refuses lineage bundles
    (`webviewer._public.BUNDLES_REFUSED`), so a site URL naming it would send other sites'
    pointers to a server that cannot answer them."""
    from awlineage import Database
    from awlineage.federation import local_site

    recorded = None
    try:
        db = Database(database_url, schema=schema, read_only=True, create=False)
        try:
            recorded = local_site(db).url
        finally:
            db.close()
    except Exception:  # only said to the user; the viewer still serves
        recorded = None
    print("awl serve: site URL not recorded: a public viewer serves no lineage bundles; "
          + (f"the site stays at {recorded}" if recorded else "no site URL is recorded")
          + " (record one with awl serve without --public, or awl sites init --url URL)",
          file=sys.stderr)


def _on_loopback(url: str) -> bool:
    """Whether `url` names this machine's loopback address (no other machine reaches it)."""
    host = urlsplit(url).hostname or ""
    return host == "localhost" or host == "::1" or host.startswith("127.")


def _workers(text: str) -> int:
    """An argparse type: a number of worker processes, 1 to `MAX_WORKERS`."""
    try:
        workers = int(text)
    except ValueError:
        workers = 0
    if not 1 <= workers <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of worker processes (1 to "
                                         f"{MAX_WORKERS})")
    return workers


def add_serve(commands: argparse._SubParsersAction) -> None:
    """Add ``awl serve`` (the ``awlineage.commands`` entry point ``serve``)."""
    serve = commands.add_parser("serve", help="the web object viewer (read-only)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=port_number, default=8400,
                       help="port to listen on (default %(default)s)")
    serve.add_argument("--database", default=argparse.SUPPRESS,
                       help="database URL (default: AWL_DATABASE_URL or sqlite:///awlineage.db)")
    serve.add_argument("--data-url", help="where the objects' files are (default: AWL_DATA_URL "
                       "or ./awl-data)")
    serve.add_argument("--schema", help="PostgreSQL schema of the database")
    serve.add_argument("--workers", type=_workers, default=1,
                       help="worker processes (default 1)")
    serve.add_argument("--log-level", choices=LOG_LEVELS, default="warning",
                       help="how much the server logs (default %(default)s)")
    serve.add_argument("--public", action="store_true", default=None,
                       help="hide server paths, users, hosts, pids and the database's URL on "
                       "every page and in JSON, serve no lineage bundles and record no site "
                       "URL (default: AWL_VIEWER_PUBLIC or awl.toml's viewer_public)")
    serve.add_argument("--site-url", help="the URL other sites reach this one at, recorded "
                       "as this site's (default: the one recorded, else http://HOST:PORT; "
                       "a loopback URL recorded before follows this server); not with "
                       "--public, which records no site URL")
    serve.set_defaults(run=_serve)
