"""The replication plan carried out between live sites: the workload asked of each site's
API (lineage size, query log), the plan, and `replicate` fetching in full the lineage of the
sites in this site's sub-cluster; on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa

from awlineage import ancestors
from awlineage.federation import (
    export_bundle,
    gather_workload,
    import_bundle,
    origins_of,
    replicate,
)
from tests.commands import run_awl
from tests.federation.test_remote_lineage import _chain


def _pointers(db) -> list[int]:
    registry = db.framework["awl_object"]
    with db.engine.connect() as conn:
        return list(conn.execute(sa.select(registry.c.object_id).where(
            registry.c.class_name == "awlineage.RemotePointer")).scalars())


def test_the_plan_is_asked_of_the_sites_and_replicate_fetches_the_partners_lineage(
        sites) -> None:
    a, b = sites("a"), sites("b")
    steps = _chain(a, 6, "a")
    a.start()
    import_bundle(export_bundle(steps[-1], depth=1, database=a.db), database=b.db)
    ancestors(b.db.get(steps[-1].object_id), depth=2, database=b.db)  # B asks A: logged
    b.start()

    workload = gather_workload(b.db, communication_weight=50.0)
    assert workload.here == b.url and not workload.unreachable
    assert set(workload.problem.sites) == {a.url, b.url}
    assert workload.problem.sizes[a.url] > 0
    assert workload.problem.edge_weight(a.url, b.url) > 0  # B's fetches from A

    left = _pointers(b.db)
    assert left  # beyond what B fetched, A's older steps are still pointers
    run = replicate(b.db, workload)
    assert run.partners == (a.url,)
    assert not _pointers(b.db)
    assert sorted(run.fetched[a.url].resolved) == sorted(left)
    assert {o.via for o in origins_of(b.db, left).values()} == {"replicated"}
    assert [o.label for o in ancestors(b.db.get(steps[-1].object_id), database=b.db)] == \
        [f"a{i}" for i in range(4, -1, -1)]

    a.stop()
    later = gather_workload(b.db)
    assert set(later.unreachable) == {a.url}
    assert "refused" in later.unreachable[a.url] or "could not" in later.unreachable[a.url]


def test_awl_sites_plan_prints_the_plan_from_the_live_sites(sites) -> None:
    a, b = sites("a"), sites("b")
    steps = _chain(a, 3, "a")
    a.start()
    import_bundle(export_bundle(steps[-1], depth=0, database=a.db), database=b.db)
    ancestors(b.db.get(steps[-1].object_id), database=b.db)
    done = run_awl(b.db, "sites", "plan", "--communication-weight", "50")
    assert done.returncode == 0, done.stderr
    assert f"{a.url}, {b.url}" in done.stdout or f"{b.url}, {a.url}" in done.stdout
    assert f"{b.url} replicates lineage of: {a.url}" in done.stdout
