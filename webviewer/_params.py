"""Validated path and query parameters: each bad value is a 400 that names the parameter."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request

from webviewer._errors import BadRequest

MAX_ID_DIGITS = 19
"""Decimal digits of the largest object_id (63 bits)."""


def object_id(request: Request, name: str = "object_id") -> int:
    """The object id in path parameter `name`: decimal digits only."""
    return parse_object_id(request.path_params.get(name, ""), name)


def parse_object_id(text: str, name: str = "object_id") -> int:
    """An object id from text, or a 400 naming `name` and the text."""
    text = str(text).strip()
    if not text.isdigit() or not text.isascii() or len(text) > MAX_ID_DIGITS:
        raise BadRequest(f"{name} must be an object id (up to {MAX_ID_DIGITS} decimal "
                         f"digits), not {_quoted(text)}")
    value = int(text)
    if value >= 2**63:
        raise BadRequest(f"{name} {text} is larger than any object id")
    return value


def int_param(request: Request, name: str, default: int, *, low: int, high: int) -> int:
    """Query parameter `name` as an integer in [low, high]; `default` when absent."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise BadRequest(f"parameter {name} must be an integer, not {_quoted(text)}") from None
    if not low <= value <= high:
        raise BadRequest(f"parameter {name} must be between {low} and {high}, not {value}")
    return value


def choice_param(request: Request, name: str, choices: Sequence[str], default: str) -> str:
    """Query parameter `name`, one of `choices`; `default` when absent."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    if text not in choices:
        raise BadRequest(f"parameter {name} must be one of {', '.join(choices)}, "
                         f"not {_quoted(text)}")
    return text


def text_param(request: Request, name: str, *, limit: int, default: str = "") -> str:
    """Query parameter `name` as text of at most `limit` characters."""
    text = request.query_params.get(name, default)
    if len(text) > limit:
        raise BadRequest(f"parameter {name} is {len(text)} characters long; the limit is "
                         f"{limit}")
    return text


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")
