"""A small pipeline with known lineage, made on the test's database."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from awlineage import commit
from awlineage.lineage import reindex_closure
from tests.trace.models import CalibratedExposure, Exposure, LevelParameters, MasterLevel


@dataclass
class Pipeline:
    exposures: list[Exposure]
    master: MasterLevel
    calibrated: list[CalibratedExposure]


def make_pipeline(n: int = 3, params: LevelParameters | None = None) -> Pipeline:
    """`n` exposures -> one master level -> `n` calibrated exposures, all committed."""
    exposures = [Exposure(chip="ccd50", counts=[100.0 + i, 101.0 + i]) for i in range(n)]
    commit(exposures)
    master = MasterLevel(exposures=exposures, process_params=params)
    master.make()
    master.commit()
    calibrated = []
    for exposure in exposures:
        target = CalibratedExposure(exposure=exposure, master=master)
        target.make()
        calibrated.append(target)
    commit(calibrated)
    return Pipeline(exposures, master, calibrated)


@pytest.fixture
def pipeline(db) -> Pipeline:
    return make_pipeline()




@pytest.fixture(params=["walk", "index"])
def lineage_path(request: pytest.FixtureRequest, db) -> str:
    """Run a lineage test twice: with the closure index off (the level-by-level walk), and on
    (built on the empty database before the test's own objects, so its commits keep it up to
    date)."""
    if request.param == "index":
        reindex_closure(db)
    return request.param
