"""A LineageIncompleteWarning made again from its arguments, as a copy in another process is
(pickle; pytest-xdist reports a worker's warnings so), keeps what it says."""

from __future__ import annotations

import pickle

from awlineage.lineage import LineageIncompleteWarning, MissingLineage


def test_a_pickled_lineage_incomplete_warning_keeps_its_missing_objects_and_message() -> None:
    missing = [MissingLineage(7, "tests.Step", "http://127.0.0.1:8400", "connection refused")]
    warning = LineageIncompleteWarning(missing)
    copy = pickle.loads(pickle.dumps(warning))
    assert copy.missing == missing
    assert str(copy) == str(warning) == (
        "lineage incomplete: 1 object held at another site could not be fetched\n"
        "  Step 7 held at http://127.0.0.1:8400: connection refused")
    assert type(copy)(*copy.args).missing == missing
