"""``awl dataserver serve`` (run the HTTP data server) and ``awl dataserver gc`` (list and
remove files no committed object refers to, and uploads abandoned half-way)."""

from __future__ import annotations

import argparse
import dataclasses
import secrets
import sys
from pathlib import Path

from awlineage import config
from awlineage.cli._arguments import link_count
from awlineage.cli._listen import LOG_LEVELS, listening_socket, port_number, serve_on
from awlineage.errors import ConfigurationError
from awlineage.extras import require_extra


def _serve(args: argparse.Namespace) -> int:
    for package in ("starlette", "uvicorn"):  # before anything is opened or bound
        require_extra(package, "web", "the HTTP data server (awl dataserver serve)")
    from awlineage.storage import data_server_app, shown_data_url
    from dataserver import ServerConfig

    settings = ServerConfig.load(
        storage_url=args.storage,
        database_url=args.database,
        database_schema=args.schema,
        tokens=tuple(args.token) or None,
        max_upload_bytes=args.max_upload,
    )
    if settings.database_url is not None:
        from awlineage.database import Database

        # Deletes are checked against the database: one that does not exist refers to
        # nothing, and would let every file be deleted.
        Database(settings.database_url, schema=settings.database_schema, create=False).close()
    _refuse_missing_storage(settings.storage_url, args.create)
    notes = []
    if not settings.tokens:
        token = secrets.token_urlsafe(32)
        settings = dataclasses.replace(settings, tokens=(token,))
        notes.append(f"no write token configured; this run accepts {token}\n"
                     "  (set AWL_DATASERVER_TOKENS, or --token, to choose)")
    if settings.database_url is None:
        notes.append("no database configured: deletes are refused, and files are not sent "
                     "or received with their lineage")
        app = data_server_app(settings)
    else:
        from awlineage.federation import site_data_server_app

        app = site_data_server_app(settings, depth=args.lineage_depth)
    # Said once the server can start: a failure before is its one line alone.
    with listening_socket(args.host, args.port) as sock:
        for note in notes:
            print(f"awl dataserver: {note}", file=sys.stderr)
        print(f"awl dataserver: serving {shown_data_url(settings.storage_url)} on "
              f"http://{args.host}:{args.port}", file=sys.stderr)
        return serve_on(app, sock, args.log_level)


def _gc(args: argparse.Namespace) -> int:
    from awlineage.database import Database
    from awlineage.storage import referenced_among
    from dataserver import collect_garbage, open_storage, parse_duration

    url = config.setting("database_url", args.database)
    _refuse_missing_database(url)
    db = Database(url, schema=config.setting("database_schema", args.schema))
    try:
        if not db.registered_classes():
            raise ConfigurationError(
                f"database {url} records no persistent classes, so nothing could be found "
                "referenced; is it the database of this data server?"
            )
        # create=False: a mistyped directory is an error, not a new empty data server.
        storage = open_storage(config.setting("data_url", args.data_url),
                               token=config.setting("data_token", None), create=False)
        with storage:
            report = collect_garbage(storage, lambda names: referenced_among(db, names),
                                     grace_seconds=parse_duration(args.grace),
                                     dry_run=args.dry_run)
    finally:
        db.close()
    removed = set(report.removed) | set(report.abandoned_removed)
    for entry in [*report.orphans, *report.abandoned]:
        if args.dry_run or entry.name in removed:
            print(f"{entry.name}\t{entry.size}")
    for name, reason in report.kept.items():
        print(f"kept {name}: {reason}", file=sys.stderr)
    if args.dry_run:
        summary = (f"would remove {len(report.orphans)} unreferenced file(s) and "
                   f"{len(report.abandoned)} abandoned upload(s), freeing "
                   f"{report.orphan_bytes + report.abandoned_bytes} bytes")
    else:
        summary = (f"removed {len(report.removed)} unreferenced file(s) and "
                   f"{len(report.abandoned_removed)} abandoned upload(s), freed "
                   f"{report.freed_bytes} bytes")
    print(f"{summary}; {report.referenced} referenced, {report.too_young} younger than "
          f"{args.grace}", file=sys.stderr)
    return 0


def _refuse_missing_database(url: str) -> None:
    """An SQLite file that does not exist would be created empty, and an empty database
    refers to nothing: collecting against it would remove every file."""
    if url.startswith("sqlite"):
        import sqlalchemy as sa

        path = sa.make_url(url).database
        if path and path != ":memory:" and not Path(path).expanduser().exists():
            raise ConfigurationError(f"database file {path} does not exist; give the data "
                                     "server's database with --database or AWL_DATABASE_URL")


def _refuse_missing_storage(url: str, create: bool) -> None:
    """A storage directory that does not exist would be made empty, and served as if it
    were the data (a mistyped --storage): refused unless the user asks for a new one; one
    that is a file is refused naming the data server's settings, not the clients'."""
    from dataserver import local_directory

    root = local_directory(url)
    settings = ("--storage (or AWL_DATASERVER_STORAGE, storage in awl.toml's [dataserver] "
                "table, or AWL_DATA_URL)")
    if root is not None and root.exists() and not root.is_dir():
        raise ConfigurationError(f"data directory {root} is a file, not a directory; name the "
                                 f"data server's directory with {settings}")
    if root is not None and not root.exists() and not create:
        raise ConfigurationError(f"data directory {root} does not exist; name the data "
                                 f"server's directory with {settings}, or pass --create to "
                                 "make a new one")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``dataserver serve`` and ``dataserver gc`` to the ``awl`` parser."""
    group = commands.add_parser("dataserver", help="the HTTP data server and its files")
    sub = group.add_subparsers(dest="dataserver_command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP data server (writes need a token)")
    serve.add_argument("--storage", help="directory or s3:// bucket it fronts (default: "
                       "AWL_DATASERVER_STORAGE, else AWL_DATA_URL, else ./awl-data)")
    serve.add_argument("--create", action="store_true",
                       help="make the storage directory if it does not exist (else a missing "
                       "one is refused: a mistyped path is not served as an empty store)")
    serve.add_argument("--schema", help="PostgreSQL schema of the database")
    serve.add_argument("--token", action="append", default=[],
                       help="bearer token accepted for writes (repeatable; default "
                       "AWL_DATASERVER_TOKENS)")
    serve.add_argument("--max-upload", help="largest upload, e.g. 10G (default 100G)")
    serve.add_argument("--lineage-depth", type=link_count, default=2,
                       help="links of ancestry a file carries in full with ?with_lineage=1 "
                       "(default 2; pointers beyond)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default %(default)s: this machine only)")
    serve.add_argument("--port", type=port_number, default=8300,
                       help="port to listen on (default %(default)s)")
    serve.add_argument("--log-level", choices=LOG_LEVELS, default="info",
                       help="how much the server logs (default %(default)s)")
    serve.set_defaults(run=_serve)

    gc = sub.add_parser("gc", help="remove files that no committed object refers to, and "
                        "uploads abandoned half-way")
    gc.add_argument("--dry-run", action="store_true", help="only list them")
    gc.add_argument("--grace", default="24h",
                    help="leave files younger than this (default 24h; 90s, 15m, 7d)")
    gc.add_argument("--data-url", help="the data server (default AWL_DATA_URL)")
    gc.add_argument("--schema", help="PostgreSQL schema of the database")
    gc.set_defaults(run=_gc)
