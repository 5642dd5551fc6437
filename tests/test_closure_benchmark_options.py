"""benchmarks/closure.py's options scale to 1,000,000 nodes: its default leaves the closure
index's label budget to `reindex_closure` (a fixed limit of 2,000,000 labels, the old
default, was below the index's own budget for any graph of 1,000,000 nodes: the pipeline,
5.2 million labels, was given up, and a dense shape, whose placement then has no deadline,
was given up instead of answered by query)."""

from __future__ import annotations

import sys
from types import ModuleType

from tests.commands import REPO


def _closure_benchmark() -> ModuleType:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import closure
    finally:
        sys.path.pop(0)
    return closure


def test_the_index_is_given_no_label_limit_by_default() -> None:
    closure = _closure_benchmark()
    options = closure.parse_options(["--sizes", "1000000", "--shapes", "random-d2"])
    chosen = closure.strategies(["index"], options.max_closure_rows, options.index_budget,
                                options.max_index_labels, options.index_answer)
    assert [s.name for s in chosen] == ["index"]
    assert chosen[0].max_labels is None


def test_a_label_limit_is_still_taken_when_given() -> None:
    closure = _closure_benchmark()
    options = closure.parse_options(["--max-index-labels", "20000000"])
    chosen = closure.strategies(["index"], options.max_closure_rows, options.index_budget,
                                options.max_index_labels, options.index_answer)
    assert chosen[0].max_labels == 20_000_000
