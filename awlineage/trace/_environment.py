"""Where and with what a make() runs: host, user, process, Python and key package versions."""

from __future__ import annotations

import functools
import getpass
import json
import os
import platform
import socket
import sys
from dataclasses import dataclass
from importlib import metadata

# Distributions whose versions a run records when the process has imported them.
KEY_PACKAGES = ("awlineage", "numpy", "scipy", "astropy", "sqlalchemy", "psycopg", "pyspark",
                "astroscrappy", "sep", "reproject", "minio")


@dataclass(frozen=True)
class Environment:
    """The run-time environment a process run records."""

    host: str
    user: str
    python: str
    packages: str
    """JSON object: distribution name -> version."""


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        return f"uid {os.getuid()}"


@functools.cache
def _packages_json(names: tuple[str, ...]) -> str:
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = getattr(sys.modules[name], "__version__", "unknown")
    return json.dumps(found, sort_keys=True)


@functools.cache
def _static() -> tuple[str, str, str]:
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return socket.gethostname(), _user(), python


def current_environment() -> Environment:
    """This process's environment (package versions of what it has imported so far)."""
    host, user, python = _static()
    imported = tuple(name for name in KEY_PACKAGES if name in sys.modules)
    return Environment(host, user, python, _packages_json(imported))
