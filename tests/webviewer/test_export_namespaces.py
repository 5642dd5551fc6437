"""The namespaces of the OpenLineage export: the session's database and data server (a local
directory as an absolute file:// URL, whatever AWL_DATA_URL says), and in a public viewer
one neutral name that tells neither where the database is nor where the files are (the
site's id when one is recorded); the PROV export names neither either. On both backends."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from awlineage import Database, Process, Session, openlineage_events, persistent
from awlineage.federation import set_local_site
from tests.webviewer.object_models import ScanFile, fits_bytes, scan_file
from webviewer import create_app


class FileMeasure(Process):
    """The length of a scan's label: a run that read a file's object."""

    __namespace__ = "viewerexports"
    scan = persistent("The scan measured", ScanFile, None)
    length = persistent("Its label's length", float, None)

    def make(self) -> None:
        """Measure the label."""
        self.length = float(len(self.scan.label))


def _measured(db: Database, data: Path) -> FileMeasure:
    scan = scan_file(db, data, fits_bytes(image=True), label="sky")
    with Session(db, str(data)):
        made = FileMeasure(scan=scan)
        made.make()
        made.commit()
    return made


def _namespaces(events: list[dict]) -> set[str]:
    return {d["namespace"] for e in events for d in [*e["inputs"], *e["outputs"]]}


def _client(db: Database, data_url: str, public: bool = False) -> TestClient:
    return TestClient(create_app(db.url.render_as_string(hide_password=False),
                                 schema=db.schema, data_url=data_url, public=public))


def test_files_are_in_the_namespace_of_the_sessions_data_server(
        db: Database, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AWL_DATA_URL", "./elsewhere")
    data = tmp_path / "awl-data"
    made = _measured(db, data)
    with Session(db, str(data)):
        events = openlineage_events(made)
    files = {d["namespace"] for e in events for d in e["inputs"] if "name" in d
             and d["name"] == made.scan.filename}
    assert files == {data.absolute().as_uri()}
    with _client(db, str(data)) as client:
        served = client.get(f"/obj/{made.object_id}/openlineage.json").json()
    assert data.absolute().as_uri() in _namespaces(served)
    assert "./elsewhere" not in json.dumps(served)


def test_a_public_viewer_exports_name_no_database_nor_data_server(db: Database,
                                                                  tmp_path: Path) -> None:
    data = tmp_path / "awl-data"
    made = _measured(db, data)
    url = db.url.render_as_string(hide_password=True)
    with _client(db, str(data), public=True) as client:
        lineage = client.get(f"/obj/{made.object_id}/openlineage.json")
        prov = client.get(f"/obj/{made.object_id}/prov.json")
    assert lineage.status_code == prov.status_code == 200
    assert _namespaces(lineage.json()) == {"awlineage", "awlineage:files"}
    for answer in (lineage, prov):
        for leak in (url, str(db.url.database), "postgresql", "sqlite:", str(tmp_path),
                     "file://", "awl-data"):
            assert leak not in answer.text, leak
    site = set_local_site(db, name="trial")
    with _client(db, str(data), public=True) as client:
        lineage = client.get(f"/obj/{made.object_id}/openlineage.json")
    own = f"urn:awlineage:site:{site.site_id}"
    assert _namespaces(lineage.json()) == {own, f"{own}:files"}
