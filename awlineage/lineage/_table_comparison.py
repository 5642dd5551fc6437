"""TableComparison: how one table HDU of two files compares row by row (`compare_tables`'s
answer): the rows identical, changed (a few column by column) and only in one, as text lines
for ``diff`` and as plain data for its JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

COLUMNS_SHOWN = 6
"""Columns of a changed row shown in text (JSON has them all)."""


@dataclass(frozen=True)
class ColumnChange:
    """One column of a changed row: the values in the two tables and, for numbers, the
    difference (b - a)."""

    column: str
    a: Any
    b: Any
    delta: float | None

    def __str__(self) -> str:
        text = f"{self.column} {_value(self.a)} -> {_value(self.b)}"
        return text if self.delta is None else f"{text} ({self.delta:+.6g})"


@dataclass(frozen=True)
class RowChange:
    """A row that differs: its numbers in the two tables and the columns that differ."""

    row_a: int
    row_b: int
    columns: list[ColumnChange]


@dataclass
class TableComparison:
    """How one table HDU of two files compares, row by row.

    Attributes
    ----------
    hdu, name
        The HDU (by position in the files) and its EXTNAME.
    rows_a, rows_b
        The number of rows in each.
    matched_by
        How rows were paired, in words (the steps are `compare_tables`'s).
    identical
        Pairs of rows with equal bytes, as (row in a, row in b).
    changed
        Pairs of rows that differ, as (row in a, row in b).
    only_a, only_b
        Rows with no partner in the other table.
    columns_apart
        Columns compared in neither: only in one table, or of another format in each.
    details
        The first few changed rows, column by column.
    """

    hdu: int
    name: str
    rows_a: int
    rows_b: int
    matched_by: str
    identical: list[tuple[int, int]] = field(default_factory=list)
    changed: list[tuple[int, int]] = field(default_factory=list)
    only_a: list[int] = field(default_factory=list)
    only_b: list[int] = field(default_factory=list)
    columns_apart: list[str] = field(default_factory=list)
    details: list[RowChange] = field(default_factory=list)

    @property
    def moved(self) -> int:
        """Identical rows whose row number differs."""
        return sum(1 for i, j in self.identical if i != j)

    def lines(self) -> list[str]:
        """The comparison as text: a summary line, then the rows changed and only in one."""
        name = f" {self.name}" if self.name else ""
        lines = [f"HDU {self.hdu}{name}: {self.rows_a} -> {self.rows_b} rows, matched by "
                 f"{self.matched_by}: {len(self.identical)} identical"
                 f"{f' ({self.moved} renumbered)' if self.moved else ''}, "
                 f"{len(self.changed)} changed, {len(self.only_a)} only in a, "
                 f"{len(self.only_b)} only in b"]
        if self.columns_apart:
            lines.append(f"  columns not compared: {', '.join(self.columns_apart)}")
        if self.changed:
            lines.append(f"  changed rows: {_rows_text([_pair_text(p) for p in self.changed])}")
        for change in self.details:
            shown = ", ".join(str(c) for c in change.columns[:COLUMNS_SHOWN])
            more = len(change.columns) - COLUMNS_SHOWN
            lines.append(f"    row {_pair_text((change.row_a, change.row_b))}: {shown}"
                         + (f", ... ({more} more columns)" if more > 0 else ""))
        if self.only_a:
            lines.append(f"  only in a: rows {_rows_text([str(r) for r in self.only_a])}")
        if self.only_b:
            lines.append(f"  only in b: rows {_rows_text([str(r) for r in self.only_b])}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain data (row numbers from 0)."""
        return {
            "hdu": self.hdu, "name": self.name, "rows_a": self.rows_a, "rows_b": self.rows_b,
            "matched_by": self.matched_by, "identical": len(self.identical),
            "renumbered": [list(p) for p in self.identical if p[0] != p[1]],
            "changed": [list(p) for p in self.changed],
            "only_a": self.only_a, "only_b": self.only_b,
            "columns_not_compared": self.columns_apart,
            "details": [{"row_a": c.row_a, "row_b": c.row_b,
                         "columns": {x.column: {"a": _plain(x.a), "b": _plain(x.b),
                                                "delta": x.delta} for x in c.columns}}
                        for c in self.details],
        }


def _plain(value: Any) -> Any:
    """A table value as JSON data (NaN as None)."""
    found = np.asarray(value).tolist()
    if isinstance(found, float) and not np.isfinite(found):
        return None
    return found.decode() if isinstance(found, bytes) else found


def _value(value: Any) -> str:
    found = np.asarray(value).tolist()
    return f"{found:.8g}" if isinstance(found, float) else str(found)


def _pair_text(pair: tuple[int, int]) -> str:
    return str(pair[0]) if pair[0] == pair[1] else f"{pair[0]}->{pair[1]}"


def _rows_text(rows: list[str], shown: int = 20) -> str:
    more = f" ... ({len(rows) - shown} more)" if len(rows) > shown else ""
    return ", ".join(rows[:shown]) + more
