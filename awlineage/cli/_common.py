"""What several commands share: finding the modules and classes a command names (the working
directory, ``--import``, the ``awlineage.targets`` entry points), opening the database, and
printing objects (object ids and their prefixes: `awlineage.cli._ids`)."""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.metadata
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from awlineage.cli._plugins import entry_point_extra_error
from awlineage.errors import (
    AmbiguousClassError,
    AwlError,
    ConfigurationError,
    MissingExtraError,
    UnknownClassError,
)

if TYPE_CHECKING:  # imported where used: ``awl --help`` needs no database layer
    from awlineage.database import Database
    from awlineage.persistence import DBObject

TARGETS_GROUP = "awlineage.targets"
"""Entry-point group under which a package names the modules of its process targets, e.g.
``[options.entry_points] awlineage.targets = pipeline = targets.pipeline [pipeline]`` in
setup.cfg; the ``[extra]`` says what to install when a package the module needs is missing
(the module is then skipped, and named only if a class asked for stays unknown)."""

class ImportFailedError(AwlError):
    """A module named on the command line (or by an entry point) cannot be imported."""


def working_directory_first() -> None:
    """Put the working directory first on the module path, as ``python -m`` does, so that
    ``--import mypipe`` finds ``./mypipe.py`` (the ``awl`` console script starts elsewhere)."""
    here = os.getcwd()
    if sys.path[:1] != [here] and sys.path[:1] != [""]:
        sys.path.insert(0, here)


def import_modules(names: Sequence[str]) -> None:
    """Import modules named on the command line (``--import``).

    Raises
    ------
    ImportFailedError
        Naming the module, the reason and the directories searched.
    """
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ImportFailedError(_import_failure(name, exc)) from None
        except Exception as exc:  # the module was found, and failed while it ran
            raise ImportFailedError(_failed_while_running(name, exc)) from None


def _failed_while_running(name: str, exc: Exception) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"importing module {name!r} failed: {type(exc).__name__}: {message}"


def _import_failure(name: str, exc: ImportError) -> str:
    searched = os.pathsep.join(p or os.getcwd() for p in sys.path if not p.endswith(".zip"))
    missing = getattr(exc, "name", None)
    if isinstance(exc, ModuleNotFoundError) and missing and name.startswith(missing):
        return f"cannot import module {name!r}: no module named {missing!r} on the module " \
               f"path {searched}"
    return f"cannot import module {name!r}: {exc} (module path {searched})"


def load_target_entry_points() -> tuple[list[str], list[str]]:
    """Import every module declared under the ``awlineage.targets`` entry-point group; return
    the names of those imported, and a note on each of those skipped because a package its
    declared extra installs is missing (what to install). A broken entry point is an error
    naming its distribution."""
    loaded: list[str] = []
    skipped: list[str] = []
    for point in importlib.metadata.entry_points(group=TARGETS_GROUP):
        try:
            point.load()
        except MissingExtraError as exc:
            skipped.append(f"the process targets of {point.module} were not loaded ({exc})")
            continue
        except ModuleNotFoundError as exc:
            found = entry_point_extra_error("the module", point, exc)
            if found is None:
                raise ImportFailedError(_entry_point_failure(point, exc)) from None
            skipped.append(f"the process targets of {point.module} were not loaded ({found})")
            continue
        except Exception as exc:
            raise ImportFailedError(_entry_point_failure(point, exc)) from None
        loaded.append(point.value)
    return loaded, skipped


def _entry_point_failure(point: importlib.metadata.EntryPoint, exc: Exception) -> str:
    owner = point.dist.name if point.dist is not None else "an installed package"
    reason = _import_failure(point.module, exc) if isinstance(exc, ImportError) \
        else _failed_while_running(point.module, exc)
    return f"entry point {point.name} = {point.value} of {owner} ({TARGETS_GROUP}): {reason}"


def prepare(db: Database, imports: Sequence[str] = (), names: Sequence[str] = ()) -> None:
    """Make the classes a command names known: ``--import`` modules and the modules the
    database's registry names, then, if one of `names` is still unknown, the modules of the
    ``awlineage.targets`` entry points (imported only then: a pipeline is slow to import, and
    most commands name classes the database already knows). A name still unknown then is an
    `UnknownClassError` that notes the modules skipped for a missing extra, if any."""
    import_modules(imports)
    if any(not _known(db, name) for name in names):
        _, skipped = load_target_entry_points()
        unknown = [name for name in names if not _known(db, name)]
        if unknown and skipped:  # most likely a typo; less likely, in a module skipped
            try:
                find_class(db, unknown[0])
            except UnknownClassError as exc:
                raise UnknownClassError(f"{exc}; {'; '.join(skipped)}") from None


def _known(db: Database, name: str) -> bool:
    try:
        find_class(db, name)
    except AwlError:
        return False
    return True


def names_in_query(text: str) -> list[str]:
    """The words of a textual query that may name a class: those that begin a dotted path
    (``Class.attribute.attribute``), outside quotes, or the whole text when it is a class
    name alone (every object of the class)."""
    from awlineage.query import class_name_alone

    whole = class_name_alone(text)
    if whole:
        return [whole]
    unquoted = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "''", text)
    return list(dict.fromkeys(re.findall(r"(?<![\w.])([A-Za-z_]\w*)\s*\.", unquoted)))


def find_class(db: Database, name: str) -> type:
    """The persistent class a command line names: qualified (``targets.RawFrame``) or a
    short name only one known class has; a class of a script is read from the registry.

    Raises
    ------
    AwlError
        One line naming the class when no class of that name is known, or listing the
        qualified names a short name may mean.
    """
    try:
        return db.class_named(name)
    except AmbiguousClassError:
        raise
    except UnknownClassError as exc:
        raise UnknownClassError(
            f"unknown persistent class {name!r}{exc.guess}: name a class stored in "
            f"{db.url.render_as_string(hide_password=True)}, or --import the module that "
            "defines it") from None


WRITES_WITHOUT_CREATING = ("this command changes a database that exists and does not create "
                           "one (ingest, demo and import bundle do)")
"""How a command that writes but creates no database (``awl retract``) refuses a missing one."""


def open_database(args: argparse.Namespace, *, create: bool = False, files: bool = True,
                  when_missing: str = WRITES_WITHOUT_CREATING) -> Database:
    """The database a command names (``--database``, else the configured one), made the
    current one. Only commands that store objects pass `create`; for every other command a
    database that does not exist is an error naming it, not an empty answer to a mistyped
    URL (a command that writes ends it with `when_missing`, as "opening a database to read"
    would be wrong). A command that stores (and, unless `files` is False, stores files)
    checks first that the data directory is not a file, so that it makes no database it
    cannot use."""
    from awlineage.database import NOT_CREATED_TO_READ, connect
    from awlineage.storage import check_data_directory

    if create and files:
        check_data_directory()
    try:
        return connect(args.database, create=create)
    except ConfigurationError as exc:
        said = str(exc)
        if create or getattr(args, "read_only", False) or \
                not said.endswith(NOT_CREATED_TO_READ):
            raise
        # "opening a database to read" is wrong for awl retract, which writes
        raise ConfigurationError(f"{said.removesuffix(NOT_CREATED_TO_READ)}; "
                                 f"{when_missing}") from None


def format_value(value: object, width: int = 100) -> str:
    """A short, readable form of an attribute value (wide enough for file names and hashes,
    which hold ids and are pasted back)."""
    from awlineage.persistence import DBObject
    from awlineage.spacetime import Interval, SkyPosition, SkyRegion

    if isinstance(value, DBObject):
        return f"<{type(value).__name__} {value.object_id}>"
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    # positions, footprints and intervals as the query language writes them
    text = str(value) if isinstance(value, SkyPosition | SkyRegion | Interval) else repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def print_objects(objects: Sequence[DBObject], out: TextIO = sys.stdout) -> None:
    """Print objects as a table: id, class, then each descriptor."""
    from awlineage.persistence import describe_class

    for obj in objects:
        values = [
            f"{name}={format_value(obj.__dict__.get(name))}"
            for name, prop in type(obj)._properties.items()
            if not prop.builtin and not (prop.kind.is_link or prop.kind.is_list)
        ]
        print(f"{obj.object_id}  {describe_class(type(obj))} v{obj.version}  "
              f"{'  '.join(values)}",
              file=out)


def use_colour(choice: str, stream: TextIO) -> bool:
    """Whether to colour output: ``always``, ``never``, or (``auto``) on a terminal unless
    the NO_COLOR environment variable is set (https://no-color.org)."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()
