"""A plan whose targets are all up to date, kept as blocks of columns: it counts and
summarises without building a node, and builds the nodes (and loads their objects) only when
someone asks for them."""

from __future__ import annotations

from functools import cached_property
from itertools import chain, compress

import numpy as np

from awlineage.processing._blocks import Block, ColumnBlock
from awlineage.processing._plan import Plan, PlanNode, State


class UpToDatePlan(Plan):
    """Every target of `selected` is up to date, and so is everything it depends on.

    Parameters
    ----------
    selected
        The block of the targets asked for.
    blocks
        Every block it depends on, in dependency order (dependencies first), itself last.
    """

    def __init__(self, selected: ColumnBlock, blocks: list[Block]) -> None:
        self.block = selected
        self.blocks = blocks

    @cached_property
    def selected(self) -> list[PlanNode]:  # type: ignore[override]
        return self.block.all_nodes()

    @cached_property
    def nodes(self) -> list[PlanNode]:  # type: ignore[override]
        from awlineage.processing._planner import reachable

        return reachable(self.selected)

    @cached_property
    def _reached(self) -> dict[int, np.ndarray]:
        """id(block) -> which of its nodes the selected ones depend on (or are)."""
        reached = {id(self.block): np.ones(len(self.block), bool)}
        for block in reversed(self.blocks):
            mask = reached.get(id(block))
            if mask is None or not isinstance(block, ColumnBlock):
                continue
            for link in block.links.values():
                upstream = reached.setdefault(id(link.block), np.zeros(len(link.block), bool))
                if link.index is not None:
                    index = link.index[mask]
                    upstream[index[index >= 0]] = True
                else:
                    kept = compress(link.members, mask)  # type: ignore[arg-type]
                    upstream[np.fromiter(chain.from_iterable(kept), np.int64)] = True
        return reached

    def red(self) -> list[PlanNode]:
        return []

    def count(self, state: State) -> int:
        if state is not State.GREEN:
            return 0
        return sum(int(self._reached.get(id(b), np.zeros(0, bool)).sum())
                   for b in self.blocks if not b.stored)

    def causes(self) -> dict[tuple[str, str], int]:
        return {}

    def blocked_causes(self) -> dict[tuple[str, str], tuple[int, str]]:
        return {}

    def class_counts(self) -> dict[str, dict[State, int]]:
        counts: dict[str, dict[State, int]] = {}
        for block in self.blocks:
            reached = self._reached.get(id(block))
            if block.stored or reached is None or not reached.any():
                continue
            counts.setdefault(block.cls.__name__, dict.fromkeys(State, 0))[State.GREEN] += \
                int(reached.sum())
        return counts

    def selected_count(self) -> int:
        return len(self.block)

    def first_selected(self, count: int) -> list[PlanNode]:
        return self.block.nodes(range(min(count, len(self.block))))

    def selected_result_ids(self) -> list[int]:
        return self.block.ids.tolist()
