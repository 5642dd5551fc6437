"""Running the ``awl`` command as a user would, in a separate process, on a test's database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TROUBLE = re.compile(r"Traceback \(most recent call last\)|\b\w*Warning: ")
"""A line of standard error that is a traceback or a Python warning (``file:line:
RuntimeWarning: ...``): a benchmark that finishes must not print one."""


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


def run_benchmark(script: str, *options: str, folder: Path, kept: Collection[str] = (),
                  timeout: int = 600, **environment: str) -> subprocess.CompletedProcess:
    """``python benchmarks/SCRIPT OPTIONS`` as anyone runs it from a folder of their own: an
    empty ``cwd`` under `folder`, and ``TMPDIR`` another. Fails the test unless it exits 0
    having printed something, with no traceback or Python warning on its standard error,
    the current folder still empty and nothing in ``TMPDIR`` but `kept` (the caches the
    script documents, by name)."""
    here, temporary = folder / "cwd", folder / "tmp"
    here.mkdir()
    temporary.mkdir()
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *options],
                          cwd=here, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(temporary),
                               **environment})
    assert done.returncode == 0, (f"{script} {' '.join(options)} failed (exit "
                                  f"{done.returncode}):\n{done.stdout[-2000:]}\n"
                                  f"{done.stderr[-3000:]}")
    assert done.stdout.strip(), f"{script} printed nothing"
    trouble = [line for line in done.stderr.splitlines() if TROUBLE.search(line)]
    assert trouble == [], f"{script} printed on stderr:\n{done.stderr[-3000:]}"
    assert sorted(p.name for p in here.iterdir()) == [], f"{script} wrote in the current folder"
    assert sorted({p.name for p in temporary.iterdir()} - set(kept)) == [], (
        f"{script} left these in TMPDIR")
    return done
