"""Committing, loading, immutability, identity, versions and lazy links, on both backends."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from awlineage import (
    AwlError,
    DuplicateObjectError,
    ImmutableObjectError,
    ObjectInUseError,
    PersistentTypeError,
    PropertyDefinitionError,
    commit,
    persistent,
    select,
)
from awlineage.database import recorded_statements
from tests.persistence.models import (
    CameraFrame,
    DomeFlatImage,
    EncodedPayload,
    FlatfieldImage,
    Instrument,
    MasterBias,
    Site,
    utc,
)


def test_every_kind_of_property_round_trips(db, reconnect) -> None:
    site = Site(name="La Silla", altitude=2400.0)
    wfi = Instrument(name="WFI", site=site)
    first = CameraFrame(chip="ccd50")
    frame = CameraFrame(chip="ccd51", exptime=30.0, nexp=2, is_science=False,
                     obs_date=utc(2024, 3, 1, 2, 30), keywords=["OBJECT", "FILTER"],
                     gains=[2.0, 2.5], instrument=wfi, overlaps=[first, wfi], previous=first)
    frame.commit()
    other = reconnect()
    loaded = select(CameraFrame.chip == "ccd51", database=other).first()
    assert loaded is not frame and loaded.object_id == frame.object_id
    assert (loaded.exptime, loaded.nexp, loaded.is_science) == (30.0, 2, False)
    assert loaded.obs_date == utc(2024, 3, 1, 2, 30)
    assert loaded.keywords == ["OBJECT", "FILTER"] and loaded.gains == [2.0, 2.5]
    assert loaded.instrument.site.name == "La Silla"
    assert [type(o).__name__ for o in loaded.overlaps] == ["CameraFrame", "Instrument"]
    assert loaded.previous.chip == "ccd50"
    assert loaded.creation_date == frame.creation_date


def test_commit_writes_linked_uncommitted_objects_in_one_transaction(db) -> None:
    frame = CameraFrame(instrument=Instrument(name="WFI", site=Site(name="ESO")))
    for cls in (CameraFrame, Instrument, Site):  # tables are made in their own transactions
        db.tables_for(cls)
    transactions: list[object] = []

    def began(connection) -> None:
        transactions.append(connection)

    sa.event.listen(db.engine, "begin", began)
    try:
        with recorded_statements(db) as statements:
            frame.commit()
    finally:
        sa.event.remove(db.engine, "begin", began)
    assert frame.instrument.is_committed and frame.instrument.site.is_committed
    assert len(transactions) == 1
    assert sum(s.lstrip().upper().startswith("INSERT") for s in statements) >= 3
    assert select(Site.name == "ESO").count() == 1


def test_committed_object_rejects_assignment(db) -> None:
    frame = CameraFrame(chip="ccd50")
    frame.commit()
    with pytest.raises(ImmutableObjectError, match="committed and immutable"):
        frame.chip = "ccd51"
    with pytest.raises(ImmutableObjectError):
        frame.object_id = 5


def test_committing_twice_or_reusing_an_object_id_fails(db) -> None:
    frame = CameraFrame(chip="a")
    frame.commit()
    with pytest.raises(DuplicateObjectError, match="already committed"):
        frame.commit()
    impostor = CameraFrame(chip="b", object_id=frame.object_id)
    with pytest.raises(DuplicateObjectError, match=f"CameraFrame {frame.object_id}"):
        impostor.commit()
    assert [f.chip for f in select(CameraFrame)] == ["a"]


def test_failed_commit_rolls_back_everything(db) -> None:
    taken = Instrument(name="first")
    taken.commit()
    new_site = Site(name="never stored")
    clash = Instrument(name="clash", object_id=taken.object_id, site=new_site)
    frames = [CameraFrame(chip=f"c{i}") for i in range(3)]
    with pytest.raises(DuplicateObjectError, match="nothing of this commit was written"):
        commit([*frames, clash])
    assert select(CameraFrame).count() == 0
    assert select(Site).count() == 0
    assert not any(f.is_committed for f in frames) and not new_site.is_committed
    commit(frames)
    assert select(CameraFrame).count() == 3


def test_object_that_others_link_to_cannot_be_deleted(db) -> None:
    wfi = Instrument(name="WFI")
    frame = CameraFrame(instrument=wfi)
    frame.commit()
    lonely = CameraFrame(overlaps=[frame])
    lonely.commit()
    with pytest.raises(ObjectInUseError, match=r"CameraFrame\.instrument \(1\)"):
        wfi.delete()
    with pytest.raises(ObjectInUseError, match=r"CameraFrame\.overlaps"):
        frame.delete()
    lonely.delete()
    frame.delete()
    wfi.delete()
    assert select(CameraFrame).count() == 0 and select(Instrument).count() == 0


def test_a_deleted_version_number_is_never_given_again(db, reconnect) -> None:
    """As the Butler never reuses one: version 2 deleted, the next commit is version 3."""
    night = utc(2024, 1, 3)
    first, second = MasterBias(chip="a", obs_date=night), MasterBias(chip="a", obs_date=night)
    commit([first])
    commit([second])
    assert (first.version, second.version) == (1, 2)
    second.delete()
    third = MasterBias(chip="a", obs_date=night, level=3.0)
    third.commit()
    assert third.version == 3
    first.delete()
    third.delete()  # none of the identity left: the numbers stay taken
    other = reconnect()  # another session, as another process
    fourth = MasterBias(chip="a", obs_date=night)
    other.commit([fourth])
    assert fourth.version == 4
    elsewhere = MasterBias(chip="b", obs_date=night)  # another identity counts on its own
    elsewhere.commit()
    assert elsewhere.version == 1


def test_one_object_id_is_one_python_object_in_a_session(db) -> None:
    CameraFrame(chip="x", instrument=Instrument(name="WFI")).commit()
    a = select(CameraFrame.chip == "x").first()
    b = select(CameraFrame.instrument.name == "WFI").first()
    assert a is b


def test_links_load_lazily_on_first_touch(db, reconnect) -> None:
    CameraFrame(chip="x", instrument=Instrument(name="WFI")).commit()
    other = reconnect()
    frame = select(CameraFrame.chip == "x", database=other).first()
    assert "instrument" not in frame.__dict__
    with recorded_statements(other) as statements:
        assert frame.instrument.name == "WFI"
        assert len(statements) >= 1
        before = len(statements)
        assert frame.instrument.name == "WFI"
        assert len(statements) == before


def test_prefetch_walks_a_link_of_many_objects_without_n_queries(db, reconnect) -> None:
    frames = [CameraFrame(chip=f"c{i}", instrument=Instrument(name=f"i{i}"),
                       overlaps=[Site(name=f"s{i}")]) for i in range(50)]
    commit(frames)
    other = reconnect()
    with recorded_statements(other) as statements:
        lazy = select(CameraFrame, database=other).all()
        assert [f.instrument.name for f in lazy] == [f"i{i}" for i in range(50)]
    lazy_count = len(statements)
    other2 = reconnect()
    for cls in (CameraFrame, Instrument, Site):  # counted below: reading, not schema sync
        other2.tables_for(cls)
    with recorded_statements(other2) as statements2:
        eager = select(CameraFrame, database=other2).prefetch(CameraFrame.instrument,
                                                              "overlaps").all()
        fetched = len(statements2)
        assert [f.instrument.name for f in eager] == [f"i{i}" for i in range(50)]
        assert [f.overlaps[0].name for f in eager] == [f"s{i}" for i in range(50)]
        assert len(statements2) == fetched
    assert lazy_count > 50 and fetched <= 10


def test_objects_of_one_identity_are_numbered_versions(db) -> None:
    night = utc(2024, 1, 1)
    commit([MasterBias(chip="ccd50", obs_date=night, level=300.0),
            MasterBias(chip="ccd51", obs_date=night, level=310.0)])
    MasterBias(chip="ccd50", obs_date=night, level=301.0).commit()
    third = MasterBias(chip="ccd50", obs_date=night, level=302.0)
    third.commit()
    assert third.version == 3
    versions = sorted((b.chip, b.version) for b in select(MasterBias))
    assert versions == [("ccd50", 1), ("ccd50", 2), ("ccd50", 3), ("ccd51", 1)]
    newest = {b.chip: b.level for b in select(MasterBias).newest()}
    assert newest == {"ccd50": 302.0, "ccd51": 310.0}
    assert select(MasterBias.chip == "ccd50").newest().first() is third


def test_versions_count_within_one_commit_too(db) -> None:
    night = utc(2024, 1, 2)
    biases = [MasterBias(chip="c", obs_date=night, level=float(i)) for i in range(3)]
    commit(biases)
    assert [b.version for b in biases] == [1, 2, 3]


def test_query_on_base_class_returns_subclass_objects_as_their_own_type(db) -> None:
    commit([FlatfieldImage(filter="r"), DomeFlatImage(filter="r", lamp="halogen"),
            DomeFlatImage(filter="g")])
    found = select(FlatfieldImage.filter == "r").all()
    assert sorted(type(f).__name__ for f in found) == ["DomeFlatImage", "FlatfieldImage"]
    dome = next(f for f in found if isinstance(f, DomeFlatImage))
    assert dome.lamp == "halogen"
    assert select(DomeFlatImage).count() == 2


def test_commit_without_connection_is_a_clear_error() -> None:
    from awlineage.persistence import set_current_store

    set_current_store(None)
    with pytest.raises(AwlError, match="connect"):
        CameraFrame().commit()


def test_bytes_descriptor_round_trips_binary_content(db, reconnect) -> None:
    content = bytes(range(256)) * 40 + b"\x00tail"
    EncodedPayload(label="blob", payload=content).commit()
    again = reconnect()
    loaded = select(EncodedPayload.label == "blob", database=again).first()
    assert loaded.payload == content
    assert isinstance(loaded.payload, bytes)


def test_bytes_descriptor_refuses_text_and_lists() -> None:
    with pytest.raises(PersistentTypeError, match=r"EncodedPayload\.payload expects bytes"):
        EncodedPayload(payload="not bytes")
    with pytest.raises(PropertyDefinitionError, match="descriptor list of bytes"):
        persistent("Payloads", bytes, [])


def test_prefetch_of_an_object_listed_twice_loads_its_link(db, reconnect) -> None:
    from awlineage.database import prefetch

    site = Site(name="Paranal")
    Instrument(name="VIMOS", site=site).commit()
    again = reconnect()
    instrument = select(Instrument.name == "VIMOS", database=again).first()
    prefetch(again, [instrument, instrument], Instrument._properties["site"])
    assert instrument.site.name == "Paranal"
