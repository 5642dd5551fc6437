"""Running the ``awl`` command as a user would, in a separate process, on a test's database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_awl(db, *args: str, cwd: Path = REPO, timeout: int = 300, stdout: int | None = None,
            **environment: str) -> subprocess.CompletedProcess:
    """``awl [--database URL] ARGS`` with the repository importable; `db` None leaves the
    database to the defaults (a file in `cwd`). `stdout`, a file descriptor, receives the
    standard output instead of the result (a terminal, for example)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), **environment)
    prefix: list[str] = []
    if db is not None:
        prefix = ["--database", db.url.render_as_string(hide_password=False)]
        if db.schema:
            env["AWL_DATABASE_SCHEMA"] = db.schema
    return subprocess.run([sys.executable, "-m", "awlineage.cli", *prefix, *args],
                          stdout=subprocess.PIPE if stdout is None else stdout,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=cwd, timeout=timeout)


def run_awl_script(*args: str, cwd: Path, path: tuple[Path, ...] = (), timeout: int = 300,
                   **environment: str) -> subprocess.CompletedProcess:
    """The installed ``awl`` console script (not ``python -m``, which puts the working
    directory on the module path by itself), with this repository and `path` importable."""
    script = Path(sys.executable).with_name("awl")
    env = dict(os.environ, **environment)
    env["PYTHONPATH"] = os.pathsep.join(map(str, (REPO, *path)))
    return subprocess.run([str(script), *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)
