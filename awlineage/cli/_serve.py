"""``awl serve``: the web object viewer under uvicorn, read-only, on loopback unless told
otherwise."""

from __future__ import annotations

import argparse
import os
import socket
import sys

from awlineage import config
from awlineage.errors import ConfigurationError


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from webviewer import create_app

    database_url = config.setting("database_url", args.database)
    data_url = config.setting("data_url", args.data_url)
    schema = config.setting("database_schema", args.schema)
    where = f"http://{args.host}:{args.port}"
    print(f"awl serve: {database_url} (read-only), files from {data_url}, on {where}",
          file=sys.stderr)
    if args.workers > 1:
        # Worker processes build their own app from the environment: the factory's defaults.
        os.environ["AWL_DATABASE_URL"] = database_url
        os.environ["AWL_DATA_URL"] = str(data_url)
        if schema:
            os.environ["AWL_DATABASE_SCHEMA"] = schema
        create_app(database_url, data_url=data_url, schema=schema)  # fail here, not in workers
        _record_site(database_url, schema, args.site_url or where, replace=bool(args.site_url))
        with _listening_socket(args.host, args.port) as sock:
            uvicorn.run("webviewer:create_app", factory=True, fd=sock.fileno(),
                        workers=args.workers, log_level=args.log_level)
        return 0
    app = create_app(database_url, data_url=data_url, schema=schema)
    _record_site(database_url, schema, args.site_url or where, replace=bool(args.site_url))
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _record_site(database_url: str, schema: str | None, url: str, replace: bool) -> None:
    """Give the database a site id and URL before the read-only viewer serves it (the
    viewer cannot write one; other sites' pointers to this one need a stable id and a URL to
    come back to). A URL recorded before is kept unless ``--site-url`` names another."""
    from awlineage import Database
    from awlineage.federation import local_site, set_local_site

    try:
        db = Database(database_url, schema=schema)
    except Exception as exc:  # the viewer still serves; other sites just cannot point here
        print(f"awl serve: the site is not recorded ({exc}); run awl sites init --url URL",
              file=sys.stderr)
        return
    try:
        site = local_site(db)
        if replace or site.url is None:
            site = set_local_site(db, url=url)
        print(f"awl serve: site {site.site_id} at {site.url}", file=sys.stderr)
    finally:
        db.close()


def _listening_socket(host: str, port: int) -> socket.socket:
    """The socket the worker processes share, with Nagle's algorithm off. Uvicorn's own
    socket for several workers leaves it on in the connections it accepts, which holds each
    keep-alive answer back by some 40 ms (delayed ACKs); Linux copies the option from the
    listening socket to every accepted one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``awl serve``."""
    serve = commands.add_parser("serve", help="the web object viewer (read-only)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8400)
    serve.add_argument("--database", default=argparse.SUPPRESS,
                       help="database URL (default: AWL_DATABASE_URL or sqlite:///awlineage.db)")
    serve.add_argument("--data-url", help="where the objects' files are (default: AWL_DATA_URL "
                       "or ./awl-data)")
    serve.add_argument("--schema", help="PostgreSQL schema of the database")
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes (default 1)")
    serve.add_argument("--log-level", default="warning")
    serve.add_argument("--site-url", help="the URL other sites reach this one at, recorded "
                       "as this site's (default: the one recorded, else http://HOST:PORT)")
    serve.set_defaults(run=_serve)
