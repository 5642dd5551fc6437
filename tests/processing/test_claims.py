"""Two processors started at once on overlapping targets make each target once; a claim
left by a crashed processor is taken over once its heartbeat is old."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from awlineage import ProcessRun, TargetProcessor, select
from awlineage.database._commit import identity_key
from tests.processing.models import Calibrated, Stack

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


def test_two_processors_at_once_make_each_target_once(db, night) -> None:
    url = db.url.render_as_string(hide_password=False)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    processes = [subprocess.Popen([sys.executable, "-c", SCRIPT, url, db.schema or ""],
                                  cwd=REPO, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
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
    key = f"Calibrated:{identity_key(node.obj)}"
    table = db.framework["awl_claim"]
    long_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    with db.engine.begin() as conn:
        conn.execute(table.insert().values(target_key=key, claimed_by="crashed:1:dead",
                                           heartbeat=long_ago))
    report = processor.make(Calibrated, "chip == 'ccd52'")
    assert report.made == 1
    with db.engine.connect() as conn:
        assert conn.execute(table.select()).all() == []
