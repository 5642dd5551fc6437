"""The code blocks of the documentation pages (docs/**/*.md) and of README.md, page by page,
as tests/test_docs_blocks.py runs them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = ("python", "sh")
_FENCE = re.compile(r"^```(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*(needs|file):\s*([\w\s,.-]+?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced block: its language, its text, where it starts, what it needs, and the file
    it is written to (instead of being run) when it is marked ``<!-- file: NAME -->``."""

    language: str
    text: str
    line: int
    needs: frozenset[str] = frozenset()
    filename: str | None = None


@dataclass
class Page:
    """A page (a Markdown file) and its runnable blocks, in order."""

    path: Path
    name: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def needs(self) -> frozenset[str]:
        """Everything some block of the page needs."""
        return frozenset().union(*(block.needs for block in self.blocks))


def read_page(path: Path, name: str | None = None) -> Page:
    """The ``python`` and ``sh`` blocks of `path`. A ``<!-- needs: x, y -->`` or
    ``<!-- file: NAME -->`` comment on the line before a block (blank lines allowed) belongs
    to that block."""
    page = Page(path, name or path.name)
    language: str | None = None
    body: list[str] = []
    start = 0
    needs: frozenset[str] = frozenset()
    filename: str | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = _FENCE.match(line)
        if language is not None:
            if fence and not fence.group(1):
                if language in RUNNABLE:
                    page.blocks.append(Block(language, "\n".join(body) + "\n", start, needs,
                                             filename))
                language, body, needs, filename = None, [], frozenset(), None
            else:
                body.append(line)
        elif fence:
            language, start = fence.group(1), number
        elif marker := _MARKER.match(line):
            if marker.group(1) == "needs":
                needs = frozenset(word.strip() for word in marker.group(2).split(","))
            else:
                filename = marker.group(2).strip()
        elif line.strip():
            needs, filename = frozenset(), None
    return page


def documentation_pages(repo: Path) -> list[Page]:
    """README.md and every page of docs/ that holds a runnable block, named by their path."""
    paths = [repo / "README.md", *sorted((repo / "docs").rglob("*.md"))]
    pages = [read_page(path, str(path.relative_to(repo))) for path in paths
             if "_build" not in path.parts]
    return [page for page in pages if page.blocks]


def page_id(page: Page) -> str:
    """A short test id from a page's path."""
    return re.sub(r"[^a-z0-9]+", "-", page.name.lower().removesuffix(".md")).strip("-")
