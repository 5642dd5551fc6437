"""The HTTP data server of an awlineage site: `dataserver.create_app` with deletes checked
against the database that records which files committed objects refer to."""

from __future__ import annotations

from typing import Any

from awlineage.storage._references import DatabaseReferences


def data_server_app(config: Any = None, *, storage: Any = None) -> Any:
    """The data server as an ASGI application that keeps files committed objects refer to.

    It refuses to delete a file that a committed DataObject of ``config.database_url``
    refers to (no database: deletes are refused).

    Parameters
    ----------
    config : dataserver.ServerConfig, optional
        A `dataserver.ServerConfig`; default `ServerConfig.load()` (arguments, environment,
        config file). Run it with ``uvicorn --factory awlineage.storage:data_server_app``.
    storage : dataserver.Storage, optional
        The back end, when already open (default: opened from ``config.storage_url``).

    Returns
    -------
    starlette.applications.Starlette
        The application, for an ASGI server.
    """
    from dataserver import ServerConfig, create_app

    config = config or ServerConfig.load()
    references = (DatabaseReferences(config.database_url, schema=config.database_schema)
                  if config.database_url else None)
    return create_app(config, storage=storage, references=references)
