"""``awl regions optimise``: its arguments (sizes, runtime limits, pins), workload files, and
a run on a database with recorded captures and queries that prints and stores the plan."""

from __future__ import annotations

import argparse

import pytest

from awlineage.cli._region_optimise import add, parse_pin, parse_runtime, parse_size
from awlineage.regions import RegionError
from awlineage.regions._optimiser_inputs import WorkloadLine, read_workload, workload_weights


def _parser() -> argparse.ArgumentParser:
    """``awl regions`` as far as this command needs it (the group lives elsewhere)."""

    class Strict(argparse.ArgumentParser):
        def error(self, message):
            raise SystemExit(message)

    parser = Strict(prog="awl")
    parser.add_argument("--database")
    groups = parser.add_subparsers(dest="command", required=True)
    regions = groups.add_parser("regions")
    add(regions.add_subparsers(dest="action", required=True, parser_class=Strict))
    return parser


@pytest.mark.parametrize(("text", "size"), [
    ("50MB", 50_000_000), ("1.5GB", 1_500_000_000), ("200kB", 200_000), ("123", 123),
    ("64KiB", 65_536), ("2 mb", 2_000_000), ("0", 0)])
def test_sizes_are_read_with_their_units(text, size) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("argv", "message"), [
    (["--max-disk", "50 parsecs"], "argument --max-disk: '50 parsecs' is not a size"),
    (["--max-disk", "-5MB"], "argument --max-disk"),
    (["--max-runtime", "0.9"], "argument --max-runtime: '0.9'"),
    (["--max-runtime", "fast"], "argument --max-runtime"),
    (["--pin", "resample"], "argument --pin: 'resample': give OPERATOR=STRATEGY"),
    (["--pin", "resample=fullish"], "argument --pin: operator resample: unknown lineage"),
    (["--pin", "resample=full-backward,pay"], "argument --pin: .*one strategy"),
])
def test_bad_arguments_are_refused_naming_the_argument(argv, message) -> None:
    with pytest.raises(SystemExit, match=message):
        _parser().parse_args(["regions", "optimise", *argv])


def test_runtime_limits_are_ratios_or_seconds_and_pins_lists() -> None:
    assert parse_runtime("1.1") == ("ratio", 1.1)
    assert parse_runtime("30s") == ("seconds", 30.0)
    assert parse_pin("resample=full-forward,blackbox") == (
        "resample", ["full-forward", "blackbox"])
    args = _parser().parse_args(["regions", "optimise", "--max-disk", "50MB", "--pin",
                                 "a=pay", "--pin", "b=map", "--dry-run"])
    assert args.max_disk == 50_000_000 and dict(args.pin) == {"a": ["pay"], "b": ["map"]}


def test_workload_files_in_json_lines_and_csv(tmp_path) -> None:
    jsonl = tmp_path / "w.jsonl"
    jsonl.write_text('{"operator": "extract", "direction": "backward", "frequency": 3, '
                     '"cells": 100}\n# a comment\n\n'
                     '{"operator": "extract", "direction": "forward"}\n')
    csv = tmp_path / "w.csv"
    csv.write_text("operator,direction,frequency,cells\nextract,backward,3,100\n"
                   "extract,forward,1,\n")
    for path in (jsonl, csv):
        lines = read_workload(path)
        assert lines == [WorkloadLine("extract", "backward", 3.0, 100.0),
                         WorkloadLine("extract", "forward", 1.0, None)]
        weights, cells = workload_weights(lines)
        assert weights == {("extract", "backward"): 0.75, ("extract", "forward"): 0.25}
        assert cells == {("extract", "backward"): 100.0}


@pytest.mark.parametrize(("text", "message"), [
    ('{"operator": "a", "direction": "up"}', r"w.jsonl:1: direction must be one of"),
    ('{"direction": "backward"}', r"w.jsonl:1: no operator"),
    ('{"operator": "a", "direction": "backward", "frequency": -1}', r"frequency must be"),
    ('{"operator": "a", "direction": "backward", "cells": "many"}', r"cells must be a number"),
    ("operator a", r"w.jsonl:1: not JSON"),
])
def test_bad_workload_lines_are_refused_naming_file_and_line(tmp_path, text, message) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(RegionError, match=message):
        read_workload(path)
