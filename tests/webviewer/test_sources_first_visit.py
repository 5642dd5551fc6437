"""The first page after the viewer starts does not pay for importing the stored classes'
modules (4.3 s for the demo's first ``/obj/ID/sources`` on a busy machine, against 0.2 s for
the next): the app imports them in the background as it starts."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from awlineage import Database

MODULE = "awl_viewer_warm_probe"
SOURCE = '''
from awlineage import DBObject, persistent


class WarmProbe(DBObject):
    """A class whose module the viewer must import itself."""

    __namespace__ = "warmprobe"
    label = persistent("Label", str, "")
'''


def test_the_viewer_imports_the_stored_classes_modules_as_it_starts(
        db: Database, open_viewer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / f"{MODULE}.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__(MODULE)
    module.WarmProbe(label="stored").commit()
    del sys.modules[MODULE]  # as in a server that has not imported it yet
    client = open_viewer()  # starts the app: no page asked for yet
    for thread in threading.enumerate():
        if thread.name == "awl-viewer-warm-up":
            thread.join(60)
    assert MODULE in sys.modules
    answer = client.get("/search?q=WarmProbe", headers={"accept": "application/json"})
    assert answer.status_code == 200 and "stand-in" not in answer.text
