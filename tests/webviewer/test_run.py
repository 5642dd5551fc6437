"""The process run page ``/run/<id>``: who, when, code, parameters, environment, how it
ended, inputs, outputs, the runs around it and the call trace; on both backends."""

from __future__ import annotations

import pytest

from awlineage import Database, ProcessRun, select
from tests.webviewer.object_models import Tally, TallyParameters, Widget, gizmo
from webviewer import Limits

JSON = {"accept": "application/json"}


def _made_stack(parts: int = 2) -> Tally:
    stack = Tally(parts=[Widget(name="x" * (i + 1)) for i in range(parts)],
                  process_params=TallyParameters(scale=3.0))
    stack.make()
    stack.commit()
    return stack


def test_the_run_page_answers_the_run_as_json(db: Database, open_viewer) -> None:
    stack = _made_stack()
    run = stack.process_run
    answer = open_viewer().get(f"/run/{run.object_id}", headers=JSON).json()
    assert answer["object_id"] == run.object_id and answer["class"] == "ProcessRun"
    assert answer["target"]["object_id"] == stack.object_id
    assert answer["target_class"] == "Tally"
    assert answer["status"] == "succeeded" and answer["error"] is None
    assert answer["who"] == {"user": run.user, "host": run.host, "pid": run.pid}
    assert answer["when"]["started"] == run.started.isoformat()
    assert answer["when"]["duration"] == pytest.approx(run.duration)
    assert answer["code_version"] == run.code_version
    assert answer["covered_code"] == run.covered_code_digests()
    assert answer["parameters"] == {"scale": 3.0}
    assert answer["process_params"]["object_id"] == stack.process_params.object_id
    assert answer["environment"]["python"].startswith("CPython")
    assert "numpy" in answer["environment"]["packages"]
    assert answer["inputs"]["count"] == 3  # what make() read: the parts and parameters
    assert {m["object_id"] for m in answer["inputs"]["members"]} == {
        *(p.object_id for p in stack.parts), stack.process_params.object_id}
    assert answer["outputs"]["count"] == 0 and answer["children"]["count"] == 0
    assert answer["parent_run"] is None
    make, = answer["calls"]
    assert (make["owner"], make["method"]) == ("Tally", "make")
    assert [c["method"] for c in make["children"]] == ["add"]
    assert make["children"][0]["result"] == "3.0"  # 1 + 2, before the scale
    assert make["duration_text"].endswith("s")
    assert answer["calls_recorded"] == 2 and answer["calls_dropped"] == 0


def test_the_run_page_shows_the_run_and_its_call_tree(db: Database, open_viewer) -> None:
    stack = _made_stack()
    run = stack.process_run
    html = open_viewer().get(f"/run/{run.object_id}").text
    assert f'<a class="objref" href="/obj/{stack.object_id}">Tally {stack.object_id}</a>' in html
    assert f"{run.user} on {run.host}, process {run.pid}" in html
    assert '<code class="callname">Tally.make</code>' in html
    assert '<details class="call" data-index="0">' in html
    assert '<code class="callname">object_models.add</code>' in html
    assert "<th>scale</th><td>3.0</td>" in html
    assert f'href="/obj/{run.object_id}"' in html


def test_a_failed_run_shows_its_error_and_traceback(db: Database, open_viewer) -> None:
    with pytest.raises(RuntimeError):
        Tally(parts=[Widget(name="a")], fail=True).make()
    run, = select(ProcessRun.status == "failed")
    client = open_viewer()
    answer = client.get(f"/run/{run.object_id}", headers=JSON).json()
    assert answer["status"] == "failed"
    assert answer["error"]["type"] == "builtins.RuntimeError"
    assert answer["error"]["message"] == "asked to fail <b>loudly</b>"
    assert "Traceback" in answer["error"]["traceback"]
    assert answer["target"] is None  # never stored
    html = client.get(f"/run/{run.object_id}").text
    assert "asked to fail &lt;b&gt;loudly&lt;/b&gt;" in html
    assert '<details class="traceback"><summary>Traceback</summary>' in html
    assert "(not stored)" in html


def test_a_run_page_of_another_object_is_404_saying_what_it_is(db: Database,
                                                               open_viewer) -> None:
    obj = gizmo(1)
    client = open_viewer()
    answer = client.get(f"/run/{obj.object_id}", headers=JSON)
    assert answer.status_code == 404
    assert answer.json()["error"] == (f"object {obj.object_id} is a Gizmo, not a process "
                                      f"run; its page is /obj/{obj.object_id}")
    assert client.get("/run/77", headers=JSON).status_code == 404
    assert client.get("/run/-1", headers=JSON).status_code == 400


def test_run_lists_and_the_call_trace_are_capped(db: Database, open_viewer) -> None:
    run = _made_stack(parts=5).process_run
    client = open_viewer(limits=Limits(list_members=2, trace_calls=1))
    answer = client.get(f"/run/{run.object_id}", headers=JSON).json()
    assert answer["inputs"]["count"] == 6 and len(answer["inputs"]["members"]) == 2
    make, = answer["calls"]
    assert make["children"] == [] and answer["calls_hidden"] == 1
    assert answer["limits_hit"] == ["list_members: 2 of the 6 inputs are shown",
                                    "trace_calls: the first 1 of the 2 recorded calls are "
                                    "shown"]
