"""The federation benchmark runs: ``benchmarks/federation.py --quick`` prints Table 3 (sizes
growing with levels and fan-in), the Bonsai table (fan-in ** (lambda + 1) pointers) and the
reconstruction table (complete, fewer rounds and more storage as lambda grows). Its timings
are not checked."""

from __future__ import annotations

import re

import pytest

from tests.commands import run_benchmark

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+|all)\s+(.*)$")


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[str]]]:
    """The rows of each part's table, split into columns (the run checked as every
    benchmark's is: `run_benchmark`)."""
    done = run_benchmark("federation.py", "--quick", folder=tmp_path_factory.mktemp("bench"),
                         timeout=120)
    found: dict[str, list[list[str]]] = {}
    current = None
    for line in done.stdout.splitlines():
        header = re.match(r"Part (\d):", line)
        if header:
            current = header.group(1)
            found[current] = []
        elif current and ROW.match(line):
            found[current].append(line.split())
    assert set(found) == {"1", "2", "3", "4"}, done.stdout
    return found


def test_table3_sizes_grow_with_levels_and_fan_in(parts: dict[str, list[list[str]]]) -> None:
    rows = {(int(r[0]), int(r[1])): r for r in parts["1"]}
    assert sorted(rows) == [(level, fan) for level in (2, 3) for fan in (1, 2, 3, 4)]
    assert rows[(3, 4)][4] == "1.05"  # the paper's figure, printed beside ours
    for (level, fan), row in rows.items():
        assert int(row[3]) == sum(fan ** k for k in range(level + 1))  # files in the tree
    bundle = {key: float(row[6]) for key, row in rows.items()}
    json = {key: float(row[7]) for key, row in rows.items()}
    for sizes in (bundle, json):
        for fan in (1, 2, 3, 4):
            assert sizes[(3, fan)] > sizes[(2, fan)]
        for level in (2, 3):
            assert sizes[(level, 1)] < sizes[(level, 2)] < sizes[(level, 3)] < sizes[(level, 4)]
    # a level multiplies the lineage by about the fan-in once the tree is bushy
    assert json[(3, 4)] / json[(2, 4)] > 3


def test_bonsai_keeps_fan_in_to_lambda_plus_one_pointers(
        parts: dict[str, list[list[str]]]) -> None:
    rows = parts["2"]
    assert {(r[0], r[1], r[2]) for r in rows} == {
        ("4", fan, depth) for fan in ("2", "3") for depth in ("1", "2", "all")}
    for fan in (2, 3):
        mine = [r for r in rows if r[1] == str(fan)]
        assert [int(r[4]) for r in mine] == [fan ** 2, fan ** 3, 0]
        sizes = [float(r[5]) for r in mine]
        assert sizes == sorted(sizes) and sizes[0] < sizes[-1]


def test_reconstruction_completes_with_fewer_rounds_as_storage_grows(
        parts: dict[str, list[list[str]]]) -> None:
    rows = parts["3"]
    assert len(rows) == 6 and all(r[-1] == "yes" for r in rows), rows
    for fan in ("2", "3"):
        mine = [r for r in rows if r[1] == fan]
        assert [r[2] for r in mine] == ["1", "2", "all"]
        stored = [float(r[4]) for r in mine]
        rounds = [int(r[5]) for r in mine]
        requests = [int(r[6]) for r in mine]
        assert stored[0] < stored[1] < stored[2]
        assert rounds == [2, 1, 0]
        assert requests[0] > requests[1] > requests[2] == 0
