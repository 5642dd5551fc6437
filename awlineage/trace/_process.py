"""Process targets: persistent classes with a make(), a parameters object, and a code version.

Parameters are persistent objects with their defaults in code (seed 003 section 4.2): a user
changes them by making a new parameters object in a script, never by editing the defaults.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from awlineage.persistence import DBObject, Kind, current_store, datetime_to_text, persistent
from awlineage.trace._codeversion import code_version
from awlineage.trace._run import ProcessRun


class ProcessParameters(DBObject):
    """The parameters object of a process target that declares no parameters of its own.

    Subclass it (or any persistent class) to declare parameters with defaults in code; a
    script changes them by making a new parameters object, never by editing the defaults.

    Parameters
    ----------
    **values : Any
        Initial values of persistent attributes, by name; the others take their defaults.

    Raises
    ------
    UnknownAttributeError
        When a keyword names no persistent attribute of the class.
    PersistentTypeError
        When a value is not of its attribute's type.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocParametersPlain(Process):
    ...     def make(self):
    ...         pass
    >>> target = DocParametersPlain()
    >>> target.make()
    >>> type(target.process_params).__name__
    'ProcessParameters'
    >>> class DocParametersClip(ProcessParameters):
    ...     sigma = persistent("Clipping sigma", float, 3.0)
    >>> DocParametersClip().sigma, DocParametersClip(sigma=2.5).sigma
    (3.0, 2.5)
    """


class Process(DBObject):
    """A process target: a persistent class that knows how to make itself.

    Subclasses define ``make()``; every call of it (and of overrides in further subclasses)
    writes a `ProcessRun`. A subclass declares its parameters by narrowing
    ``process_params`` to its own parameters class, and may declare ``code_version``; without
    one, the version is a hash of its methods' syntax trees.

    Parameters
    ----------
    **values : Any
        Initial values of persistent attributes, by name; the others take their defaults.

    Raises
    ------
    UnknownAttributeError
        When a keyword names no persistent attribute of the class.
    PersistentTypeError
        When a value is not of its attribute's type.

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocProcessParameters(DBObject):
    ...     offset = persistent("Level subtracted [ADU]", float, 100.0)
    >>> class DocProcessReduced(Process):
    ...     code_version = "1.0"
    ...     counts = persistent("Counts [ADU]", float, [])
    ...     process_params = persistent("Parameters", DocProcessParameters, None)
    ...     values = persistent("Reduced counts [ADU]", float, [])
    ...     def make(self):
    ...         self.values = [c - self.process_params.offset for c in self.counts]
    >>> target = DocProcessReduced(counts=[130.0, 120.0])
    >>> target.make()
    >>> target.commit()
    >>> target.values, target.process_params.offset
    ([30.0, 20.0], 100.0)
    >>> target.process_run.succeeded, target.process_run.code_version
    (True, '1.0')
    >>> DocProcessReduced(count=[1.0])
    Traceback (most recent call last):
    ...
    awlineage.errors.UnknownAttributeError: DocProcessReduced has no persistent attribute 'count'
    """

    __abstract__ = True
    code_version: ClassVar[str | None] = None
    """A version string the class controls; when None, a hash of the methods' code."""

    process_params = persistent("Processing parameters", DBObject, None)
    process_run = persistent("The process run that made this object", ProcessRun, None)
    _stored_links_may_reach: ClassVar[dict[str, tuple[type, ...]]] = {
        "process_params": (ProcessParameters,)}
    """Classes that stored links of an attribute may reach besides the type it declares: a
    target made before its class declared parameters links the empty `ProcessParameters`,
    so declaring ``process_params`` later keeps those targets readable (and stale)."""

    def make(self) -> Any:
        """Make this target from its dependencies; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} does not define make()")

    @classmethod
    def class_code_version(cls) -> str | None:
        """The code version recorded with every run and in the class registry."""
        return code_version(cls)

    @classmethod
    def parameters_class(cls) -> type[DBObject]:
        """The class of this target's parameters (`ProcessParameters` if none is declared)."""
        declared = cls._properties["process_params"].type
        return ProcessParameters if declared is DBObject else declared


_defaults: dict[tuple[int, type], DBObject] = {}


def default_parameters(process_class: type[Process]) -> DBObject:
    """A parameters object with the defaults in code.

    It is one already stored with exactly those values when there is one (found once per
    process and database), else a new one, the same until it is stored.

    While the new one is not stored, each call looks in the database again: another
    process may store its twin first (a processor then uses that one, see
    `awlineage.database.find_or_commit`), and this process should use it too.

    Parameters
    ----------
    process_class : type of Process
        The process target class whose parameters class gives the defaults.

    Returns
    -------
    DBObject
        An object of ``process_class.parameters_class()``.

    Raises
    ------
    NotConnectedError
        When no database is connected.
    """
    params_class = process_class.parameters_class()
    store = current_store()
    key = (id(store), params_class)
    cached = _defaults.get(key)
    if cached is not None and cached.__dict__["_store"] is store:
        return cached
    found = _stored_defaults(params_class)
    if found is not None:
        _defaults[key] = found
        return found
    if cached is None or cached.__dict__["_store"] is not None:
        cached = _defaults[key] = params_class()
    return cached


def _stored_defaults(params_class: type[DBObject]) -> DBObject | None:
    from awlineage.query import select

    props = [p for p in params_class._properties.values()
             if not p.builtin]
    if any(p.kind is not Kind.DESCRIPTOR for p in props):
        return None  # lists and links are not matched by value; make a fresh object
    query = select(params_class)
    for prop in props:
        query = query.filter(getattr(params_class, prop.name) == prop.default)
    for candidate in query.limit(10):
        if type(candidate) is params_class:
            return candidate
    return None


def parameter_values(params: DBObject | None) -> str:
    """The values of a parameters object as a JSON object (links as object ids).

    Parameters
    ----------
    params : DBObject or None
        A parameters object; None gives ``{}``.

    Returns
    -------
    str
        JSON text, keys sorted.

    Examples
    --------
    >>> parameter_values(None)
    '{}'
    """
    if params is None:
        return "{}"
    values: dict[str, Any] = {}
    state = params.__dict__
    for name, prop in type(params)._properties.items():
        if prop.builtin:
            continue
        if prop.kind.is_link or prop.kind is Kind.LINK_LIST:
            target = getattr(params, name)
            values[name] = [t.object_id for t in target] if isinstance(target, list) else \
                (None if target is None else target.object_id)
        else:
            values[name] = _jsonable(state.get(name))
    return json.dumps(values, sort_keys=True)


def _jsonable(value: Any) -> Any:
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tzinfo"):
        return datetime_to_text(value)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value
