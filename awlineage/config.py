"""Where settings come from: explicit arguments, then ``AWL_*`` environment variables, then a
TOML config file (``AWL_CONFIG`` or ``./awl.toml``), then the embedded defaults."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from awlineage.errors import ConfigurationError

DEFAULTS: dict[str, Any] = {
    "database_url": "sqlite:///awlineage.db",
    "database_schema": None,
    "data_url": "./awl-data",
}
"""The embedded defaults: a SQLite file and a data directory in the working directory."""


FILE_SETTINGS = frozenset({
    *DEFAULTS, "data_token", "cache_dir", "cache_bytes", "jvm_archive_dir", "site_url",
    "site_timeout", "viewer_public", "region_query_stats",
    "dataserver",  # the table of the data server's own settings (`awl dataserver serve`)
})
"""The names a config file may set: a name awlineage never reads is a mistake to name, not
to skip (``databse_url`` would leave the database at its default without a word)."""


def _config_file() -> dict[str, Any]:
    explicit = os.environ.get("AWL_CONFIG")
    path = Path(explicit) if explicit else Path("awl.toml")
    if not path.exists():
        if explicit:
            raise ConfigurationError(f"AWL_CONFIG names {path}, which does not exist")
        return {}
    try:
        with path.open("rb") as handle:
            values = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"config file {path} is not valid TOML: {exc}") from exc
    unknown = sorted(set(values) - FILE_SETTINGS)
    if unknown:
        raise ConfigurationError(f"config file {path} sets {_named(unknown)}, which "
                                 f"awlineage does not read; the settings are "
                                 f"{', '.join(sorted(FILE_SETTINGS))}")
    return values


def _named(unknown: list[str]) -> str:
    """The unknown names, each with the setting it is likely a typo of."""
    import difflib

    named = []
    for name in unknown:
        close = difflib.get_close_matches(name, FILE_SETTINGS, n=1)
        named.append(f"{name!r}" + (f" (did you mean {close[0]}?)" if close else ""))
    return ", ".join(named)


def setting(name: str, explicit: Any = None) -> Any:
    """Return the value of setting `name` from the first source that has it.

    Parameters
    ----------
    name
        Setting name, such as ``"database_url"``; its environment variable is ``AWL_`` plus
        the upper-cased name (``AWL_DATABASE_URL``).
    explicit
        A value given by the caller; wins when not None.

    Returns
    -------
    Any
        The value: `explicit`, the environment variable, the config file's entry or the
        default (None for a name none of them has).

    Raises
    ------
    ConfigurationError
        When ``AWL_CONFIG`` names a missing file, or the config file is not valid TOML or
        sets a name that is none of `FILE_SETTINGS` (naming it, and the setting it is
        likely a typo of).

    Examples
    --------
    >>> setting("database_url", "sqlite:///elsewhere.db")
    'sqlite:///elsewhere.db'
    """
    if explicit is not None:
        return explicit
    env = os.environ.get("AWL_" + name.upper())
    if env:
        return env
    from_file = _config_file().get(name)
    if from_file is not None:
        return from_file
    return DEFAULTS.get(name)


__all__ = ["DEFAULTS", "FILE_SETTINGS", "setting"]
