"""Two processors started at once on overlapping targets make each target once and store
each parameters object once; a claim left by a crashed processor is taken over once its
heartbeat is old, and cleared when its target was stored before the crash."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import sqlalchemy as sa

from awlineage import ProcessParameters, ProcessRun, TargetProcessor, select
from awlineage.database._commit import identity_key
from tests.processing.models import CalibParameters, Calibrated, Stack

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys
    from awlineage import connect, TargetProcessor
    connect(sys.argv[1], schema=sys.argv[2] or None)
    from tests.processing.models import CalibParameters, Stack
    report = TargetProcessor("serial", progress=False,
                             parameters=(CalibParameters(delay=0.4),)).make(Stack)
    print(report.made, report.reused, report.count("failed"))
""")

# Both processors plan, with the default parameters, only once both are ready.
DEFAULTS_SCRIPT = textwrap.dedent("""
    import sys
    from awlineage import connect, TargetProcessor
    connect(sys.argv[1], schema=sys.argv[2] or None)
    from tests.processing.models import Stack
    print("ready", flush=True)
    sys.stdin.readline()
    TargetProcessor("serial", progress=False).make(Stack)
""")

# A processor that crashes right after its first target is committed, before the claim on
# it is released (the crash is injected: no timing can hit that moment reliably).
CRASH_SCRIPT = textwrap.dedent("""
    import os, sys
    from awlineage import connect, TargetProcessor
    from awlineage.processing import Claims
    connect(sys.argv[1], schema=sys.argv[2] or None)
    from tests.processing.models import Calibrated
    Claims.release = lambda self, key: os._exit(3)
    TargetProcessor("serial", progress=False).make(Calibrated, "chip == 'ccd52'")
""")


def _processes(db, script: str, count: int, **options) -> list[subprocess.Popen]:
    url = db.url.render_as_string(hide_password=False)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return [subprocess.Popen([sys.executable, "-c", script, url, db.schema or ""],
                             cwd=REPO, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, **options)
            for _ in range(count)]


def test_two_processors_at_once_make_each_target_once(db, night) -> None:
    processes = _processes(db, SCRIPT, 2)
    outputs = [p.communicate(timeout=300) for p in processes]
    for process, (_, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
    made = [tuple(map(int, out.split())) for out, _ in outputs]
    assert sum(m for m, _, _ in made) == 10, made
    assert all(failed == 0 for _, _, failed in made)
    assert all(m > 0 for m, _, _ in made), f"one processor did everything: {made}"
    assert [obj.version for obj in select(Calibrated)] == [1] * 5
    assert [obj.version for obj in select(Stack)] == [1] * 3
    assert select(ProcessRun.status == "succeeded").count() == 10


def test_a_claim_of_a_crashed_processor_is_taken_over(db, night) -> None:
    processor = TargetProcessor("serial", progress=False, claim_timeout=1.0)
    plan = processor.plan(Calibrated, "chip == 'ccd52'")
    node = plan.red()[0]
    key = f"tests.Calibrated:{identity_key(node.obj)}"
    table = db.framework["awl_claim"]
    long_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    with db.engine.begin() as conn:
        conn.execute(table.insert().values(target_key=key, claimed_by="crashed:1:dead",
                                           heartbeat=long_ago))
    report = processor.make(Calibrated, "chip == 'ccd52'")
    assert report.made == 1
    with db.engine.connect() as conn:
        assert conn.execute(table.select()).all() == []


def test_two_processors_at_once_store_each_parameters_object_once(db, night) -> None:
    processes = _processes(db, DEFAULTS_SCRIPT, 2, stdin=subprocess.PIPE)
    for process in processes:
        assert process.stdout.readline() == "ready\n", process.communicate()[1]
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    assert select(CalibParameters).count() == 1
    assert select(ProcessParameters).count() == 1
    assert len({c.process_params.object_id for c in select(Calibrated)}) == 1


def test_a_claim_left_by_a_crash_after_commit_is_cleared(db, night) -> None:
    (crashed,) = _processes(db, CRASH_SCRIPT, 1)
    _, err = crashed.communicate(timeout=300)
    assert crashed.returncode == 3, err
    assert select(Calibrated.chip == "ccd52").count() == 1
    table = db.framework["awl_claim"]
    long_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    with db.engine.begin() as conn:  # time passes: the claim's heartbeat grows old
        assert conn.execute(table.update().values(heartbeat=long_ago)).rowcount == 1
    report = TargetProcessor("serial", progress=False).make(Calibrated, "chip == 'ccd52'")
    assert report.made == 0
    with db.engine.connect() as conn:
        assert conn.execute(table.select()).all() == []


def test_a_live_claim_on_a_stored_target_is_left_to_its_processor(db, night, serial) -> None:
    serial.make(Calibrated, "chip == 'ccd52'")
    (stored,) = select(Calibrated.chip == "ccd52")
    table = db.framework["awl_claim"]
    key = f"Calibrated:{identity_key(stored)}"
    with db.engine.begin() as conn:
        conn.execute(table.insert().values(target_key=key, claimed_by="alive:1:beef",
                                           heartbeat=datetime.datetime.now(datetime.UTC)))
    serial.make(Calibrated, "chip == 'ccd52'")
    with db.engine.connect() as conn:
        assert conn.execute(sa.select(table.c.target_key)).scalars().all() == [key]
