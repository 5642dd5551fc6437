"""The web object viewer (and, later, the dependency cutout service): one read-only ASGI app.

``awl serve`` runs it under uvicorn; ``uvicorn --factory webviewer:create_app`` does the same
with the settings from the environment (``AWL_DATABASE_URL``, ``AWL_DATA_URL``). Every page
answers JSON on the same URL when asked with ``Accept: application/json``.
"""

from webviewer._app import create_app
from webviewer._graph_walk import WalkLimits, walk_lineage
from webviewer._limits import Limits

__all__ = ["Limits", "WalkLimits", "create_app", "walk_lineage"]
