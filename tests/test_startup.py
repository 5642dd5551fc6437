"""Starting is quick: ``import awlineage`` and ``awl --help`` import none of the heavy packages
(SQLAlchemy, numpy, scipy, astropy, Spark, ...); each is imported where a name that needs it
is first used. Module sets, not timings (the timings: benchmarks/startup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("sqlalchemy", "numpy", "scipy", "astropy", "pyspark", "matplotlib", "pandas", "lark",
         "prov", "psycopg", "boto3", "minio", "astroscrappy", "sep", "reproject")
"""Packages that take a tenth of a second or more to import, or that an extra installs."""

_LOADED = "import json, sys; print(json.dumps(sorted(m for m in sys.modules if " \
          f"m.split('.')[0] in {HEAVY!r} or m.startswith(('awlineage.', 'targets.', " \
          "'webviewer.')))))"


def _modules_after(code: str) -> list[str]:
    """The heavy and project modules a fresh interpreter holds after running `code`."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-c", f"{code}\n{_LOADED}"], capture_output=True,
                            text=True, env=env, cwd=REPO, timeout=120, check=True)
    return json.loads(result.stdout.splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return sorted({name.split(".")[0] for name in modules if name.split(".")[0] in HEAVY})


def test_import_awlineage_imports_no_heavy_package() -> None:
    loaded = _modules_after("import awlineage")
    assert _heavy(loaded) == []
    assert "awlineage.database" not in loaded


def test_awl_help_imports_no_heavy_package_and_not_the_pipeline() -> None:
    loaded = _modules_after(
        "import contextlib, io\nfrom awlineage.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])")
    assert _heavy(loaded) == []
    assert "targets.cli" in loaded  # the plug-ins were loaded: they add demo and ingest
    assert not [name for name in loaded if name.startswith(("targets.pipeline",
                                                            "awlineage.database."))]


def test_a_commit_through_the_database_layer_alone_keeps_the_lineage_hook() -> None:
    """The closure index is kept by a write hook of the lineage package: a program that
    imported only the database and persistence layers still runs it on commit."""
    loaded = _modules_after(
        "import tempfile, os\n"
        "from awlineage.database import connect\n"
        "from awlineage.persistence import DBObject, persistent\n"
        "class StartupNote(DBObject):\n"
        "    text = persistent('Text', str, '')\n"
        "db = connect('sqlite:///' + os.path.join(tempfile.mkdtemp(), 'n.db'), create=True)\n"
        "StartupNote(text='x').commit()")
    assert "awlineage.lineage._closure_upkeep" in loaded


def test_awl_schema_dump_in_a_fresh_process_finds_every_framework_table() -> None:
    """The DDL names the persistent classes of every package, though a fresh ``awl`` process
    has imported none of them when it asks."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-m", "awlineage.cli", "schema", "dump", "--check"],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
