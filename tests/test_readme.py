"""README.md is executable: every ``python`` and ``sh`` block runs as written, section by
section, each section in a fresh folder.

The rules the README follows:

- A ``python`` block is a script: it runs in a fresh interpreter (``python3 -``) in its
  section's folder. The blocks of one ``##`` section share the folder (the SQLite file
  awlineage.db, the data directory awl-data, files a block wrote), never Python names: every
  block imports and defines what it uses.
- An ``sh`` block runs as one bash script (``set -euo pipefail``) in its section's folder, after
  the section's earlier blocks, with ``awl``, ``python`` and ``python3`` running this checkout.
  Every line in it must run as written; a variable set on one line may be used on the next.
- A synopsis (placeholders such as ``ID``, alternatives such as ``a | b``, optional ``[--x]``)
  goes in a ``text`` block, as does anything else that is not to be run; fences without a
  language (the layout) are not run either.
- ``<!-- needs: ... -->`` on the line before a block (or before the blank line above it) names
  what the block needs, and the test provides it:
  ``s3``: an S3 server on loopback (moto), credentials in the environment, and the block's
  ``127.0.0.1:9000`` replaced by the server's address;
  ``demo``: the section's folder starts as a copy of one in which
  ``awl demo --executor serial`` ran (made once per test session, about 25 s).
- Lines matching `EXEMPT` are not run, each for the reason given there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dataserver.conftest import (  # noqa: F401  (s3_endpoint: a fixture used below)
    S3_ACCESS_KEY,
    S3_SECRET_KEY,
    s3_endpoint,
)
from tests.readme_blocks import Block, Section, readme_sections, section_id

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
S3_PLACEHOLDER = "127.0.0.1:9000"
BLOCK_TIMEOUT = 300

# Command lines of sh blocks that are not run, and why. Keep it short.
EXEMPT: dict[str, str] = {
    r"\bpip install\b": "installs into the environment the tests run in",
    r"^bash \.ci/run\b": "sets up the machine and runs the whole suite, this test included",
    r"-m pytest\b": "runs (part of) the suite, which CI runs anyway",
    r"\bdataserver serve\b": "serves until stopped, on a deployment's hosts; "
                             "tests/dataserver/test_cli_serve.py runs it",
}
SETTINGS_CLEARED = ("AWL_DATABASE_URL", "AWL_DATABASE_SCHEMA", "AWL_DATA_URL", "AWL_DATA_TOKEN",
                    "AWL_CONFIG", "AWL_DATASERVER_STORAGE", "AWL_DATASERVER_TOKENS")

SECTIONS = readme_sections(README)


def _environment(tmp_path: Path) -> dict[str, str]:
    """What a user's shell would have: this checkout importable and `awl`, `python` and
    `python3` on the path, no awlineage settings, and the file cache out of the folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    awl = bin_dir / "awl"
    awl.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m awlineage.cli "$@"\n')
    awl.chmod(0o755)
    for name in ("python", "python3"):
        link = bin_dir / name
        if not link.exists():
            link.symlink_to(sys.executable)
    env = {key: value for key, value in os.environ.items() if key not in SETTINGS_CLEARED}
    env.update(PYTHONPATH=str(REPO), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
               AWL_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    return env


def _shell_script(block: Block) -> str:
    """The block as a bash script, continuation lines joined and exempt lines left out."""
    lines = block.text.replace("\\\n", " ").splitlines()
    kept = []
    for line in lines:
        reason = next((why for pattern, why in EXEMPT.items() if re.search(pattern, line)), None)
        kept.append(f": not run, {reason!r}" if reason else line)
    return "set -euo pipefail\n" + "\n".join(kept) + "\n"


@pytest.fixture(scope="session")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder in which `awl demo --executor serial` ran."""
    base = tmp_path_factory.mktemp("readme-demo")
    folder = base / "demo"
    folder.mkdir()
    result = subprocess.run([sys.executable, "-m", "awlineage.cli", "demo", "--executor", "serial"],
                            cwd=folder,
                            env=_environment(base), capture_output=True, text=True,
                            timeout=BLOCK_TIMEOUT)
    assert result.returncode == 0, f"awl demo failed:\n{result.stdout}\n{result.stderr}"
    return folder


@pytest.mark.parametrize("section", SECTIONS, ids=[section_id(s) for s in SECTIONS])
def test_readme_section_runs_as_written(section: Section, tmp_path: Path,
                                        request: pytest.FixtureRequest) -> None:
    folder = tmp_path / "work"
    if "demo" in section.needs:
        shutil.copytree(request.getfixturevalue("demo_folder"), folder)
    else:
        folder.mkdir()
    env = _environment(tmp_path)
    endpoint = None
    if "s3" in section.needs:
        endpoint = request.getfixturevalue("s3_endpoint")
        env.update(AWL_S3_ACCESS_KEY=S3_ACCESS_KEY, AWL_S3_SECRET_KEY=S3_SECRET_KEY)
    for block in section.blocks:
        text = block.text
        if "s3" in block.needs:
            assert S3_PLACEHOLDER in text, f"README.md:{block.line} needs s3 but names no " \
                                           f"{S3_PLACEHOLDER}"
            text = text.replace(S3_PLACEHOLDER, endpoint)
        if block.language == "python":
            command = [sys.executable, "-"]
        else:
            command, text = ["bash", "-s"], _shell_script(block)
        result = subprocess.run(command, input=text, cwd=folder, env=env, capture_output=True,
                                text=True, timeout=BLOCK_TIMEOUT)
        assert result.returncode == 0, (
            f"the {block.language} block at README.md:{block.line} failed "
            f"(exit {result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")


def test_readme_exempts_only_lines_it_holds() -> None:
    """An exemption that matches no line of the README is stale and goes."""
    lines = [line for section in SECTIONS for block in section.blocks if block.language == "sh"
             for line in block.text.replace("\\\n", " ").splitlines()]
    stale = [pattern for pattern in EXEMPT if not any(re.search(pattern, x) for x in lines)]
    assert not stale, f"EXEMPT patterns that match no README line: {stale}"


def test_readme_marks_only_known_needs() -> None:
    unknown = {need for section in SECTIONS for need in section.needs} - {"s3", "demo"}
    assert not unknown, f"README.md asks for unknown needs: {sorted(unknown)}"


def test_readme_blocks_are_read_by_section_with_their_needs(tmp_path: Path) -> None:
    """Only python and sh blocks are kept; a needs marker belongs to the next block alone."""
    readme = tmp_path / "README.md"
    readme.write_text("# t\n## One\n<!-- needs: s3, demo -->\n\n```python\nx = 1\n```\n"
                      "```text\nawl info ID\n```\n```sh\nawl select x\n```\n"
                      "## Two\n```\nlayout\n```\n## Three\n<!-- needs: s3 -->\nprose\n"
                      "```sh\nawl info 1\n```\n", encoding="utf-8")
    sections = readme_sections(readme)
    assert [(s.title, [(b.language, b.text, sorted(b.needs)) for b in s.blocks])
            for s in sections] == [
        ("One", [("python", "x = 1\n", ["demo", "s3"]), ("sh", "awl select x\n", [])]),
        ("Three", [("sh", "awl info 1\n", [])])]


def test_exempt_lines_are_left_out_of_a_shell_block() -> None:
    block = Block("sh", "awl select x\npython3 -m pip install -e . && awl demo\n", 1)
    assert _shell_script(block).splitlines() == [
        "set -euo pipefail", "awl select x",
        ": not run, 'installs into the environment the tests run in'"]
