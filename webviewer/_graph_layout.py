"""The lineage graph laid out left to right, as SVG, by Graphviz ``dot`` on the server.

Why ``dot`` and not a JavaScript layout (elkjs, dagre): it needs no JavaScript dependency to
vendor and pin, the page works with scripts off, and its layered layout with crossing
minimisation is the one lineage graphs want (inputs left, products right). The graphs it gets
are small, since siblings are grouped, so it answers in milliseconds; it runs with a timeout.

Every text is escaped twice over: for DOT (backslashes and quotes, so no label can end its
string or use DOT's ``\\N`` escapes) and, for URLs, which ``dot`` copies into the SVG
verbatim, for XML. The DOT sets only presentation attributes, so the SVG has no ``style``
attribute or script for the Content-Security-Policy to block; `clean_svg` drops the XML
prologue and comments and refuses any SVG that would need them anyway.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from dataclasses import dataclass
from xml.etree import ElementTree

DOT = shutil.which("dot") or "/usr/bin/dot"

COLOURS = {
    "green": ("#dcf5e0", "#1a7f37"),
    "red": ("#fde0e0", "#c62828"),
    "orange": ("#ffe9cc", "#d96c00"),
    "blocked": ("#e4e4e4", "#555555"),
    "stored": ("#f0f1f3", "#8a939c"),
    "unknown": ("#ffffff", "#8a939c"),
}
"""State -> (fill, outline)."""


class LayoutError(Exception):
    """``dot`` is missing, failed, took too long, or wrote what the page must not show."""


@dataclass(frozen=True)
class DrawnNode:
    """What the SVG shows of one node: a DOT-safe id, text, state and link."""

    key: str
    label: str
    state: str
    tooltip: str
    url: str
    root: bool = False
    group: bool = False


@dataclass(frozen=True)
class DrawnEdge:
    """An edge between two node keys, labelled with the attribute names of its links."""

    source: str
    target: str
    label: str


def dot_string(text: str) -> str:
    """`text` as a quoted DOT string: backslashes and quotes escaped, each line break as
    DOT's own ``\\n``."""
    lines = [line.replace("\\", "\\\\").replace('"', '\\"') for line in str(text).splitlines()]
    return '"' + "\\n".join(lines) + '"'


def dot_url(url: str) -> str:
    """A URL as DOT text: XML-escaped first, since ``dot`` writes URLs into the SVG as they
    are."""
    return dot_string(html.escape(url, quote=True))


def dot_text(nodes: list[DrawnNode], edges: list[DrawnEdge]) -> str:
    """The DOT text of the graph, left to right."""
    ids = {node.key: f"n{i}" for i, node in enumerate(nodes)}
    lines = [
        "digraph lineage {",
        'graph [rankdir=LR, bgcolor="transparent", nodesep=0.25, ranksep=0.6, '
        'fontname="Helvetica"];',
        'node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
        'margin="0.12,0.06"];',
        'edge [fontname="Helvetica", fontsize=9, color="#6b7480", fontcolor="#4a525b"];',
    ]
    for node in nodes:
        fill, line = COLOURS.get(node.state, COLOURS["unknown"])
        attributes = {
            "id": dot_string(f"node-{node.key}"),
            "class": dot_string(f"lineage-node state-{node.state}"
                                + (" group" if node.group else "") + (" root" if node.root
                                                                     else "")),
            "label": dot_string(node.label),
            "tooltip": dot_string(node.tooltip),
            "URL": dot_url(node.url),
            "target": '"_top"',
            "fillcolor": dot_string(fill),
            "color": dot_string(line),
            "penwidth": "2.5" if node.root else "1.2",
        }
        if node.group:
            attributes["peripheries"] = "2"
        if node.state == "unknown":
            attributes["style"] = '"rounded,filled,dashed"'
        listed = ", ".join(f"{name}={value}" for name, value in attributes.items())
        lines.append(f"{ids[node.key]} [{listed}];")
    for edge in edges:
        if edge.source in ids and edge.target in ids:
            lines.append(f"{ids[edge.source]} -> {ids[edge.target]} "
                         f"[label={dot_string(edge.label)}, "
                         f"tooltip={dot_string(edge.label)}];")
    lines.append("}")
    return "\n".join(lines)


def run_dot(text: str, timeout: float) -> str:
    """SVG from DOT `text` (given on stdin), or `LayoutError`."""
    try:
        done = subprocess.run([DOT, "-Tsvg"], input=text.encode(), capture_output=True,
                              timeout=timeout, check=False)
    except FileNotFoundError:
        raise LayoutError(f"Graphviz dot is not installed ({DOT})") from None
    except subprocess.TimeoutExpired:
        raise LayoutError(f"Graphviz dot took longer than {timeout} s") from None
    if done.returncode != 0:
        raise LayoutError(f"Graphviz dot failed: {done.stderr.decode(errors='replace')[:300]}")
    return done.stdout.decode()


_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TITLE = re.compile(r"<title>[^<]*</title>\n?")
_FORBIDDEN_ELEMENTS = frozenset({"script", "style", "foreignobject", "iframe", "embed",
                                 "object", "image", "use"})


def clean_svg(svg: str) -> str:
    """The SVG without its XML prologue, comments and element titles (the links carry the
    tooltips); `LayoutError` if anything in it would need a script or an inline style."""
    cleaned = _TITLE.sub("", _COMMENT.sub("", _PROLOGUE.sub("", svg, count=1)))
    try:
        tree = ElementTree.fromstring(cleaned)
    except ElementTree.ParseError as exc:
        raise LayoutError(f"the layout's SVG does not parse: {exc}") from None
    for element in tree.iter():
        for name in [element.tag, *element.attrib]:
            _check(_local(name), element.attrib.get(name, ""))
    return cleaned.strip()


def _local(name: str) -> str:
    return name.rpartition("}")[2].lower()


def _check(name: str, value: str) -> None:
    """Refuse an element or attribute that would run a script or style inline."""
    if name in _FORBIDDEN_ELEMENTS or name == "style" or name.startswith("on") or \
            value.strip().lower().startswith("javascript:"):
        raise LayoutError(f"the layout's SVG holds {name!r}, which the page must not show")


def layout_svg(nodes: list[DrawnNode], edges: list[DrawnEdge], timeout: float) -> str:
    """The graph as clean SVG, laid out left to right."""
    return clean_svg(run_dot(dot_text(nodes, edges), timeout))
