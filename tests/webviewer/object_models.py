"""Classes the object and run page tests store (their own namespace, so that no other test's
classes collide with them), and helpers that store a few objects of them."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from astropy.io import fits

from awlineage import Database, DataObject, DBObject, Process, Session, persistent, traced


class Part(DBObject):
    """A part of an assembly."""

    __namespace__ = "viewerobject"
    name = persistent("Name of the part", str, "")


class Assembly(DBObject):
    """Parts put together; versioned by name."""

    __namespace__ = "viewerobject"
    identity = ("name",)
    name = persistent("Name of the assembly", str, "")
    note = persistent("A note", str, "")
    weight = persistent("Weight [kg]", float, None)
    main = persistent("The main part", Part, None)
    parts = persistent("Parts used", Part, [])


class Exposure(DataObject):
    """A file with a label."""

    __namespace__ = "viewerobject"
    label = persistent("Label", str, "")


class StackParameters(DBObject):
    """Parameters of a stack."""

    __namespace__ = "viewerobject"
    scale = persistent("Scale of the sum", float, 2.0)


@traced
def add(values: list[float]) -> float:
    """The sum, traced: a call inside the make."""
    return sum(values)


class Stack(Process):
    """The scaled sum of parts' name lengths: a process target with a call trace."""

    __namespace__ = "viewerobject"
    parts = persistent("Parts summed", Part, [])
    process_params = persistent("Parameters", StackParameters, None)
    total = persistent("Scaled sum", float, None)
    fail = persistent("Raise in make", bool, False)

    def make(self) -> None:
        """Sum the lengths of the parts' names, scaled."""
        if self.fail:
            raise RuntimeError("asked to fail <b>loudly</b>")
        self.total = self.process_params.scale * add([float(len(p.name)) for p in self.parts])


def assembly(parts: int, name: str = "frame", **values: object) -> Assembly:
    """A committed assembly of `parts` new parts."""
    made = Assembly(name=name, parts=[Part(name=f"p{i}") for i in range(parts)],
                    main=Part(name="main"), **values)
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


def exposure(db: Database, data_dir: Path, content: bytes, label: str = "") -> Exposure:
    """A committed exposure whose file, `content`, is on the data server `data_dir`."""
    with Session(db, str(data_dir)):
        made = Exposure(label=label)
        made.store(content, filename=f"exposure-{made.object_id}.fits")
        made.commit()
    return made
