"""``awl serve``: the web object viewer under uvicorn, read-only, on loopback unless told
otherwise."""

from __future__ import annotations

import argparse
import os
import sys

from awlineage import config


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
        uvicorn.run("webviewer:create_app", factory=True, host=args.host, port=args.port,
                    workers=args.workers, log_level=args.log_level)
        return 0
    app = create_app(database_url, data_url=data_url, schema=schema)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


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
    serve.set_defaults(run=_serve)
