"""The web object viewer (and, later, the dependency cutout service): one read-only ASGI app.

``awl serve`` runs it under uvicorn; ``uvicorn --factory webviewer:create_app`` does the same
with the settings from the environment (``AWL_DATABASE_URL``, ``AWL_DATA_URL``). Every page
answers JSON on the same URL when asked with ``Accept: application/json``.
"""

import importlib
from typing import TYPE_CHECKING, Any

from awlineage.extras import require_extra

# Before the first of them is imported: without the web extra, importing the viewer is one
# line naming the extra (and ``awl --help`` lists ``serve`` as not available, saying so).
require_extra("starlette", "web", "the web viewer")
require_extra("jinja2", "web", "the web viewer")

if TYPE_CHECKING:
    from webviewer._app import create_app
    from webviewer._graph_walk import WalkLimits, walk_lineage
    from webviewer._limits import Limits

_WHERE = {"create_app": "webviewer._app", "Limits": "webviewer._limits",
          "WalkLimits": "webviewer._graph_walk", "walk_lineage": "webviewer._graph_walk"}
"""The module of each name, imported on first use: ``awl --help`` loads the ``serve`` command
from `webviewer.cli`, and needs neither the app nor astropy nor the lineage package."""


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


__all__ = ["Limits", "WalkLimits", "create_app", "walk_lineage"]
