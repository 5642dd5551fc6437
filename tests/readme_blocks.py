"""The code blocks of README.md, by section, as tests/test_readme.py runs them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = ("python", "sh")
_FENCE = re.compile(r"^```(\S*)\s*$")
_NEEDS = re.compile(r"^<!--\s*needs:\s*([\w\s,-]+?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced block: its language, its text, what it needs and where it starts."""

    language: str
    text: str
    line: int
    needs: frozenset[str] = frozenset()


@dataclass
class Section:
    """A ``##`` section of the README and its runnable blocks, in order."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def needs(self) -> frozenset[str]:
        """Everything some block of the section needs."""
        return frozenset().union(*(block.needs for block in self.blocks))


def readme_sections(path: Path) -> list[Section]:
    """The sections of `path` that hold ``python`` or ``sh`` blocks. A ``<!-- needs: x, y -->``
    comment on the line before a block (blank lines allowed) says what the block needs."""
    sections: list[Section] = []
    current = Section("(before the first section)")
    language: str | None = None
    body: list[str] = []
    start = 0
    needs: frozenset[str] = frozenset()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = _FENCE.match(line)
        if language is not None:
            if fence and not fence.group(1):
                if language in RUNNABLE:
                    current.blocks.append(Block(language, "\n".join(body) + "\n", start, needs))
                language, body, needs = None, [], frozenset()
            else:
                body.append(line)
        elif fence:
            language, start = fence.group(1), number
        elif line.startswith("## "):
            if current.blocks:
                sections.append(current)
            current, needs = Section(line[3:].strip()), frozenset()
        elif marker := _NEEDS.match(line):
            needs = frozenset(word.strip() for word in marker.group(1).split(","))
        elif line.strip():
            needs = frozenset()
    if current.blocks:
        sections.append(current)
    return sections


def section_id(section: Section) -> str:
    """A short test id from a section's title."""
    return re.sub(r"[^a-z0-9]+", "-", section.title.lower()).strip("-")
