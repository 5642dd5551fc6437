"""The documentation is executable: every ``python`` and ``sh`` block of README.md and of the
pages of docs/ runs as written, page by page, each page in a fresh folder.

The rules the pages follow:

- A ``python`` block is a script: it runs in a fresh interpreter (``python3 -``) in its
  page's folder. The blocks of one page share the folder (the SQLite file awlineage.db, the
  data directory awl-data, files a block wrote), never Python names: every block imports and
  defines what it uses. Blocks run in page order.
- An ``sh`` block runs as one bash script (``set -euo pipefail``) in its page's folder, after
  the page's earlier blocks, with ``awl``, ``python`` and ``python3`` running this checkout.
  Every line in it must run as written; a variable set on one line may be used on the next.
- ``<!-- file: NAME -->`` on the line before a ``python`` block writes the block to NAME in the
  page's folder instead of running it (a module the later blocks import).
- A synopsis (placeholders such as ``ID``, alternatives such as ``a | b``, optional ``[--x]``)
  goes in a ``text`` block, as does anything else that is not to be run; fences without a
  language (the layout) are not run either.
- ``<!-- needs: ... -->`` on the line before a block (or before the blank line above it) names
  what the block needs, and the test provides it for the whole page:
  ``s3``: an S3 server on loopback (moto), credentials in the environment, and the block's
  ``127.0.0.1:9000`` replaced by the server's address;
  ``demo``: the page's folder starts as a copy of one in which
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
from tests.doc_blocks import Block, Page, documentation_pages, page_id, read_page

REPO = Path(__file__).resolve().parents[1]
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

PAGES = documentation_pages(REPO)


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


@pytest.mark.parametrize("page", PAGES, ids=[page_id(p) for p in PAGES])
def test_page_runs_as_written(page: Page, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    folder = tmp_path / "work"
    if "demo" in page.needs:
        shutil.copytree(request.getfixturevalue("demo_folder"), folder)
    else:
        folder.mkdir()
    env = _environment(tmp_path)
    endpoint = None
    if "s3" in page.needs:
        endpoint = request.getfixturevalue("s3_endpoint")
        env.update(AWL_S3_ACCESS_KEY=S3_ACCESS_KEY, AWL_S3_SECRET_KEY=S3_SECRET_KEY)
    for block in page.blocks:
        text = block.text
        if "s3" in block.needs:
            assert S3_PLACEHOLDER in text, f"{page.name}:{block.line} needs s3 but names no " \
                                           f"{S3_PLACEHOLDER}"
            text = text.replace(S3_PLACEHOLDER, endpoint)
        if block.filename:
            (folder / block.filename).write_text(text, encoding="utf-8")
            continue
        if block.language == "python":
            command = [sys.executable, "-"]
        else:
            command, text = ["bash", "-s"], _shell_script(block)
        result = subprocess.run(command, input=text, cwd=folder, env=env, capture_output=True,
                                text=True, timeout=BLOCK_TIMEOUT)
        assert result.returncode == 0, (
            f"the {block.language} block at {page.name}:{block.line} failed "
            f"(exit {result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")


def test_the_sky_example_of_the_persistence_guide_runs_again_in_the_same_folder(
        tmp_path: Path) -> None:
    page = read_page(REPO / "docs" / "guide" / "persistence.md")
    (block,) = [b for b in page.blocks if "class Exposure(DBObject)" in b.text]
    for run in ("first", "second"):
        result = subprocess.run([sys.executable, "-"], input=block.text, cwd=tmp_path,
                                env=_environment(tmp_path), capture_output=True, text=True,
                                timeout=BLOCK_TIMEOUT)
        assert result.returncode == 0, f"{run} run:\n{result.stderr[-3000:]}"


def test_the_blast_radius_guide_selects_affected_rows_in_a_way_any_count_of_them_takes() -> None:
    # Source.object_id.in_(answer.ids(Source)) is refused above 5,000 ids; where() splits them
    page = read_page(REPO / "docs" / "guide" / "retraction-affected.md")
    code = "".join(block.text for block in page.blocks)
    assert ".in_(answer.ids(" not in code and "select(answer.where(Source))" in code


def test_exemptions_each_match_a_line_of_the_documentation() -> None:
    """An exemption that matches no line of the pages is stale and goes."""
    lines = [line for page in PAGES for block in page.blocks if block.language == "sh"
             for line in block.text.replace("\\\n", " ").splitlines()]
    stale = [pattern for pattern in EXEMPT if not any(re.search(pattern, x) for x in lines)]
    assert not stale, f"EXEMPT patterns that match no documentation line: {stale}"


def test_pages_mark_only_known_needs() -> None:
    unknown = {need for page in PAGES for need in page.needs} - {"s3", "demo"}
    assert not unknown, f"the documentation asks for unknown needs: {sorted(unknown)}"


def test_every_page_of_the_site_and_the_readme_is_read() -> None:
    """The tutorial and the README are among the pages run: a page the reader skips by
    mistake (a wrong folder, a build directory) would leave its blocks untested."""
    names = {page.name for page in PAGES}
    assert {"README.md", "docs/tutorial.md", "docs/guide/persistence.md"} <= names
    assert not any("_build" in name for name in names)


def test_blocks_are_read_in_page_order_with_their_markers(tmp_path: Path) -> None:
    """Only python and sh blocks are kept; a marker belongs to the next block alone."""
    path = tmp_path / "page.md"
    path.write_text("# t\n## One\n<!-- needs: s3, demo -->\n\n```python\nx = 1\n```\n"
                    "```text\nawl info ID\n```\n```sh\nawl select x\n```\n"
                    "## Two\n```\nlayout\n```\n<!-- file: mod.py -->\n```python\ny = 2\n```\n"
                    "## Three\n<!-- needs: s3 -->\nprose\n```sh\nawl info 1\n```\n",
                    encoding="utf-8")
    page = read_page(path)
    assert [(b.language, b.text, sorted(b.needs), b.filename) for b in page.blocks] == [
        ("python", "x = 1\n", ["demo", "s3"], None), ("sh", "awl select x\n", [], None),
        ("python", "y = 2\n", [], "mod.py"), ("sh", "awl info 1\n", [], None)]
    assert page.needs == {"demo", "s3"}


def test_exempt_lines_are_left_out_of_a_shell_block() -> None:
    block = Block("sh", "awl select x\npython3 -m pip install -e . && awl demo\n", 1)
    assert _shell_script(block).splitlines() == [
        "set -euo pipefail", "awl select x",
        ": not run, 'installs into the environment the tests run in'"]
