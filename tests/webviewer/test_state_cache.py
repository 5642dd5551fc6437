"""The viewer's kept plans of object states (issue 37's fast pages): the tree and the lineage
graph answer each object's state and reasons exactly as the plain planner does for that
object alone; a request repeated while nothing was committed plans nothing again; a commit
from another connection is seen by the next request. On both backends, and on the demo."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from awlineage import Database, commit, select
from awlineage.persistence import qualified_name
from awlineage.processing import Planner
from tests.webviewer.state_models import (
    StateExposure,
    StateMosaic,
    StateNote,
    StateReduced,
    StateSummary,
    every_state,
    made,
)
from webviewer import Limits
from webviewer._node_states import is_target_class, object_states
from webviewer._state_plans import StatePlans
from webviewer._state_token import ChangeToken

JSON = {"accept": "application/json"}
UNGROUPED = Limits(group_siblings=1000)
CLASSES = (StateExposure, StateReduced, StateMosaic, StateNote, StateSummary)
Answer = tuple[str, list[str]]


def _tree_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for link in node.get("links", []):
        if link["target"]:
            yield from _tree_nodes(link["target"])
    for listed in node.get("lists", []):
        for member in listed["members"]:
            yield from _tree_nodes(member)


def _viewer_states(client: Any, roots: list[int], depth: int) -> dict[int, Answer]:
    """Object id -> (state, reasons) of every object the trees and the lineage graphs of
    `roots` show (ungrouped nodes), asked in turn of one viewer; the same object answers the
    same on every page."""
    found: dict[int, Answer] = {}

    def seen(oid: int, answer: Answer) -> None:
        assert found.setdefault(oid, answer) == answer, (oid, found[oid], answer)

    for root in roots:
        for level in range(depth + 1):
            tree = client.get(f"/obj/{root}/tree.json?depth={level}").json()["tree"]
            for node in _tree_nodes(tree):
                seen(node["object_id"], (node["state"], node["reasons"]))
        graph = client.get(f"/obj/{root}/lineage?depth={depth}", headers=JSON).json()
        assert not graph["states_pending"]
        for node in graph["nodes"]:
            if node["object_id"] is not None:
                seen(node["object_id"], (node["state"], node["reasons"]))
    return found


def _plain(db: Database, name: str, ids: list[int]) -> dict[int, Answer]:
    """The states of `ids` (of class `name`) asked together, planned afresh on objects (no
    columns, nothing kept)."""
    states, limits = object_states(db, {name: ids}, 100_000, StatePlans(db, columnar=False))
    assert limits == []
    return {oid: (states[oid].state, states[oid].reasons) for oid in ids}


def _planners_own(db: Database, classes: list[type]) -> dict[int, Answer]:
    """Stored target id -> (state, reasons) of its node in the plain planner's plan of its
    class (on objects, one planner for all)."""
    found: dict[int, Answer] = {}
    planner = Planner(db, columnar=False)
    for cls in classes:
        planner.plan(cls)
        for node in planner.nodes[cls]:
            if node.existing is not None:
                found[node.existing.object_id] = (node.state.value,
                                                   [str(r) for r in node.reasons])
    return found


def _assert_the_plain_planners(db: Database, shown: dict[int, Answer],
                               class_of: dict[int, type], alone: bool) -> None:
    """`shown` is what the plain planner answers: for each target asked alone (`alone`) or
    for each class's objects asked together; and for a target, its node's in the plan."""
    by_class: dict[str, list[int]] = {}
    for oid in shown:
        by_class.setdefault(qualified_name(class_of[oid]), []).append(oid)
    for name, ids in by_class.items():
        each = alone and is_target_class(class_of[ids[0]])
        for part in ([[oid] for oid in ids] if each else [ids]):
            for oid, answer in _plain(db, name, part).items():
                assert shown[oid] == answer, (oid, shown[oid], answer)
    planned = _planners_own(db, sorted({c for c in class_of.values() if is_target_class(c)},
                                       key=qualified_name))
    for oid, answer in shown.items():
        if oid in planned and answer[0] in ("green", "red", "blocked"):
            assert answer == planned[oid], oid


def test_the_viewers_states_are_the_plain_planners_on_a_history_of_every_state(
        db: Database, open_viewer) -> None:
    objects = made()
    every_state()
    client = open_viewer(limits=UNGROUPED)
    class_of = {o.object_id: cls for cls in CLASSES for o in select(cls, database=db).all()}
    roots = [objects[k].object_id for k in ("F1", "F2", "F3", "n1")]
    shown = _viewer_states(client, roots, depth=2)
    shown.update(_viewer_states(client, [i for i in class_of if i not in shown], depth=1))
    assert set(class_of) <= set(shown)
    class_of = {oid: type(obj) for oid, obj in db.get_many(list(shown)).items()}
    _assert_the_plain_planners(db, shown, class_of, alone=True)
    assert {s for s, _ in shown.values()} == {"green", "red", "orange", "blocked", "unknown",
                                              "stored"}
    reduced_b = next(o for o in select(StateReduced, database=db).all() if o.name == "B-0")
    assert shown[reduced_b.object_id][0] == "blocked"


def test_the_viewers_states_are_the_plain_planners_on_the_demo(demo_client) -> None:
    viewer = demo_client.app.state.viewer
    with viewer.session.activate():
        db = viewer.database
        with db.engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT object_id, class_name FROM awl_object WHERE class_name IN "
                "('targets.SourceList', 'targets.RegriddedFrame')")).all()
        roots = [oid for oid, name in rows if name == "targets.SourceList"][:1] + \
            [oid for oid, name in rows if name == "targets.RegriddedFrame"][:1]
        shown = _viewer_states(demo_client, roots, depth=2)
        class_of = {oid: type(obj) for oid, obj in db.get_many(list(shown)).items()}
        _assert_the_plain_planners(db, shown, class_of, alone=False)
    assert len(shown) > 20 and {"green", "stored"} <= {s for s, _ in shown.values()}


def _planning_statements(engine: sa.Engine, client: Any, path: str) -> int:
    """How many statements answering `path` ran from the target processor's planner."""
    found: list[str] = []

    def seen(*_args: Any) -> None:
        if any("/awlineage/processing/" in f.filename for f in traceback.extract_stack()):
            found.append("")

    sa.event.listen(engine, "before_cursor_execute", seen)
    try:
        answer = client.get(path, headers=JSON)
        assert answer.status_code == 200, answer.text
    finally:
        sa.event.remove(engine, "before_cursor_execute", seen)
    return len(found)


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_a_request_repeated_while_nothing_is_committed_plans_nothing_again(
        db: Database, open_viewer) -> None:
    """On SQLite only: PostgreSQL's token changes with any commit on the server (another
    test's, say), and then the plans are rightly made anew."""
    objects = made()
    every_state()
    client = open_viewer()
    engine = client.app.state.viewer.database.engine
    mosaic = objects["F1"].object_id
    tree, graph = f"/obj/{mosaic}/tree.json?depth=1", f"/obj/{mosaic}/lineage?depth=2"
    first = client.get(tree).json()
    assert _planning_statements(engine, client, tree) == 0
    assert client.get(tree).json() == first
    assert _planning_statements(engine, client, graph) == 0  # its classes are planned
    summary = objects["n1"].object_id  # a class not planned yet is planned once
    assert _planning_statements(engine, client, f"/obj/{summary}/tree.json?depth=0") > 0
    assert _planning_statements(engine, client, f"/obj/{summary}/tree.json?depth=1") == 0


def test_a_commit_from_another_connection_is_seen_by_the_next_request(
        db: Database, open_viewer) -> None:
    objects = made()
    client = open_viewer()
    token = ChangeToken(client.app.state.viewer.database)
    before = token.read()
    assert before is not None
    if db.engine.url.get_backend_name() == "sqlite":  # a server's token follows all its commits
        assert token.read() == before
    reduced = next(o for o in select(StateReduced, database=db).all() if o.name == "A-0")
    path = f"/obj/{reduced.object_id}/tree.json?depth=1"
    answer = client.get(path).json()["tree"]
    assert answer["state"] == "green" and answer["links"][0]["target"]["state"] == "stored"
    newer = StateExposure(name="A-0", field="F1", counts=99.0)
    commit([newer])  # the test's own connection, not the viewer's
    assert token.read() != before
    answer = client.get(path).json()["tree"]
    assert answer["state"] == "red", answer
    assert answer["links"][0]["target"]["state"] == "orange"
    assert answer["links"][0]["target"]["reasons"] == [
        f"a newer version v2 exists: StateExposure {newer.object_id}"]
    graph = client.get(f"/obj/{objects['F1'].object_id}/lineage", headers=JSON).json()
    root = next(n for n in graph["nodes"] if n["root"])
    assert root["state"] == "red"
