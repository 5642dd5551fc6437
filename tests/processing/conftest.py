"""Stored raw data for the processor tests: two chips, two nights of calibrations on ccd50,
one on ccd51, none on ccd52; science frames in two filters on two pointings."""

from __future__ import annotations

import pytest

from awlineage import TargetProcessor, commit
from tests.processing.models import RawCal, RawSci, utc


def ingest_night() -> dict[str, list]:
    cals = [RawCal(chip="ccd50", obs_date=utc(2024, 3, 1, 18, i), level=100.0 + i)
            for i in range(3)]
    cals += [RawCal(chip="ccd50", obs_date=utc(2024, 3, 2, 18, i), level=110.0 + i)
             for i in range(3)]
    cals += [RawCal(chip="ccd51", obs_date=utc(2024, 3, 1, 18, i), level=200.0)
             for i in range(2)]
    frames = []
    for i, (chip, band, field) in enumerate([("ccd50", "r", "F1"), ("ccd50", "r", "F1"),
                                             ("ccd50", "g", "F1"), ("ccd51", "r", "F2"),
                                             ("ccd52", "r", "F2")]):
        frames.append(RawSci(chip=chip, filter=band, pointing=field,
                             obs_date=utc(2024, 3, 2, 22, i), counts=1000.0 + 10 * i))
    commit(cals + frames)
    return {"cals": cals, "frames": frames}


@pytest.fixture
def night(db) -> dict[str, list]:
    return ingest_night()


@pytest.fixture
def serial(db) -> TargetProcessor:
    return TargetProcessor("serial", progress=False)
