"""Classes the object and run page tests store (their own namespace, so that no other test's
classes collide with them), and helpers that store a few objects of them."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from astropy.io import fits

from awlineage import Database, DataObject, DBObject, Process, Session, persistent, traced


class Widget(DBObject):
    """A part of an assembly."""

    __namespace__ = "viewerobject"
    name = persistent("Name of the part", str, "")


class Gizmo(DBObject):
    """Parts put together; versioned by name."""

    __namespace__ = "viewerobject"
    identity = ("name",)
    name = persistent("Name of the assembly", str, "")
    note = persistent("A note", str, "")
    weight = persistent("Weight [kg]", float, None)
    main = persistent("The main part", Widget, None)
    parts = persistent("Parts used", Widget, [])


class ScanFile(DataObject):
    """A file with a label."""

    __namespace__ = "viewerobject"
    label = persistent("Label", str, "")


class TallyParameters(DBObject):
    """Parameters of a stack."""

    __namespace__ = "viewerobject"
    scale = persistent("Scale of the sum", float, 2.0)


@traced
def add(values: list[float]) -> float:
    """The sum, traced: a call inside the make."""
    return sum(values)


class Tally(Process):
    """The scaled sum of parts' name lengths: a process target with a call trace."""

    __namespace__ = "viewerobject"
    parts = persistent("Parts summed", Widget, [])
    process_params = persistent("Parameters", TallyParameters, None)
    total = persistent("Scaled sum", float, None)
    fail = persistent("Raise in make", bool, False)

    def make(self) -> None:
        """Sum the lengths of the parts' names, scaled."""
        if self.fail:
            raise RuntimeError("asked to fail <b>loudly</b>")
        self.total = self.process_params.scale * add([float(len(p.name)) for p in self.parts])


def gizmo(parts: int, name: str = "frame", **values: object) -> Gizmo:
    """A committed assembly of `parts` new parts."""
    made = Gizmo(name=name, parts=[Widget(name=f"p{i}") for i in range(parts)],
                    main=Widget(name="main"), **values)
    made.commit()
    return made


def fits_bytes(image: bool = True) -> bytes:
    """A small FITS file: an empty primary HDU and a 2-D image (or a table)."""
    if image:
        second = fits.ImageHDU(np.arange(12, dtype="f4").reshape(3, 4), name="SCI")
    else:
        second = fits.BinTableHDU.from_columns([fits.Column("a", "E", array=np.ones(3))],
                                               name="CAT")
    second.header["OBSERVER"] = ("<script>alert(1)</script>", "not a tag")
    buffer = io.BytesIO()
    fits.HDUList([fits.PrimaryHDU(), second]).writeto(buffer)
    return buffer.getvalue()


def scan_file(db: Database, data_dir: Path, content: bytes, label: str = "") -> ScanFile:
    """A committed exposure whose file, `content`, is on the data server `data_dir`."""
    with Session(db, str(data_dir)):
        made = ScanFile(label=label)
        made.store(content, filename=f"exposure-{made.object_id}.fits")
        made.commit()
    return made
