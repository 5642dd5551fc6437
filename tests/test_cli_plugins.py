"""Commands other packages add to ``awl`` through the ``awlineage.commands`` entry points: a
package made here (a module and its ``.dist-info``) declares them, and ``awl`` runs as a user
runs it, in a separate process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PLUGIN = '''
import argparse

from awlineage.errors import AwlError


def add_hello(commands: argparse._SubParsersAction) -> None:
    hello = commands.add_parser("hello", help="say hello from a plug-in")
    hello.add_argument("--name", default="world")
    hello.set_defaults(run=_hello)


def _hello(args: argparse.Namespace) -> int:
    if args.name == "nobody":
        raise AwlError("nobody to greet")
    print(f"hello {args.name}")
    return 0


def add_needy(commands: argparse._SubParsersAction) -> None:
    needy = commands.add_parser("needy", help="needs a package not installed, when run")
    needy.set_defaults(run=_needy)


def _needy(args: argparse.Namespace) -> int:
    import awl_no_such_package  # noqa: F401

    return 0


def add_make(commands: argparse._SubParsersAction) -> None:
    commands.add_parser("make", help="tries to replace a built-in command")
'''
BROKEN = """
import pathlib

pathlib.Path(__file__).with_name("loaded").write_text("")  # to see whether awl imported it
import awl_no_such_package_either  # noqa: E402, F401
"""
ENTRY_POINTS = """
[awlineage.commands]
hello = fakeplugin.cli:add_hello
needy = fakeplugin.cli:add_needy [extra1]
broken = fakeplugin.broken:add [extra2]
make = fakeplugin.cli:add_make
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder holding the package ``fakeplugin`` and its installed metadata."""
    package = tmp_path / "site" / "fakeplugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "cli.py").write_text(PLUGIN)
    (package / "broken.py").write_text(BROKEN)
    meta = tmp_path / "site" / "fakeplugin-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplugin\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    return tmp_path / "site"


def awl(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(REPO), str(site))))
    return subprocess.run([sys.executable, "-m", "awlineage.cli",
                           "--database", f"sqlite:///{site / 'plugins.db'}", *args],
                          capture_output=True, text=True, env=env, cwd=site, timeout=300)


def test_a_plugin_command_runs_with_its_arguments(site) -> None:
    result = awl(site, "hello", "--name", "Edwin")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello Edwin\n"


def test_a_plugin_error_is_one_awl_line(site) -> None:
    result = awl(site, "hello", "--name", "nobody")
    assert result.returncode == 2
    assert result.stderr == "awl: AwlError: nobody to greet\n"


def test_a_package_missing_when_a_plugin_runs_names_its_extra(site) -> None:
    result = awl(site, "needy")
    assert result.returncode == 2
    assert result.stderr == ('awl: awl needy needs awl_no_such_package, which is not installed: '
                             'pip install "fakeplugin[extra1]"\n')


def test_a_plugin_that_cannot_load_is_listed_and_says_why_when_run(site) -> None:
    listed = awl(site, "--help")
    assert listed.returncode == 0, listed.stderr
    assert "hello" in listed.stdout and "(not available:" in listed.stdout
    run = awl(site, "broken", "--any", "argument")
    assert run.returncode == 2
    assert run.stderr == ('awl: awl broken needs awl_no_such_package_either, which is not '
                          'installed: pip install "fakeplugin[extra2]"\n')


def test_a_built_in_command_loads_no_plugin(site) -> None:
    result = awl(site, "schema", "dump", "--output", str(site / "schema"))
    assert result.returncode == 0, result.stderr
    assert (site / "schema" / "sqlite.sql").is_file()
    assert not (site / "fakeplugin" / "loaded").exists()
    awl(site, "--help")  # and the marker does mark a load
    assert (site / "fakeplugin" / "loaded").exists()


def test_a_plugin_cannot_replace_a_built_in_command(site) -> None:
    result = awl(site, "make", "--help")
    assert result.returncode == 0, result.stderr
    assert "--dry-run" in result.stdout  # the built-in make, not the plug-in's
