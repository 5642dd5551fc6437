"""Fast pages (issue 37), checked by counts, not times: the states of a whole graph worked out
together are each object's own answer; the lineage page runs as many SQL statements for 50
nodes as for 5, and reads the class registry once per request."""

from __future__ import annotations

import re

import sqlalchemy as sa

from awlineage import Database
from tests.webviewer.lineage_models import Raw, hand_built_graph, make_chain
from webviewer import Limits
from webviewer._graph_walk import WalkLimits, class_names, walk_lineage
from webviewer._node_states import object_states

JSON = {"accept": "application/json"}
UNGROUPED = Limits(group_siblings=1000)
TIMING = re.compile(r'db;desc="(\d+) queries"')
REGISTRY = re.compile(r"max\(\w*\.?awl_class\.class_version\)", re.IGNORECASE)
"""The statement of `Database.registered_classes` (every class's latest entry)."""


def _graph_objects(db: Database, root: int, depth: int) -> dict[str, list[int]]:
    """Qualified class name -> ids of every object of `root`'s lineage graph, both ways."""
    graph = walk_lineage(db, root, class_names(db, [root])[root], up=depth, down=depth,
                         expand=frozenset(), limits=WalkLimits(10_000, 1_000, 1_000))
    by_class: dict[str, list[int]] = {}
    for node in graph.nodes.values():
        by_class.setdefault(node.class_name, []).extend(node.object_ids)
    return by_class


def _assert_batched_is_each_ones_own(db: Database, by_class: dict[str, list[int]]) -> dict:
    together, limits = object_states(db, by_class, 100_000)
    assert limits == []
    for name, ids in by_class.items():
        for oid in ids:
            alone, _ = object_states(db, {name: [oid]}, 100_000)
            assert together[oid] == alone[oid], (name, oid)
    return together


def test_states_of_a_graph_with_a_stale_node_are_each_objects_own(db: Database) -> None:
    stack = make_chain(frames=3)
    first = next(c for c in stack.frames if c.name == "F1-0")
    Raw(name="F1-0", field="F1", counts=99.0).commit()  # first is red, its raw orange
    green = next(c for c in stack.frames if c.name == "F1-1")
    leaf, _, _ = hand_built_graph(parts=2)
    by_class = _graph_objects(db, first.object_id, depth=2)
    for root in (green.object_id, leaf.object_id):
        for name, ids in _graph_objects(db, root, depth=2).items():
            by_class.setdefault(name, []).extend(i for i in ids if i not in by_class.get(name, []))
    states = _assert_batched_is_each_ones_own(db, by_class)
    found = {s.state for s in states.values()}
    assert {"red", "orange", "green", "stored"} <= found, found


def test_states_of_the_demos_graph_are_each_objects_own(demo_client) -> None:
    viewer = demo_client.app.state.viewer
    with viewer.session.activate():
        db = viewer.database
        rows = db.engine.connect().execute(sa.text(
            "SELECT min(object_id) FROM awl_object WHERE class_name = 'targets.SourceList'"))
        root = rows.scalar_one()
        by_class = _graph_objects(db, root, depth=1)
        states = _assert_batched_is_each_ones_own(db, by_class)
    assert len(states) > 10 and {"green", "stored"} <= {s.state for s in states.values()}


def _statements(client, path: str) -> int:
    answer = client.get(path, headers=JSON)
    assert answer.status_code == 200, answer.text
    match = TIMING.search(answer.headers["server-timing"])
    assert match
    return int(match[1])


def test_the_lineage_pages_statements_do_not_grow_with_its_nodes(db: Database,
                                                                   open_viewer) -> None:
    small, _, _ = hand_built_graph(parts=2)
    big, _, _ = hand_built_graph(parts=25)
    client = open_viewer(limits=UNGROUPED)
    paths = [f"/obj/{leaf.object_id}/lineage?depth=2" for leaf in (small, big)]
    nodes = [len(client.get(path, headers=JSON).json()["nodes"]) for path in paths]
    assert nodes == [5, 51]
    counts = [_statements(client, path) for path in paths]
    assert counts[0] == counts[1], counts


def test_the_class_registry_is_read_once_per_request(db: Database, open_viewer) -> None:
    stack = make_chain(frames=3)
    client = open_viewer()
    engine = client.app.state.viewer.database.engine
    client.get("/")  # builds the middleware
    reads: list[str] = []

    def seen(_conn, _cursor, statement: str, *_args) -> None:
        if REGISTRY.search(statement):
            reads.append(statement)

    sa.event.listen(engine, "before_cursor_execute", seen)
    try:
        for path in (f"/obj/{stack.object_id}/lineage?depth=2", f"/obj/{stack.object_id}"):
            reads.clear()
            _statements(client, path)
            assert len(reads) <= 1, (path, len(reads))
    finally:
        sa.event.remove(engine, "before_cursor_execute", seen)
