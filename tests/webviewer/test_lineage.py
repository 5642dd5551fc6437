"""The lineage graph page: nodes and edges as the lineage API walks them, same-class siblings
grouped and expanded on request, a partial answer at a limit, states as the target processor
sees them now, and the graph carried as JSON for the browser to draw (no Graphviz, no inline
script)."""

from __future__ import annotations

import json
import re

import pytest

from awlineage import Database, ancestors, descendants
from tests.webviewer.lineage_models import Calibrated, Raw, hand_built_graph, make_chain
from webviewer import Limits

JSON = {"accept": "application/json"}
UNGROUPED = Limits(group_siblings=1000)


def graph(client, object_id: int, **params) -> dict:
    answer = client.get(f"/obj/{object_id}/lineage", params=params, headers=JSON)
    assert answer.status_code == 200, answer.text
    return answer.json()


def object_ids(answer: dict) -> set[int]:
    return {n["object_id"] for n in answer["nodes"]}


def test_upstream_nodes_and_edges_are_the_ancestors_and_their_links(lineage_path, db: Database,
                                                                    open_viewer) -> None:
    leaf, parts, bases = hand_built_graph()
    client = open_viewer(limits=UNGROUPED)
    answer = graph(client, leaf.object_id, depth=5, direction="up")
    assert answer["partial"] is False and answer["direction"] == "up"
    assert object_ids(answer) == {leaf.object_id} | {o.object_id for o in ancestors(leaf)}
    edges = {(int(e["from"]), int(e["to"]), e["label"]) for e in answer["edges"]}
    assert edges == {(parts[0].object_id, leaf.object_id, "parts"),
                     (parts[1].object_id, leaf.object_id, "parts"),
                     (bases[0].object_id, leaf.object_id, "extra"),
                     (bases[0].object_id, parts[0].object_id, "source"),
                     (bases[1].object_id, parts[1].object_id, "source")}
    one_hop = graph(client, leaf.object_id, direction="up")
    assert one_hop["depth"] == 1
    assert object_ids(one_hop) == {leaf.object_id} | {o.object_id for o in ancestors(leaf, 1)}


def test_downstream_nodes_are_the_descendants(lineage_path, db: Database, open_viewer) -> None:
    leaf, parts, bases = hand_built_graph()
    client = open_viewer(limits=UNGROUPED)
    answer = graph(client, bases[0].object_id, depth=5, direction="down")
    assert object_ids(answer) == {bases[0].object_id} | \
        {o.object_id for o in descendants(bases[0])}
    levels = {n["object_id"]: n["level"] for n in answer["nodes"]}
    assert levels[parts[0].object_id] == 1 and levels[leaf.object_id] == 1
    both = graph(client, parts[0].object_id, direction="both")
    assert object_ids(both) == {parts[0].object_id, bases[0].object_id, leaf.object_id}
    assert {n["level"] for n in both["nodes"]} == {-1, 0, 1}


def test_same_class_siblings_are_one_node_that_expands_on_request(lineage_path, db: Database,
                                                                   open_viewer) -> None:
    leaf, parts, _ = hand_built_graph(parts=12)
    client = open_viewer()
    answer = graph(client, leaf.object_id, direction="up")
    groups = [n for n in answer["nodes"] if n["class"] == "Part"]
    assert len(groups) == 1
    group = groups[0]
    assert group["count"] == 12 and group["object_id"] is None
    assert sorted(group["members"]) == sorted(p.object_id for p in parts)
    assert f"expand={group['key']}" in group["url"]
    expanded = client.get(group["url"], headers=JSON).json()
    singles = [n for n in expanded["nodes"] if n["class"] == "Part"]
    assert len(singles) == 12 and all(n["count"] == 1 for n in singles)
    assert expanded["expanded"] == [group["key"]]
    deeper = graph(client, leaf.object_id, direction="up", depth=2)
    bases = [n for n in deeper["nodes"] if n["class"] == "Base"]
    # a group's parents are grouped in turn; bases[0] is one hop away already (extra)
    assert sorted((n["level"], n["count"]) for n in bases) == [(-2, 11), (-1, 1)]


def test_a_walk_stops_at_its_limits_and_says_so(lineage_path, db: Database, open_viewer) -> None:
    leaf, _, _ = hand_built_graph(parts=6)
    client = open_viewer(limits=Limits(graph_objects=4, group_siblings=1000))
    answer = graph(client, leaf.object_id, direction="up", depth=3)
    assert answer["partial"] is True
    assert len(answer["nodes"]) <= 4
    assert any(hit.startswith("graph_objects") for hit in answer["limits_hit"])
    client = open_viewer(limits=Limits(graph_nodes=3, group_siblings=1000))
    answer = graph(client, leaf.object_id, direction="up")
    assert answer["partial"] is True and len(answer["nodes"]) == 3
    assert any(hit.startswith("graph_nodes") for hit in answer["limits_hit"])
    page = client.get(f"/obj/{leaf.object_id}/lineage?direction=up")
    assert "Partial graph" in page.text and "graph_nodes" in page.text


@pytest.mark.parametrize(("query", "named"), [
    ("depth=0", "depth"), ("depth=x", "depth"), ("depth=51", "depth"),
    ("direction=sideways", "direction"), ("expand=%3Cscript%3E", "expand"),
])
def test_bad_parameters_are_refused_naming_them(db: Database, open_viewer, query: str,
                                                named: str) -> None:
    leaf, _, _ = hand_built_graph()
    answer = open_viewer().get(f"/obj/{leaf.object_id}/lineage?{query}", headers=JSON)
    assert answer.status_code == 400
    assert named in answer.json()["error"]


def test_an_unknown_object_is_404(db: Database, open_viewer) -> None:
    client = open_viewer()
    assert client.get("/obj/12345/lineage", headers=JSON).status_code == 404
    assert client.get("/obj/abc/lineage", headers=JSON).status_code == 400


def states(answer: dict) -> dict[int, dict]:
    return {n["object_id"]: n for n in answer["nodes"] if n["object_id"] is not None}


def test_states_are_green_until_a_newer_raw_version_makes_targets_red_and_it_orange(
        db: Database, open_viewer) -> None:
    stack = make_chain(frames=3)
    calibrated = {c.name: c for c in stack.frames}
    first = calibrated["F1-0"]
    before = states(graph(open_viewer(), first.object_id, direction="both"))
    assert before[first.object_id]["state"] == "green"
    assert before[first.raw.object_id]["state"] == "stored"
    assert before[stack.object_id]["state"] == "green"
    newer = Raw(name="F1-0", field="F1", counts=99.0)
    newer.commit()  # version 2 of that identity
    answer = graph(open_viewer(), first.object_id, direction="both")
    after = states(answer)
    assert after[first.raw.object_id]["state"] == "orange"
    assert "newer version v2" in after[first.raw.object_id]["reasons"][0]
    assert after[first.object_id]["state"] == "red"
    assert after[first.object_id]["reasons"] == [
        f"raw: Raw {first.raw.object_id} has newer version 2 ({newer.object_id}); the "
        "processor makes a new Calibrated from it"]
    assert after[stack.object_id]["state"] == "red"
    assert after[stack.object_id]["reasons"][0] == "frames: 1 added, 1 removed"
    other = states(graph(open_viewer(), calibrated["F1-1"].object_id, direction="up"))
    assert other[calibrated["F1-1"].object_id]["state"] == "green"
    assert answer["counts"]["red"] == 2 and answer["counts"]["orange"] == 1
    page = open_viewer().get(f"/obj/{first.object_id}/lineage?states=now").text
    assert "state-red" in page and "has newer version 2" in page and "out of date" in page


def test_a_changed_code_version_makes_every_target_of_the_class_red(db: Database,
                                                                    open_viewer) -> None:
    stack = make_chain(frames=4)
    Calibrated.code_version = "2.0"
    try:
        answer = graph(open_viewer(), stack.object_id, direction="up")
    finally:
        Calibrated.code_version = "1.0"
    group = next(n for n in answer["nodes"] if n["class"] == "Calibrated")
    assert group["count"] == 4 and group["state"] == "red" and group["states"] == {"red": 4}
    assert group["reasons"][0] == "4 of 4: code version of Calibrated changed 1.0 -> 2.0"
    root = states(answer)[stack.object_id]
    assert root["state"] == "red"


def test_the_page_carries_the_graph_as_json_and_loads_only_its_own_scripts(
        db: Database, open_viewer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no Graphviz (nor any other program) needed
    stack = make_chain(frames=3)
    client = open_viewer()
    url = f"/obj/{stack.object_id}/lineage?direction=up&depth=2"
    page = client.get(url).text
    answer = client.get(url, headers=JSON).json()
    embedded = re.search(r'<script type="application/json" id="lineage-data">(.*?)</script>',
                         page, re.S)
    assert embedded is not None and "<" not in embedded.group(1)  # cannot end its element
    data = json.loads(embedded.group(1))
    assert data["edges"] == answer["edges"]
    # the page's nodes wait for their states, which its script takes from the JSON form
    state_fields = ("state", "state_text", "states", "reasons")
    assert data["states_pending"] and not answer["states_pending"]
    assert [{k: v for k, v in n.items() if k not in state_fields} for n in data["nodes"]] == \
        [{k: v for k, v in n.items() if k not in state_fields} for n in answer["nodes"]]
    assert {n["state"] for n in data["nodes"]} == {"pending"}
    assert {n["state_text"] for n in answer["nodes"]} >= {"up to date", "stored"}
    now = client.get(url + "&states=now").text  # without script: the page works them out
    assert "up to date" in now and "state being worked out" not in now
    root = [n for n in data["nodes"] if n["root"]]
    assert [n["key"] for n in root] == [str(stack.object_id)]
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert all('src="/static/' in tag or 'type="application/json"' in tag for tag in scripts)
    assert 'src="/static/vendor/cytoscape.min.js"' in page
    assert "<svg" not in page and "style=" not in page
    assert not re.search(r"\son[a-z]+=", page)
    for row in data["nodes"]:  # the table lists every node for keyboards and no script
        assert f'id="row-{row["key"]}"' in page


def test_the_vendored_scripts_are_served_with_their_licences(db: Database,
                                                             open_viewer) -> None:
    client = open_viewer()
    for name in ("cytoscape.min.js", "cytoscape-dagre.min.js"):
        answer = client.get(f"/static/vendor/{name}")
        assert answer.status_code == 200 and len(answer.content) > 10_000
    for name in ("cytoscape", "cytoscape-dagre", "dagre", "graphlib"):
        assert "MIT" in client.get(f"/static/vendor/LICENSE-{name}.txt").text or \
            "Permission is hereby granted" in client.get(f"/static/vendor/LICENSE-{name}.txt").text
