"""``--where`` on targets not made yet is evaluated in memory: for arithmetic, ranges, and sky
and time predicates it must select what ``select()`` selects in the database."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from awlineage import Box, Interval, commit, parse_query, select
from awlineage.processing import matches
from tests.persistence.models import CameraFrame, utc
from tests.persistence.sky_models import SkyDetection, SkyField

QUERIES = [
    "CameraFrame.exptime * 2 > 50", "CameraFrame.nexp in (0..4:2)",
    "CameraFrame.exptime / CameraFrame.nexp >= 10", "CameraFrame.nexp in (2..3)",
    "SkyField.footprint contains POINT(150.1, 2.2)",
    "SkyField.footprint overlaps CIRCLE(150.3, 2.1, 10arcmin)",
    "SkyField.validity overlaps (T'2024-01-03', T'2024-01-04')",
    "SkyField.validity contains T'2024-01-02T06:00'",
    "SkyField.taken within (2024-01-02, None)",
    "SkyDetection.position within BOX(150.1, 2.2, 0.3, 0.2)",
    "SkyDetection.field.footprint contains POINT(150.1, 2.2)",
]


@pytest.fixture
def objects(db):
    rng = np.random.default_rng(5)
    frames = [CameraFrame(chip=f"c{i}", exptime=float(i * 7 % 40), nexp=i % 5,
                          obs_date=utc(2024, 1, 1 + i % 3)) for i in range(20)]
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    fields = [SkyField(name=f"f{i}", footprint=Box((150.1 + rng.normal(0, 0.2),
                                                    2.2 + rng.normal(0, 0.2)), 0.2, 0.2),
                       validity=Interval(start + datetime.timedelta(hours=10 * i),
                                         start + datetime.timedelta(hours=10 * i + 30)),
                       taken=start + datetime.timedelta(hours=10 * i)) for i in range(12)]
    detections = [SkyDetection(number=i, field=fields[i % 12],
                               position=(150.1 + rng.normal(0, 0.2), 2.2 + rng.normal(0, 0.2)))
                  for i in range(60)]
    commit([*frames, *fields, *detections])
    return [*frames, *fields, *detections]


ROOTS = {"CameraFrame": CameraFrame, "SkyField": SkyField, "SkyDetection": SkyDetection}


@pytest.mark.parametrize("text", QUERIES)
def test_in_memory_evaluation_selects_what_the_database_selects(objects, text) -> None:
    expression = parse_query(text)
    root = ROOTS[text.split(".", 1)[0]]
    in_database = {o.object_id for o in select(expression)}
    in_memory = {o.object_id for o in objects
                 if isinstance(o, root) and matches(expression, o)}
    assert in_database, "each query selects something, so that agreeing means something"
    assert in_memory == in_database
