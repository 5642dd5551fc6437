"""``pip install awlineage`` with no extras, in a fresh virtual environment: the framework works
on SQLite with the serial executor, the back ends behind extras are absent, and using one is
one line naming the extra to install.

The environment is built once for the module (from a copy of this checkout's tracked files, not
editable; the packages come from PyPI, or pip's cache), in a directory of its own outside the
checkout so that only the installed package can be imported. The module's tests run in one worker:
one build, and no two builds racing in the same source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("bare-install")
BEHIND_EXTRAS = {"pyspark": "spark", "psycopg": "postgres", "minio": "s3",
                 "starlette": "web", "uvicorn": "web", "scipy": "optimise"}
"""Packages a bare install must not bring, and the extra that does."""

TARGETS_MODULE = '''
import datetime
from awlineage import DBObject, OnePer, Process, persistent


class Exposure(DBObject):
    chip = persistent("CCD name", str, "")
    counts = persistent("Mean counts [ADU]", float, 0.0)


class Reduced(Process):
    targets = OnePer(Exposure, link="raw", copy=("chip",))
    raw = persistent("Raw exposure", Exposure, None)
    chip = persistent("CCD name", str, "")
    counts = persistent("Counts above the bias [ADU]", float, None)

    def make(self):
        self.counts = self.raw.counts - 200.0
'''


class BareInstall:
    """A virtual environment with awlineage installed without extras, and a folder to run in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.work.mkdir()
        bin_dir = root / "venv" / ("Scripts" if os.name == "nt" else "bin")
        self.python = bin_dir / "python"
        self.awl_script = bin_dir / "awl"
        # nothing of the test's own environment: no PYTHONPATH to this checkout, no settings
        self.env = {key: value for key, value in os.environ.items()
                    if key != "PYTHONPATH" and not key.startswith("AWL_")}

    def run(self, *args: str | Path, timeout: int = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in args], capture_output=True, text=True,
                              cwd=self.work, env=self.env, timeout=timeout)

    def python_code(self, code: str) -> subprocess.CompletedProcess:
        return self.run(self.python, "-c", textwrap.dedent(code))

    def awl(self, *args: str) -> subprocess.CompletedProcess:
        return self.run(self.awl_script, *args)


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> BareInstall:
    root = tmp_path_factory.mktemp("bare-install")
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(root / "venv")
    install = BareInstall(root)
    source = _tracked_copy(root / "source")
    done = install.run(install.python, "-m", "pip", "install", "--quiet",
                       "--disable-pip-version-check", "--no-compile", str(source), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return install


def _tracked_copy(destination: Path) -> Path:
    """A copy of the checkout's tracked files (as they are now, edits included), so the wheel is
    built from what a clean clone holds, without this checkout's build/ and egg-info leftovers,
    and without writing them into it."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def _one_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_bare_install_brings_no_package_of_an_extra(bare) -> None:
    found = bare.python_code(f"""
        import importlib.util
        print(sorted(m for m in {sorted(BEHIND_EXTRAS)!r} if importlib.util.find_spec(m)))
    """)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
    # and the framework imported is the installed one, not this checkout
    where = bare.python_code("import awlineage; print(awlineage.__file__)")
    assert str(bare.root / "venv") in where.stdout, where.stdout + where.stderr


def test_bare_install_commits_and_selects_on_sqlite(bare) -> None:
    result = bare.python_code("""
        from awlineage import DBObject, connect, persistent, select

        connect("sqlite:///objects.db")

        class Frame(DBObject):
            chip = persistent("CCD name", str, "")
            exptime = persistent("Exposure time [s]", float, 0.0)

        for chip, exptime in (("ccd1", 10.0), ("ccd2", 30.0), ("ccd3", 60.0)):
            Frame(chip=chip, exptime=exptime).commit()
        print(sorted(f.chip for f in select(Frame.exptime > 20)))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['ccd2', 'ccd3']"


def test_bare_install_makes_targets_with_the_serial_executor(bare) -> None:
    (bare.work / "reduce_targets.py").write_text(TARGETS_MODULE)
    result = bare.python_code("""
        from awlineage import TargetProcessor, connect, select
        from reduce_targets import Exposure, Reduced

        connect("sqlite:///made.db")
        for chip, counts in (("ccd1", 1000.0), ("ccd2", 1500.0)):
            Exposure(chip=chip, counts=counts).commit()
        report = TargetProcessor("serial", progress=False).make(Reduced)
        print(sorted((r.chip, r.counts) for r in select(Reduced)))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[('ccd1', 800.0), ('ccd2', 1300.0)]"


def test_bare_install_awl_make_uses_the_serial_executor_by_default(bare) -> None:
    (bare.work / "reduce_targets.py").write_text(TARGETS_MODULE)
    stored = bare.python_code("""
        from awlineage import connect
        from reduce_targets import Exposure

        connect("sqlite:///auto.db")
        for chip, counts in (("ccd1", 1000.0), ("ccd2", 1500.0)):
            Exposure(chip=chip, counts=counts).commit()
    """)
    assert stored.returncode == 0, stored.stderr
    made = bare.awl("--database", "sqlite:///auto.db", "make", "Reduced", "--import",
                    "reduce_targets")
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1].split() == ["total", "2", "0", "0", "0", "0"]


def test_awl_serve_without_the_web_extra_is_one_line_naming_it(bare) -> None:
    result = bare.awl("serve", "--port", "8765")
    assert result.returncode == 2
    line = _one_line(result)
    assert line.startswith("awl: ") and 'pip install "awlineage[web]"' in line


def test_importing_the_viewer_without_the_web_extra_names_it(bare) -> None:
    result = bare.python_code("import webviewer")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "awlineage.errors.MissingExtraError: the web viewer needs starlette, which is not "
        'installed: pip install "awlineage[web]"')
    assert "ModuleNotFoundError" not in result.stderr


def test_awl_help_lists_the_plugin_commands_without_their_extras(bare) -> None:
    result = bare.awl("--help")
    assert result.returncode == 0, result.stderr
    for command in ("demo", "ingest", "serve", "make", "select"):
        assert f"    {command} " in result.stdout
    serve = " ".join(result.stdout.split()).split(" serve ", 1)[1]
    assert serve.startswith('(not available: the web viewer needs starlette, which is not '
                            'installed: pip install "awlineage[web]")')


def test_a_postgresql_url_without_the_postgres_extra_is_one_line_naming_it(bare) -> None:
    result = bare.awl("--database", "postgresql+psycopg://awl@127.0.0.1:1/none", "select",
                      "Frame")
    assert result.returncode == 2
    line = _one_line(result)
    assert "psycopg" in line and 'pip install "awlineage[postgres]"' in line


def test_the_spark_executor_without_the_spark_extra_is_one_line_naming_it(bare) -> None:
    (bare.work / "reduce_targets.py").write_text(TARGETS_MODULE)
    result = bare.awl("--database", "sqlite:///spark.db", "make", "Reduced", "--import",
                      "reduce_targets", "--executor", "spark")
    assert result.returncode == 2
    line = _one_line(result)
    assert line == ('awl: the Spark executor needs pyspark, which is not installed: '
                    'pip install "awlineage[spark]", or use the serial executor '
                    '(--executor serial)')


def test_awl_demo_without_the_pipeline_extra_is_one_line_naming_it(bare) -> None:
    result = bare.awl("demo", "--executor", "serial")
    assert result.returncode == 2
    line = _one_line(result)
    assert 'pip install "awlineage[pipeline]"' in line


def test_awl_make_of_a_pipeline_class_without_the_pipeline_extra_names_it(bare) -> None:
    (bare.work / "reduce_targets.py").write_text(TARGETS_MODULE)
    stored = bare.python_code("""
        from awlineage import connect
        from reduce_targets import Exposure

        connect("sqlite:///skip.db")
        Exposure(chip="ccd1", counts=900.0).commit()
    """)
    assert stored.returncode == 0, stored.stderr
    ours = bare.awl("--database", "sqlite:///skip.db", "make", "Reduced", "--import",
                    "reduce_targets", "--executor", "serial")
    assert ours.returncode == 0, ours.stderr  # the pipeline's module is not needed for it
    theirs = bare.awl("--database", "sqlite:///skip.db", "make", "SourceList",
                      "--executor", "serial")
    assert theirs.returncode == 2
    line = _one_line(theirs)
    assert "SourceList" in line and 'pip install "awlineage[pipeline]"' in line
    mistyped = bare.awl("--database", "sqlite:///skip.db", "make", "Catalog", "--dry-run")
    assert mistyped.returncode == 2
    line = _one_line(mistyped)
    assert line.startswith("awl: UnknownClassError: unknown persistent class 'Catalog': ")
    assert line.endswith("; the process targets of targets.pipeline were not loaded (the "
                         "module needs scipy, which is not installed: "
                         'pip install "awlineage[pipeline]")')

