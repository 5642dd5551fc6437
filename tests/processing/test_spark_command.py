"""``awl spark status`` and ``awl spark stop`` read the state file ``awl spark start`` writes:
without one they say so with exit status 1, and a cluster whose processes ended is reported
as not running (the start itself, on loopback, is in test_cluster.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from awlineage.cli import main
from awlineage.processing._standalone import STATE_FILE, read_state


def test_status_and_stop_without_a_cluster_say_so(tmp_path, capsys) -> None:
    assert main(["spark", "status", "--directory", str(tmp_path)]) == 1
    assert main(["spark", "stop", "--directory", str(tmp_path)]) == 1
    assert capsys.readouterr().out.count(f"no cluster started in {tmp_path}") == 2


def test_a_cluster_whose_processes_ended_is_not_running_and_stop_forgets_it(
        tmp_path, capsys) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    (tmp_path / STATE_FILE).write_text(json.dumps({
        "master_url": "spark://127.0.0.1:7077", "web_ui": "http://127.0.0.1:8080",
        "pids": [ended.pid], "logs": [str(tmp_path / "master.log")], "workers": 0,
        "cores": 1}))
    assert main(["spark", "status", "--directory", str(tmp_path)]) == 1
    assert f"master: pid {ended.pid}, NOT RUNNING" in capsys.readouterr().out
    assert main(["spark", "stop", "--directory", str(tmp_path)]) == 0
    assert read_state(tmp_path) is None


def test_a_state_file_that_is_not_one_is_refused_in_one_line(tmp_path, capsys) -> None:
    (tmp_path / STATE_FILE).write_text("{}")
    assert main(["spark", "status", "--directory", str(tmp_path)]) == 2
    assert "is not a cluster's state file" in capsys.readouterr().err


def test_start_refuses_counts_and_memory_it_cannot_use_before_starting_anything(
        tmp_path, capsys) -> None:
    for option, value, said in (("--cores", "-1", "a number of cores"),
                                ("--workers", "0", "a number of workers"),
                                ("--memory", "lots", "an amount of memory")):
        with pytest.raises(SystemExit) as ended:
            main(["spark", "start", "--directory", str(tmp_path / "cluster"), option, value])
        assert ended.value.code == 2
        error = capsys.readouterr().err
        assert f"argument {option}: {value!r} is not {said}" in error, error
    assert not (tmp_path / "cluster").exists()
