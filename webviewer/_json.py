"""Values as JSON: what a page's data turns into when a client asks for
``application/json``."""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from awlineage import DBObject


def jsonable(value: Any) -> Any:
    """`value` made of JSON types only: objects become their summary, datetimes ISO text,
    numpy scalars Python numbers, non-finite floats text."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, DBObject):
        return object_ref(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    return str(value)


def object_ref(obj: DBObject) -> dict[str, Any]:
    """A stored object as a reference: id (as a number, and as text in ``id``: ids have 63
    bits, past the integers a JavaScript number holds exactly), class and its page."""
    return {"object_id": obj.object_id, "id": str(obj.object_id), "class": type(obj).__name__,
            "url": f"/obj/{obj.object_id}"}
