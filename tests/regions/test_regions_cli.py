"""``awl regions stats``, run as a user would, in a separate process."""

from __future__ import annotations

import json
import time

import numpy as np

from awlineage import backward, forward
from awlineage.regions import Operator, capture_regions, elementwise, flush_query_stats
from tests.commands import run_awl as awl
from tests.regions.models import RegionTestRaw, RegionTestReduced
from tests.regions.pipeline import build


def test_awl_regions_stats_prints_captures_and_queries_per_operator(db) -> None:
    p = build(frames=2)
    backward(p.sources, [[1]])
    backward(p.sources, [[2]])
    forward(p.raws[0], [[3, 4]])
    flush_query_stats(db)   # another process sees the statistics once committed
    result = awl(db, "regions", "stats")
    assert result.returncode == 0, result.stderr
    captures, queries = result.stdout.split("\n\n")
    line = next(x.split() for x in captures.splitlines() if x.split()[:1] == ["resample"])
    assert line[1:3] == ["2", "full-backward"]        # calls, strategy
    line = next(x.split() for x in queries.splitlines()
                if x.split()[:2] == ["payload_boxes", "backward"])
    assert line[2:5] == ["2", "2", "2"]               # queries, hops, cells asked
    assert line[-2:] == ["pay", "x2"]
    mistyped = awl(db, "regions", "stats", "--operator", "resampel")
    assert mistyped.returncode == 1 and mistyped.stdout == ""
    assert "operator 'resampel'; operators with region lineage: " in mistyped.stderr
    assert "resample" in mistyped.stderr.split("operators with region lineage: ")[1]


def test_awl_regions_stats_json_for_one_operator(db) -> None:
    p = build(frames=1)
    backward(p.sources, [[0]])
    flush_query_stats(db)
    result = awl(db, "regions", "stats", "--operator", "payload_boxes", "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    (operator,) = found["operators"]
    assert (operator["operator"], operator["calls"], operator["strategies"]) == \
        ("payload_boxes", 1, ["pay"])
    assert operator["rows"] == 3 and operator["stored_bytes"] > 0
    (query,) = found["queries"]
    assert (query["direction"], query["queries"], query["cells"], query["strategies"]) == \
        ("backward", 1, 1, {"pay": 1})


def test_awl_regions_stats_on_a_database_without_region_lineage(db) -> None:
    result = awl(db, "regions", "stats")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "no region lineage recorded for any operator\n"
    result = awl(db, "regions", "stats", "--operator", "nothing", "--json")
    assert json.loads(result.stdout) == {"operators": [], "queries": []}


class Pause(Operator):
    """An operator run through ``capture.run``, whose own seconds are recorded (it pauses
    a millisecond, so they are never 0)."""

    supported_modes = ("full",)

    def __init__(self) -> None:
        super().__init__("pause")

    def run(self, image, *, lineage):
        time.sleep(0.001)
        if lineage.wants("full"):
            cells = np.argwhere(np.ones(image.shape, bool))
            lineage.lwrite(cells, cells)
        return image.copy()


def test_awl_regions_stats_says_when_an_operator_s_own_seconds_are_not_recorded(db) -> None:
    image = np.arange(12.0).reshape(3, 4)
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="out")
    with capture_regions(out) as cap:  # a mapping applied (not run), then an operator run
        mapped = cap.apply(elementwise(), [cap.array(raw, data=image)], name="mapped")
        cap.run(Pause(), [mapped], [image])
    out.commit()
    result = awl(db, "regions", "stats")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[2:] if line.strip()}
    assert "  not recorded  " in rows["elementwise"]
    assert "not recorded" not in rows["pause"]
    as_json = awl(db, "regions", "stats", "--json")
    seconds = {o["operator"]: o["run_seconds"] for o in json.loads(as_json.stdout)["operators"]}
    assert seconds["elementwise"] is None and seconds["pause"] >= 0.001

