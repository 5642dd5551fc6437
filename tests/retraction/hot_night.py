"""The retraction tests' night: one chip with a hot column in a bias, and the whole night built
in a fresh database (ingested, every SourceList made, serially)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from awlineage import Database, TargetProcessor
from awlineage.persistence import set_current_store
from awlineage.storage import forget_data_server, use_data_server
from targets.pipeline import SourceList, ingest
from targets.sky import SkyParameters, WrittenNight
from targets.sky_defects import HotColumn
from tests.conftest import fresh_database

HOT = HotColumn(chip="ccd1", bias=2, column=40, excess=3000.0)
NIGHT = SkyParameters(n_chips=1, filters=("r",), sky_rates=(15.0,), n_dithers=2, n_biases=3,
                      n_flats=2, chip_shape=(128, 128), hot_column=HOT)


@contextmanager
def built_night(backend: str, request: pytest.FixtureRequest, folder: Path,
                night: WrittenNight) -> Iterator[Database]:
    """`night` ingested into a fresh `backend` database (its files under `folder`) and every
    SourceList made, serially; the database and data server are let go of afterwards."""
    opened = fresh_database(backend, request, folder)
    db = next(opened)
    use_data_server(str(folder / "data"))
    try:
        ingest(night.paths)
        report = TargetProcessor("serial", database=db, progress=False).make(SourceList)
        assert not report.failures(), report.summary()
        yield db
    finally:
        forget_data_server()
        set_current_store(None)
        next(opened, None)
