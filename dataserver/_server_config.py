"""`ServerConfig`: how an HTTP data server is set up (its storage, the database that says
which files are referenced, write tokens, upload limit), from explicit arguments, then
environment variables, then the ``[dataserver]`` table of the config file, then defaults."""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awlineage.config import FILE_SETTINGS
from dataserver._errors import ServerConfigError

DEFAULT_STORAGE = "./awl-data"
DEFAULT_MAX_UPLOAD = 100 * 1024**3
MIN_TOKEN_LENGTH = 16

_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)

ENVIRONMENT = {
    "storage_url": "AWL_DATASERVER_STORAGE",
    "database_url": "AWL_DATABASE_URL",
    "database_schema": "AWL_DATABASE_SCHEMA",
    "tokens": "AWL_DATASERVER_TOKENS",
    "max_upload_bytes": "AWL_DATASERVER_MAX_UPLOAD",
}
"""The environment variable of each setting."""

FILE_KEYS = {
    "storage_url": "storage",
    "database_url": "database_url",
    "database_schema": "database_schema",
    "tokens": "tokens",
    "max_upload_bytes": "max_upload",
}
"""The key of each setting in the ``[dataserver]`` table of the config file."""


@dataclass(frozen=True)
class ServerConfig:
    """The configuration of one HTTP data server.

    Attributes
    ----------
    storage_url
        The back end it fronts: a directory or an S3 bucket (see `open_storage`).
    database_url
        The database whose committed DataObjects it protects: a file they refer to cannot
        be deleted. Without one the server refuses every delete.
    database_schema
        PostgreSQL schema of that database.
    tokens
        Bearer tokens accepted for writes and deletes (at least 16 characters each).
        Without any, the server is read-only. Reads need no token.
    max_upload_bytes
        Largest file accepted.
    """

    storage_url: str = DEFAULT_STORAGE
    database_url: str | None = None
    database_schema: str | None = None
    tokens: tuple[str, ...] = field(default=(), repr=False)
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD

    def __post_init__(self) -> None:
        if self.storage_url.split("://")[0].lower() in ("http", "https"):
            raise ServerConfigError(
                f"storage_url {self.storage_url!r}: the HTTP data server fronts a directory or "
                "an S3 bucket, not another HTTP data server"
            )
        for token in self.tokens:
            if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token):
                raise ServerConfigError(
                    f"a write token must be at least {MIN_TOKEN_LENGTH} characters without "
                    f"spaces (one given has {len(token)})"
                )
        if self.max_upload_bytes <= 0:
            raise ServerConfigError(f"max_upload_bytes={self.max_upload_bytes} is not positive")

    @classmethod
    def load(cls, **explicit: Any) -> ServerConfig:
        """Resolve every setting from, in order: `explicit` (None means not given), the
        environment (`ENVIRONMENT`), the ``[dataserver]`` table of the config file
        (``AWL_CONFIG`` or ``./awl.toml``; the database settings may also be top level),
        then the defaults. The storage falls back to ``AWL_DATA_URL`` when that names a
        directory or a bucket.

        Raises
        ------
        ServerConfigError
            Naming the setting and where its bad value came from.
        """
        unknown = set(explicit) - set(ENVIRONMENT)
        if unknown:
            raise ServerConfigError(f"unknown data server setting(s): {', '.join(sorted(unknown))}")
        file_values = _config_file()
        section = file_values.get("dataserver", {})
        if not isinstance(section, dict):
            raise ServerConfigError("the config file's 'dataserver' entry is not a table")
        _refuse_unknown_names(section)
        resolved: dict[str, Any] = {}
        for key, variable in ENVIRONMENT.items():
            value, origin = explicit.get(key), f"argument {key}"
            if value is None and os.environ.get(variable):
                value, origin = os.environ[variable], f"environment variable {variable}"
            if value is None:
                value = section.get(FILE_KEYS[key])
                origin = f"{FILE_KEYS[key]} in the config file's [dataserver]"
            if value is None and key.startswith("database"):
                value, origin = file_values.get(key), f"{key} in the config file"
            if value is not None:
                resolved[key] = _convert(key, value, origin)
        if "storage_url" not in resolved:
            data_url = os.environ.get("AWL_DATA_URL") or file_values.get("data_url")
            if data_url and not str(data_url).lower().startswith(("http://", "https://")):
                resolved["storage_url"] = str(data_url)
        return cls(**resolved)


def _refuse_unknown_names(section: dict[str, Any]) -> None:
    """Refuse a name in the ``[dataserver]`` table that the server does not read (a typo
    such as ``max_uplod`` would leave the setting at its default without a word)."""
    import difflib

    known = set(FILE_KEYS.values())
    unknown = sorted(set(section) - known)
    if unknown:
        named = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=1)
            named.append(f"{name!r}" + (f" (did you mean {close[0]}?)" if close else ""))
        raise ServerConfigError(f"the config file's [dataserver] sets {', '.join(named)}, "
                                "which the data server does not read; its settings are "
                                f"{', '.join(sorted(known))}")


def _convert(key: str, value: Any, origin: str) -> Any:
    if key == "tokens":
        if isinstance(value, str):
            return tuple(t.strip() for t in value.split(",") if t.strip())
        if isinstance(value, list | tuple) and all(isinstance(t, str) for t in value):
            return tuple(value)
        raise ServerConfigError(f"{origin}: give a list of strings")
    if key == "max_upload_bytes":
        return parse_size(value, origin)
    if not isinstance(value, str):
        raise ServerConfigError(f"{origin}: expected a string, got {value!r}")
    return value


def parse_size(value: Any, what: str = "size") -> int:
    """Bytes from ``1048576``, ``"512M"``, ``"10GiB"``, ``"1t"`` (binary units).

    Raises
    ------
    ServerConfigError
        Naming `what` and the value.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ServerConfigError(f"{what}: {value!r} is not a size (such as 1048576, 512M, 10G)")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def _config_file() -> dict[str, Any]:
    explicit = os.environ.get("AWL_CONFIG")
    path = Path(explicit) if explicit else Path("awl.toml")
    if not path.exists():
        if explicit:
            raise ServerConfigError(f"AWL_CONFIG names {path}, which does not exist")
        return {}
    try:
        with path.open("rb") as handle:
            values = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ServerConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    unknown = sorted(set(values) - FILE_SETTINGS)
    if unknown:  # the same file awl reads: the same names are refused
        raise ServerConfigError(f"config file {path} sets {', '.join(map(repr, unknown))}, "
                                "which awlineage does not read; the settings are "
                                f"{', '.join(sorted(FILE_SETTINGS))}")
    return values
