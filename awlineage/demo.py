"""`awl demo`: a walk through the persistent object core on the embedded defaults (an SQLite
file and a data directory in the working directory). The imaging pipeline of targets/ takes
this command over when it lands."""

from __future__ import annotations

import datetime
import random

from awlineage.database import connect
from awlineage.persistence import DBObject, get_persistent_properties, persistent
from awlineage.query import select


class DemoInstrument(DBObject):
    """A camera on a telescope."""

    name = persistent("Instrument name", str, "")


class DemoRawFrame(DBObject):
    """One raw exposure of one CCD."""

    chip = persistent("CCD name", str, "", index=True)
    filter = persistent("Filter name", str, "")
    exptime = persistent("Exposure time [s]", float, 0.0)
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    keywords = persistent("Header keywords kept", str, [])
    instrument = persistent("Instrument used", DemoInstrument, None)
    previous = persistent("The frame taken before this one")


class DemoMasterBias(DBObject):
    """A master bias: versions of one chip and night are numbered 1, 2, 3 ..."""

    identity = ("chip", "night")
    chip = persistent("CCD name", str, "")
    night = persistent("Night of the raw biases, UTC", datetime.datetime, None)
    level = persistent("Bias level [ADU]", float, 0.0)
    raw_frames = persistent("Raw frames combined", DemoRawFrame, [])


def run_demo(database_url: str | None = None) -> int:
    """Make, commit and query a small night of observations; print what happens."""
    db = connect(database_url)
    print(f"database: {db!r}")
    rng = random.Random()
    night = datetime.datetime(2024, 3, 1, tzinfo=datetime.UTC)
    wfi = select(DemoInstrument.name == "WFI").first() or DemoInstrument(name="WFI")
    frames: list[DemoRawFrame] = []
    for i in range(8):
        frames.append(DemoRawFrame(
            chip=f"ccd5{i % 2}", filter="r" if i < 4 else "g",
            exptime=float(rng.choice([0.0, 30.0, 60.0, 120.0])),
            obs_date=night + datetime.timedelta(minutes=10 * i),
            keywords=["OBJECT", "FILTER", "EXPTIME"], instrument=wfi,
            previous=frames[-1] if frames else None))
    bias = DemoMasterBias(chip="ccd50", night=night, level=round(rng.gauss(300, 2), 2),
                          raw_frames=[f for f in frames if f.chip == "ccd50"][:2])
    bias.commit()
    print(f"committed {len(frames)} raw frames (and the instrument) with a master bias, "
          "in one transaction")
    print(f"master bias of ccd50 for {night.date()} is now version {bias.version}")

    print("\nproperties of DemoRawFrame:")
    for prop in get_persistent_properties(DemoRawFrame):
        print(f"  {prop.name:12s} {prop.kind:16s} {prop.type.__name__:10s} {prop.doc}")

    query = (DemoRawFrame.exptime > 10) & (DemoRawFrame.instrument.name == "WFI")
    print(f"\nselect({query!r}): {select(query).count()} frames")
    text = "DemoRawFrame.filter == 'r' and DemoRawFrame.previous.chip == 'ccd50'"
    print(f"select({text!r}): {select(text).count()} frames")
    newest = select(DemoMasterBias.chip == "ccd50").newest().first()
    print(f"newest master bias of ccd50: version {newest.version}, level {newest.level}, "
          f"made from {len(newest.raw_frames)} raw frames")
    try:
        newest.level = 0.0
    except AttributeError as exc:
        print(f"committed objects are immutable: {exc}")
    print("\nlook further:\n  awl select \"DemoRawFrame.exptime > 10 and "
          "DemoRawFrame.instrument.name == 'WFI'\"\n"
          "  awl select --count \"DemoMasterBias.chip == 'ccd50'\"")
    return 0
