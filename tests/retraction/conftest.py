"""Fixtures of the retraction tests: the hot-column night (`tests.retraction.hot_night`)
written once per module and built once per test on each database (a module may build it once
for all its tests, as `test_affected_truth` does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from awlineage import Database
from targets.sky import WrittenNight, write_night
from tests.retraction.hot_night import NIGHT, built_night


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> WrittenNight:
    return write_night(NIGHT, tmp_path_factory.mktemp("hot-night"))


@pytest.fixture(params=["sqlite", "postgresql"])
def built(request: pytest.FixtureRequest, tmp_path: Path, night: WrittenNight
          ) -> Iterator[Database]:
    """The night ingested and every SourceList made, serially."""
    with built_night(request.param, request, tmp_path, night) as db:
        yield db
