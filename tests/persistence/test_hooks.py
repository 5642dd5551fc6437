"""The seams other layers build on: observers of created and read objects, companions that
commit together, and links narrowed in subclasses."""

from __future__ import annotations

import pytest

from awlineage import DBObject, PropertyDefinitionError, commit, persistent, select
from awlineage.persistence import add_observer, remove_observer
from tests.persistence.models import CameraFrame, FlatfieldImage, Instrument, Site


class Recorder:
    def __init__(self) -> None:
        self.made: list[DBObject] = []
        self.seen: list[DBObject] = []

    def created(self, obj: DBObject) -> None:
        self.made.append(obj)

    def read(self, objects) -> None:
        self.seen.extend(objects)


@pytest.fixture
def recorder():
    rec = Recorder()
    add_observer(rec)
    yield rec
    remove_observer(rec)


def test_observers_hear_of_created_objects_and_of_reads(db, reconnect, recorder) -> None:
    CameraFrame(chip="x", instrument=Instrument(name="WFI")).commit()
    assert {type(o).__name__ for o in recorder.made} == {"CameraFrame", "Instrument"}
    other = reconnect()
    frame = select(CameraFrame.chip == "x", database=other).first()
    assert frame in recorder.seen
    instrument = frame.instrument
    assert instrument in recorder.seen
    assert not any(isinstance(o, str) for o in recorder.seen)


def test_companion_commits_with_its_object_and_not_before(db) -> None:
    frame = CameraFrame(chip="y")
    note = Site(name="companion")
    frame.add_companion(note)
    assert select(Site).count() == 0
    frame.commit()
    assert note.is_committed and select(Site.name == "companion").count() == 1


def test_subclass_may_narrow_a_link_but_not_change_its_kind() -> None:
    class Holder(DBObject):
        thing = persistent("Anything", DBObject, None)

    class FlatHolder(Holder):
        thing = persistent("A flat", FlatfieldImage, None)

    assert FlatHolder._properties["thing"].type is FlatfieldImage
    with pytest.raises(PropertyDefinitionError, match="narrow a link"):
        class ListHolder(Holder):
            thing = persistent("Many", FlatfieldImage, [])


def test_objects_committed_together_keep_their_links(db) -> None:
    frames = [CameraFrame(chip=str(i)) for i in range(3)]
    frames[2].previous = frames[1]
    commit(frames)
    assert select(CameraFrame.previous.chip == "1").first() is frames[2]
