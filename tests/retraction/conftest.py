"""Fixtures of the retraction tests: the hot-column night of `test_affected_truth` built once
per test on each database (a module may define its own, as `test_affected_truth` does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from awlineage import Database, TargetProcessor
from awlineage.persistence import set_current_store
from awlineage.storage import forget_data_server, use_data_server
from targets.pipeline import SourceList, ingest
from targets.sky import WrittenNight, write_night
from tests.conftest import fresh_database
from tests.retraction.test_affected_truth import NIGHT


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> WrittenNight:
    return write_night(NIGHT, tmp_path_factory.mktemp("remake-night"))


@pytest.fixture(params=["sqlite", "postgresql"])
def built(request: pytest.FixtureRequest, tmp_path: Path, night: WrittenNight
          ) -> Iterator[Database]:
    """The night ingested and every SourceList made, serially."""
    opened = fresh_database(request.param, request, tmp_path)
    db = next(opened)
    use_data_server(str(tmp_path / "data"))
    try:
        ingest(night.paths)
        report = TargetProcessor("serial", database=db, progress=False).make(SourceList)
        assert not report.failures(), report.summary()
        yield db
    finally:
        forget_data_server()
        set_current_store(None)
        next(opened, None)
