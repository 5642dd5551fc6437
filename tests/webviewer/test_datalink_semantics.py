"""The semantics of the DataLink links of the demo's objects and runs, read by pyvo: every term
is one of the core DataLink vocabulary's, and each says which way the link goes (a progenitor
was used to make #this, a derivation was made from it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from awlineage import Database, ProcessRun, RegionTable, Session, select
from tests.webviewer.datalink import datalink_links

CORE_TERMS = {
    "#this", "#progenitor", "#derivation", "#auxiliary", "#weight", "#error", "#noise",
    "#calibration", "#bias", "#dark", "#flat", "#preview", "#preview-image", "#preview-plot",
    "#thumbnail", "#proc", "#cutout", "#documentation", "#detached-header", "#coderived",
    "#counterpart", "#package"}
"""The terms of http://www.ivoa.net/rdf/datalink/core (DataLink 1.1 section 3.2.6: a term of
the core vocabulary is written as a relative URI, any other as a full one)."""


@pytest.fixture(scope="module")
def demo(demo_folder: Path):
    """Ids of the demo's objects of each kind: a source, its source list and the list's run,
    a reduced frame, a region table, and the ids of that run's inputs and outputs."""
    from targets.science import ReducedScienceFrame
    from targets.source_lists import Source

    db = Database(f"sqlite:///{demo_folder}/awlineage.db", read_only=True)
    session = Session(db, str(demo_folder / "awl-data"))
    with session.activate():
        source = select(Source.flags == 0).first()
        sourcelist = source.sourcelist
        run = sourcelist.process_run
        ids = {"source": source.object_id, "sourcelist": sourcelist.object_id,
               "run": run.object_id,
               "reduced": select(ReducedScienceFrame.object_id > 0).first().object_id,
               "region_table": select(RegionTable.object_id > 0).first().object_id}
        used = {o.object_id for o in run.inputs} | {run.process_params.object_id}
        made = {o.object_id for o in run.outputs}
    session.close()
    assert isinstance(run, ProcessRun) and made and used
    return ids, used, made


def _target(row) -> int:
    """The object a row links to, from its access_url (``...links?ID=N``)."""
    return int(row.access_url.rpartition("ID=")[2])


def test_a_runs_outputs_are_derivations_and_its_inputs_progenitors(demo_url, demo) -> None:
    ids, used, made = demo
    links = datalink_links(demo_url, ids["run"])
    progenitors = [_target(r) for r in links.bysemantics("#progenitor", include_narrower=False)]
    derivations = [_target(r) for r in links.bysemantics("#derivation", include_narrower=False)]
    assert set(progenitors) == used
    assert made <= set(derivations) and ids["sourcelist"] in derivations
    assert not made & set(progenitors)


def test_an_object_is_listed_once_however_many_attributes_name_it(demo_url, demo) -> None:
    ids, _, _ = demo
    links = datalink_links(demo_url, ids["run"])
    targets = [(r.semantics, _target(r)) for r in links if r.semantics != "#this"]
    assert len(targets) == len(set(targets))
    both = [r.description for r in links.bysemantics("#progenitor", include_narrower=False)
            if r.description.startswith("process_params")]
    assert both == [next(iter(both))] and both[0].startswith("process_params, inputs: ")


def test_every_semantics_of_objects_and_runs_is_a_core_datalink_term(demo_url, demo) -> None:
    ids, _, _ = demo
    for kind, object_id in ids.items():
        semantics = {row.semantics for row in datalink_links(demo_url, object_id)}
        assert semantics <= CORE_TERMS, (kind, semantics - CORE_TERMS)


def test_the_run_that_made_an_object_and_its_lineage_records_are_documentation(
        demo_url, demo) -> None:
    ids, _, _ = demo
    for kind in ("sourcelist", "source"):
        links = datalink_links(demo_url, ids[kind])
        run_pages = [r.access_url for r in links.bysemantics("#documentation",
                                                             include_narrower=False)
                     if r.content_type == "text/html"]
        assert run_pages == [f"{demo_url}/run/{ids['run']}"], kind
    reduced = datalink_links(demo_url, ids["reduced"])
    for row in reduced.bysemantics("#derivation", include_narrower=False):
        assert "RegionTable" not in row.description
    assert any("RegionTable" in r.description
               for r in reduced.bysemantics("#documentation", include_narrower=False))
