"""Stand-in classes: read-only persistent classes rebuilt from what a database's class registry
recorded, for stored objects whose defining module cannot be imported here (a script's
``__main__``, a module not on the path, renamed or deleted). Every object stays readable."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from awlineage.errors import StandInClassError
from awlineage.persistence._meta import DBObjectMeta, recorded_script, short_name
from awlineage.persistence._properties import Property


@dataclass(frozen=True)
class RecordedClass:
    """What a class registry says of one persistent class (its latest definition)."""

    name: str
    """Qualified name, ``namespace.ClassName``."""
    module: str
    """The defining module, or ``__main__ (path of the script)``."""
    table_name: str
    """The table its objects' rows are in."""
    bases: tuple[str, ...]
    """Qualified names of its persistent bases, nearest first."""
    definition: dict[str, dict[str, Any]]
    """Property name -> ``kind``, ``type`` and, when recorded, ``doc``, ``default``, ``index``."""
    identity: tuple[str, ...] = ()
    """The attributes that identify versions of one logical product (none: no versions)."""
    code_version: str | None = None
    """The code version of a process class, as last registered."""
    doc: str = field(default="", compare=False)
    """The class's docstring."""


class StandInMeta(DBObjectMeta):
    """Metaclass of stand-in classes: a stand-in says what it is wherever it is printed."""

    def __repr__(cls) -> str:
        return f"<stand-in class {describe_class(cls)}>"

    def __str__(cls) -> str:
        return describe_class(cls)


def is_stand_in(cls: type) -> bool:
    """Whether a class was read back from a class registry rather than defined in code.

    Parameters
    ----------
    cls : type
        A class.

    Returns
    -------
    bool
        True for a stand-in class (read-only; its objects can be read but not made).
    """
    return bool(cls.__dict__.get("_stand_in", False))


def origin_text(module: str) -> str:
    """Where a class registry says a class was defined, for people.

    Parameters
    ----------
    module : str
        The module the registry recorded.

    Returns
    -------
    str
        ``module mypipe``, ``script proc.py`` for a script run as ``__main__``, or ``an
        interactive session``.
    """
    if not module.startswith("__main__"):
        return f"module {module}"
    script = recorded_script(module)
    return f"script {Path(script).name}" if script else "an interactive session"


def describe_class(cls: type) -> str:
    """A class's name for people.

    Parameters
    ----------
    cls : type
        A persistent class, or a stand-in class read from a class registry.

    Returns
    -------
    str
        The class name; a stand-in's adds where it was read from and defined
        (``Summary (read from the registry; defined in script proc.py)``).
    """
    origin = cls.__dict__.get("_stand_in_origin")
    if origin is None:
        return cls.__name__
    return f"{cls.__name__} (read from the registry; defined in {origin})"


def import_hint(cls: type) -> str:
    """How a command gets the real class of stand-in `cls`, for a message.

    Parameters
    ----------
    cls : type
        A stand-in class read from a class registry.

    Returns
    -------
    str
        For a module, to run where it is importable or to name it with ``--import``; for
        a script, to import it as a module by its file's name from its folder (or to run
        the script).
    """
    module = cls.__dict__.get("_stand_in_module", "")
    if not module.startswith("__main__"):
        return (f"run the command where module {module} is importable (the working "
                f"directory, or PYTHONPATH), or name it with --import {module}")
    script = recorded_script(module)
    if script is None:
        return "define the class in a module and name it with --import MODULE"
    folder = Path(script).parent
    where = "" if str(folder) in ("", ".") else f" from {folder}"
    return (f"import the script as a module: --import {Path(script).stem}{where} (what it "
            "does outside an `if __name__ == '__main__':` block runs then too), or run the "
            "script")


def refuse_stand_in(cls: type, action: str) -> NoReturn:
    """Raise `StandInClassError`: `action` (``make Summary 123``) needs the real class.

    Parameters
    ----------
    cls : type
        The stand-in class.
    action : str
        What was attempted, for the message.

    Raises
    ------
    StandInClassError
        Always.
    """
    raise StandInClassError(
        f"cannot {action}: {describe_class(cls)} is read-only here, because "
        f"{cls.__dict__['_stand_in_origin']} cannot be imported in this process; import the "
        "real class to write"
    )


def _refuse_init(self: Any, **values: Any) -> None:
    refuse_stand_in(type(self), f"create a {type(self).__name__}")


def _refuse_commit(self: Any) -> None:
    refuse_stand_in(type(self), f"commit {type(self).__name__} {self.object_id}")


def _refuse_make(self: Any, *args: Any, **kwargs: Any) -> None:
    refuse_stand_in(type(self), f"make {type(self).__name__} {self.object_id}")


def _refuse_delete(self: Any) -> None:
    refuse_stand_in(type(self), f"delete {type(self).__name__} {self.object_id}")


def build_stand_in(record: RecordedClass, bases: tuple[type, ...],
                   properties: dict[str, Property]) -> type:
    """A read-only class for `record`, with `bases` and `properties`.

    Parameters
    ----------
    record : RecordedClass
        The class as the class registry recorded it.
    bases : tuple of type
        Its nearest persistent bases, real or themselves stand-ins.
    properties : dict of str to Property
        The persistent attributes the bases do not declare.

    Returns
    -------
    type
        The stand-in class; creating, committing, deleting or making its objects raises
        `StandInClassError`.
    """
    recorded_version = record.code_version

    def class_code_version(cls: type) -> str | None:
        return recorded_version

    namespace: dict[str, Any] = {
        "__module__": "awlineage.standin",
        "__qualname__": short_name(record.name),
        "__doc__": record.doc or f"{short_name(record.name)}, as recorded in the class registry",
        "__namespace__": record.name.rsplit(".", 1)[0],
        "__tablename__": record.table_name,
        "_stand_in": True,
        "_stand_in_origin": origin_text(record.module),
        "_stand_in_module": record.module,
        "identity": tuple(record.identity),
        "__init__": _refuse_init,
        "commit": _refuse_commit,
        "delete": _refuse_delete,
        "make": _refuse_make,
        "class_code_version": classmethod(class_code_version),
        **properties,
    }
    return StandInMeta(short_name(record.name), bases, namespace)
