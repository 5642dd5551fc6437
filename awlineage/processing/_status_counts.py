"""A mapping of node to status that keeps how many nodes have each status, so that the
progress bar reads its counts in constant time on every update of a large make."""

from __future__ import annotations

from collections import Counter, UserDict
from collections.abc import Hashable


class StatusCounts(UserDict[int, Hashable]):
    """``id(node) -> status``, with `count` kept up to date by every write and delete."""

    def __init__(self) -> None:
        self.counts: Counter[Hashable] = Counter()
        """How many nodes have each status."""
        super().__init__()

    def __setitem__(self, key: int, status: Hashable) -> None:
        if key in self.data:
            self.counts[self.data[key]] -= 1
        self.data[key] = status
        self.counts[status] += 1

    def __delitem__(self, key: int) -> None:
        self.counts[self.data.pop(key)] -= 1

    def count(self, status: Hashable) -> int:
        """How many nodes have `status`."""
        return self.counts[status]
