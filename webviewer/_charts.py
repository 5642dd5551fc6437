"""Inline SVG charts built on the server: versions against creation date, and bars of counts.
Every text in them is escaped here, and they use SVG attributes only (the
Content-Security-Policy forbids inline ``style=``), so a page may mark them safe."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH = 760
HEIGHT = 280
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 20, 16, 52
_TICKS = 5


@dataclass(frozen=True)
class Point:
    """One mark of a scatter chart: a version (`y`) made at `x`, linking to `href`."""

    x: datetime.datetime
    y: int
    href: str
    title: str


@dataclass(frozen=True)
class Bar:
    """One bar of a bar chart, stacked from `segments` (value, fill colour, title)."""

    label: str
    segments: tuple[tuple[int, str, str], ...]


def _svg(label: str, body: list[str], x_label: str, y_label: str) -> Markup:
    """The frame of a chart: the plot area's axes and their labels around `body`."""
    bottom, right = HEIGHT - _BOTTOM, WIDTH - _RIGHT
    return Markup("\n".join([
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(label)}">',
        f"<title>{escape(label)}</title>",
        f'<line x1="{_LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#667"/>',
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}" stroke="#667"/>',
        *body,
        f'<text x="{(_LEFT + right) / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle" '
        f'font-size="12" fill="#334">{escape(x_label)}</text>',
        f'<text x="14" y="{(_TOP + bottom) / 2:.1f}" text-anchor="middle" font-size="12" '
        f'fill="#334" transform="rotate(-90 14 {(_TOP + bottom) / 2:.1f})">'
        f"{escape(y_label)}</text>",
        "</svg>",
    ]))


def _y_ticks(top: int) -> list[int]:
    """Whole-number ticks from 0 to `top`, at most `_TICKS` + 1 of them."""
    step = max(1, -(-top // _TICKS))
    return list(range(0, top + 1, step))


def _y_axis(top: int, low: int = 0) -> tuple[list[str], float]:
    """Tick marks and labels of a count axis from `low` to `top`; and pixels per unit."""
    bottom = HEIGHT - _BOTTOM
    scale = (bottom - _TOP) / max(top - low, 1)
    marks = []
    for tick in (t for t in _y_ticks(top) if t >= low):
        y = bottom - (tick - low) * scale
        marks.append(f'<line x1="{_LEFT - 4}" y1="{y:.1f}" x2="{_LEFT}" y2="{y:.1f}" '
                     'stroke="#667"/>')
        marks.append(f'<text x="{_LEFT - 7}" y="{y + 4:.1f}" text-anchor="end" '
                     f'font-size="11" fill="#334">{tick}</text>')
    return marks, scale


def versions_chart(points: Sequence[Point], label: str) -> Markup:
    """Versions (y) against creation date (x): one linked circle per version, joined in
    the order they were made."""
    if not points:
        return _svg(label, [], "creation date (UTC)", "version")
    first = min(p.x for p in points)
    last = max(p.x for p in points)
    span = max((last - first).total_seconds(), 1.0)
    top = max(p.y for p in points)
    axis, scale = _y_axis(top, low=min(1, top))
    bottom, right = HEIGHT - _BOTTOM, WIDTH - _RIGHT
    width = right - _LEFT - 20

    def place(point: Point) -> tuple[float, float]:
        x = _LEFT + 10 + (point.x - first).total_seconds() / span * width
        y = bottom - (point.y - min(1, top)) * scale
        return x, y

    body = list(axis)
    for i in range(_TICKS):
        when = first + datetime.timedelta(seconds=span * i / (_TICKS - 1))
        x = _LEFT + 10 + width * i / (_TICKS - 1)
        body.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle" '
                    f'font-size="10" fill="#334">{escape(when.strftime("%Y-%m-%d"))}</text>')
        body.append(f'<text x="{x:.1f}" y="{bottom + 28}" text-anchor="middle" '
                    f'font-size="10" fill="#334">{escape(when.strftime("%H:%M:%S"))}</text>')
    ordered = sorted(points, key=lambda p: (p.x, p.y))
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in map(place, ordered))
    body.append(f'<polyline points="{line}" fill="none" stroke="#8aa" stroke-width="1.5"/>')
    for point in ordered:
        x, y = place(point)
        body.append(f'<a class="mark" href="{escape(point.href)}"><circle cx="{x:.1f}" '
                    f'cy="{y:.1f}" r="5" fill="#2a6f97" stroke="#fff"/>'
                    f"<title>{escape(point.title)}</title></a>")
    return _svg(label, body, "creation date (UTC)", "version")


def bar_chart(bars: Sequence[Bar], label: str, x_label: str, y_label: str) -> Markup:
    """Stacked bars of counts, one per labelled bucket; every segment has its title."""
    if not bars:
        return _svg(label, [], x_label, y_label)
    top = max(sum(value for value, _, _ in bar.segments) for bar in bars)
    axis, scale = _y_axis(top)
    bottom, right = HEIGHT - _BOTTOM, WIDTH - _RIGHT
    slot = (right - _LEFT) / len(bars)
    width = max(min(slot * 0.8, 60), 1)
    every = max(1, len(bars) // 12)  # at most about a dozen labels under the bars
    body = list(axis)
    for i, bar in enumerate(bars):
        x = _LEFT + slot * i + (slot - width) / 2
        y = float(bottom)
        for value, fill, title in bar.segments:
            if not value:
                continue
            height = value * scale
            y -= height
            body.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
                        f'height="{height:.1f}" fill="{escape(fill)}">'
                        f"<title>{escape(title)}</title></rect>")
        if i % every == 0:
            body.append(f'<text x="{x + width / 2:.1f}" y="{bottom + 14}" '
                        f'text-anchor="middle" font-size="10" fill="#334">'
                        f"{escape(bar.label)}</text>")
    return _svg(label, body, x_label, y_label)
