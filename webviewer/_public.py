"""Public mode: what the viewer hides when it serves people outside the machine it runs on.

With ``viewer_public`` on (``AWL_VIEWER_PUBLIC=1``, ``viewer_public = true`` in ``awl.toml``,
or ``awl serve --public``), no page and no JSON answer shows the server's paths, users, hosts
or process ids:

- values under a key ``user``, ``host`` or ``pid`` (also prefixed, as PROV's ``awl:host``)
  become ``(hidden)``, a PROV agent ``user/<name>`` becomes ``user/(hidden)``, and so does
  who recorded a retraction in its sentence (``was retracted on 2026-12-01 by (hidden): ...``);
- an absolute path under the data directory or the working directory becomes relative to it;
  one under any other server directory (home, the temporary directory, Python's prefix and
  module path, the directory the viewer's packages are installed in) becomes just its last
  name.

Pages pass their data through `Redactor.data` before it is rendered (`webviewer._respond`):
a page's JSON answer once it is all JSON values, so that nothing is left to hide in it, and
it is marked so (`REDACTED`); and `PublicMode`, a middleware, passes every other text answer
(HTML, JSON, XML, plain text) through `Redactor.text` as well, so an answer built outside the
page machinery (exports, DataLink) is covered too. Binary answers (FITS, PNG, files) are left
as they are.

Lineage bundles (``/api/bundle``, for other sites) are refused with 403 (`BUNDLES_REFUSED`):
a bundle's records carry their runs' users, hosts, pids and call traces under the content
hashes that the importing site verifies and that identify each object across sites. Hidden
values would either fail that check or, hashed anew, make a second object under the same id,
which every later copy or pointer from the origin would contradict.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from awlineage import config

HIDDEN = "(hidden)"
HIDDEN_KEYS = frozenset({"user", "host", "pid", "hostname", "username"})
"""Keys whose values public mode hides (compared lower-cased, after any ``prefix:``)."""
NAME_KEYS = ("name", "path", "attribute", "key", "field")
"""Keys of a row that name what the row's other values are (a diff row, an attribute row)."""
DESCRIBING_KEYS = (*NAME_KEYS, "doc", "kind", "type", "cause", "unit", "title")
"""Keys of such a row that describe the field rather than hold its value: kept."""
BUNDLES_REFUSED = (
    "lineage bundles are not served by a public viewer (awl serve --public, "
    "AWL_VIEWER_PUBLIC or viewer_public in awl.toml): a bundle carries its process runs' "
    "users, hosts, pids and server paths under the content hashes other sites verify, so "
    "they cannot be hidden from it; serve /api/bundle from a viewer without --public")
"""The answer (403) of ``/api/bundle`` in public mode."""
REDACTED = {"x-awl-redacted": "1"}
"""The header of an answer redacted whole where it was made (a page's JSON): `PublicMode`
passes it on as it is, without the header."""
_AGENT = re.compile(r"\buser/[^\s\"'<>/]+")
_RETRACTED_BY = re.compile(r"(\bwas (?:retracted|reinstated) on [0-9?-]+ by )[^\s\"'<>:]+(?=:)")
"""Who recorded a retraction, in its sentence (the planner's reasons, the viewer's marks)."""
_PATH_TAIL = r"(?:/[^\s\"'<>,;:()\[\]{}]*)?"
_PATH_END = r"(?![^\s\"'<>,;:()\[\]{}/])"
"""A root ends where a path's name does: ``/tmpfoo`` is not under ``/tmp``."""


def public_setting(explicit: bool | None = None) -> bool:
    """Whether public mode is on: `explicit`, else ``AWL_VIEWER_PUBLIC`` or ``awl.toml``'s
    ``viewer_public`` (``1``, ``true``, ``yes``, ``on``); off by default."""
    value = config.setting("viewer_public", explicit)
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def server_directories() -> list[str]:
    """Directories of this server whose paths public mode elides: home, the temporary
    directory, Python's prefixes and module path, and the directory the viewer's own packages
    are installed in (a source checkout, for an editable install: not on the module path)."""
    found = [str(Path.home()), tempfile.gettempdir(), sys.prefix, sys.base_prefix,
             sys.exec_prefix, *sys.path, *package_roots()]
    return [d for d in found if d and os.path.isabs(d)]


def package_roots() -> list[str]:
    """The directories holding awlineage and the viewer's packages, wherever they are
    installed: their call traces and errors name files under them."""
    import awlineage
    import dataserver
    import webviewer

    return sorted({str(Path(module.__file__ or "").resolve().parent.parent)
                   for module in (awlineage, dataserver, webviewer)})


class Redactor:
    """Hides users, hosts, pids and server paths in page data and answer text.

    Parameters
    ----------
    relative_to
        Directories whose paths are shown relative to them (the data directory, the working
        directory); the first that holds a path wins.
    elided
        Directories whose paths are shown as their last name only.
    """

    def __init__(self, relative_to: Iterable[str], elided: Iterable[str] = ()) -> None:
        roots: dict[str, bool] = {}
        for directory, relative in [*((d, True) for d in relative_to),
                                    *((d, False) for d in elided)]:
            for form in {directory, os.path.realpath(directory)}:
                form = form.rstrip("/")
                if form.count("/") >= 1 and len(form) > 1 and form not in roots:
                    roots[form] = relative
        # Longest first: a path is shortened by the deepest directory that holds it.
        self._roots = sorted(roots.items(), key=lambda item: -len(item[0]))

    def text(self, text: str) -> str:
        """`text` with server paths shortened and PROV user agents hidden."""
        if "/" not in text:  # no path and no agent: most of a page's strings
            return _RETRACTED_BY.sub(rf"\g<1>{HIDDEN}", text) if "was re" in text else text
        if "user/" in text:
            text = _AGENT.sub(f"user/{HIDDEN}", text)
        if "was re" in text:
            text = _RETRACTED_BY.sub(rf"\g<1>{HIDDEN}", text)
        present = tuple(i for i, (root, _) in enumerate(self._roots) if root in text)
        if present:  # most texts hold no server path: no pattern is run over them
            text = self._pattern(present).sub(self._shorten, text)
        return text

    @functools.lru_cache(maxsize=64)  # noqa: B019 - one redactor per viewer, kept for its life
    def _pattern(self, present: tuple[int, ...]) -> re.Pattern[str]:
        """The pattern of the roots numbered `present` (those a text holds), longest first:
        the same matches as one of every root, as a root absent from a text matches none of
        it, at a fraction of the cost of trying each root at each position."""
        # The leading "/" is outside the alternatives so that the search skips to each "/"
        # (60x faster than trying the look-behind at every position of a 256 kB page).
        return re.compile("/(?<=(?<![\\w.])/)(?:" + "|".join(
            f"(?P<r{i}>{re.escape(self._roots[i][0][1:])}{_PATH_END}{_PATH_TAIL})"
            for i in present) + ")")

    def _shorten(self, match: re.Match[str]) -> str:
        index = int(match.lastgroup[1:]) if match.lastgroup else 0
        root, relative = self._roots[index]
        rest = match.group(0)[len(root):].strip("/")
        if relative:
            return rest or "."
        return rest.rsplit("/", 1)[-1] or HIDDEN

    def data(self, value: Any) -> Any:
        """A copy of JSON-like `value` with hidden keys' values replaced and every string
        (keys too) passed through `text`."""
        if isinstance(value, dict):
            if _names_hidden(value):  # a row naming a hidden field: {"name": "host", ...}
                return {self._key(k): v if k in DESCRIBING_KEYS else _hide_all(v)
                        for k, v in value.items()}
            return {self._key(k): HIDDEN if _hidden_key(k) and v is not None else self.data(v)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        if isinstance(value, str):  # Markup stays Markup
            return type(value)(self.text(value))
        return value

    def _key(self, key: Any) -> Any:
        return self.text(key) if isinstance(key, str) else key


def _is_text(media: str) -> bool:
    """Whether an answer of this media type is text public mode rewrites (HTML, plain text,
    JSON and XML of any kind)."""
    kind = media.split(";")[0].strip()
    return kind.startswith("text/") or "json" in kind or "xml" in kind


def _hidden_key(key: Any) -> bool:
    return isinstance(key, str) and _hidden_name(key)


@functools.lru_cache(maxsize=4096)  # a page's keys are few names, repeated on every row
def _hidden_name(key: str) -> bool:
    last = re.split(r"[.:\[\]]", key.strip("]"))[-1]
    return last.lower() in HIDDEN_KEYS


def _hide_all(value: Any) -> Any:
    """`value` with every text and number in it hidden, its shape (dicts, lists, flags,
    Nones) kept so that a page still renders it."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _hide_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_hide_all(v) for v in value]
    if value is None or isinstance(value, bool):
        return value
    return HIDDEN


def _names_hidden(row: dict[Any, Any]) -> bool:
    """Whether `row` describes a hidden field: its name, path or attribute is one."""
    return any(_hidden_key(row.get(k)) for k in NAME_KEYS)


def redactor_for(data_url: str | None) -> Redactor:
    """The redactor of a viewer whose files are under `data_url` (a directory or a
    ``file://`` URL; other URLs hold no server path)."""
    relative = []
    if data_url:
        local = data_url[len("file://"):] if data_url.startswith("file://") else data_url
        if "://" not in local:
            relative.append(os.path.abspath(local))
    relative.append(os.getcwd())
    return Redactor(relative, server_directories())


_REDACTED_KEY = next(iter(REDACTED)).encode("latin-1")


class PublicMode:
    """Middleware: every text answer passed through `Redactor` (JSON re-encoded through
    `Redactor.data`); binary answers are passed on untouched."""

    def __init__(self, app: ASGIApp, redactor: Redactor) -> None:
        self.app = app
        self.redactor = redactor

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                media = headers.get(b"content-type", b"").decode("latin-1").lower()
                if headers.pop(_REDACTED_KEY, None) is not None or not _is_text(media):
                    start["pass"] = True
                    await send({**message, "headers": list(headers.items())})
                    return
                start["message"] = message
                return
            if start.get("pass"):
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await self._send(start["message"], b"".join(chunks), send)

        await self.app(scope, receive, capture)

    async def _send(self, start: Message, body: bytes, send: Send) -> None:
        headers = dict(start.get("headers", []))
        media = headers.get(b"content-type", b"").decode("latin-1").lower()
        text = body.decode("utf-8", errors="replace")
        if "json" in media:
            try:
                text = json.dumps(self.redactor.data(json.loads(text)), ensure_ascii=False,
                                  separators=(",", ":"))
            except ValueError:
                text = self.redactor.text(text)
        else:
            text = self.redactor.text(text)
        out = text.encode("utf-8")
        headers[b"content-length"] = str(len(out)).encode()
        await send({**start, "headers": list(headers.items())})
        await send({"type": "http.response.body", "body": out})


def redact(redactor: Redactor | None, data: dict[str, Any]) -> dict[str, Any]:
    """`data` as public mode shows it (unchanged when `redactor` is None)."""
    return data if redactor is None else redactor.data(data)
