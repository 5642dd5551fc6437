"""The web object viewer (and, later, the dependency cutout service): one read-only ASGI app.

``awl serve`` runs it under uvicorn; ``uvicorn --factory webviewer:create_app`` does the same
with the settings from the environment (``AWL_DATABASE_URL``, ``AWL_DATA_URL``). Every page
answers JSON on the same URL when asked with ``Accept: application/json``.
"""

from typing import TYPE_CHECKING

from awlineage.extras import require_extra
from awlineage.lazy import lazy_attributes

# Before the first of them is imported: without the web extra, importing the viewer is one
# line naming the extra (and ``awl --help`` lists ``serve`` as not available, saying so).
require_extra("starlette", "web", "the web viewer")
require_extra("jinja2", "web", "the web viewer")

if TYPE_CHECKING:
    from webviewer._app import create_app
    from webviewer._graph_walk import WalkLimits, walk_lineage
    from webviewer._limits import Limits

# imported on first use, so that ``awl --help`` (which loads the ``serve`` command) does not
# import the app, astropy and the lineage package
__getattr__, __dir__ = lazy_attributes(__name__, {
    "create_app": "._app", "Limits": "._limits", "WalkLimits": "._graph_walk",
    "walk_lineage": "._graph_walk"})

__all__ = ["Limits", "WalkLimits", "create_app", "walk_lineage"]
