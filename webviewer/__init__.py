"""The web object viewer (and, later, the dependency cutout service): one read-only ASGI app.

``awl serve`` runs it under uvicorn; ``uvicorn --factory webviewer:create_app`` does the same
with the settings from the environment (``AWL_DATABASE_URL``, ``AWL_DATA_URL``). Every page
answers JSON on the same URL when asked with ``Accept: application/json``.
"""

from awlineage.extras import require_extra

# Before the first of them is imported: without the web extra, importing the viewer is one
# line naming the extra (and ``awl --help`` lists ``serve`` as not available, saying so).
require_extra("starlette", "web", "the web viewer")
require_extra("jinja2", "web", "the web viewer")

from webviewer._app import create_app  # noqa: E402
from webviewer._graph_walk import WalkLimits, walk_lineage  # noqa: E402
from webviewer._limits import Limits  # noqa: E402

__all__ = ["Limits", "WalkLimits", "create_app", "walk_lineage"]
