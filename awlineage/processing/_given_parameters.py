"""Parameters objects given to a processor (``TargetProcessor(parameters=...)``), checked as
``awl make --set`` checks its settings: objects, not classes; one per parameters class; each of
a parameters class some process class is made with. A single object is taken as a one-object
sequence."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from awlineage.errors import AwlError
from awlineage.persistence import DBObject, Kind


class ParametersError(AwlError, ValueError):
    """Parameters objects given to a processor that it cannot use as given; the message names
    the object and what to give instead."""


def as_parameters(given: DBObject | Iterable[Any] | None) -> tuple[DBObject, ...]:
    """The parameters objects `given` (one object, or several), checked.

    Parameters
    ----------
    given : DBObject or iterable of DBObject or None
        What ``parameters=`` was given.

    Returns
    -------
    tuple of DBObject
        One per parameters class, in the order given.

    Raises
    ------
    ParametersError
        For a class instead of an object, anything not a persistent object, or two objects
        of one class.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class DocGivenParams(DBObject):
    ...     factor = persistent("Factor", float, 1.0)
    >>> len(as_parameters(DocGivenParams(factor=2.0)))
    1
    >>> try:
    ...     as_parameters((DocGivenParams,))
    ... except ParametersError as exc:
    ...     print(exc)
    parameters: DocGivenParams is a class; give an object of it, e.g. DocGivenParams(factor=...)
    """
    if given is None:
        return ()
    if isinstance(given, DBObject):
        return (given,)
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):
        raise ParametersError(f"parameters must be parameters objects (one, or a tuple of "
                              f"them), got {_brief(given)}")
    found: dict[type, DBObject] = {}
    for item in given:
        if isinstance(item, type) and issubclass(item, DBObject):
            example = next((n for n, p in item._properties.items() if not p.builtin), None)
            raise ParametersError(
                f"parameters: {item.__name__} is a class; give an object of it, e.g. "
                f"{item.__name__}({'' if example is None else f'{example}=...'})")
        if not isinstance(item, DBObject):
            raise ParametersError(f"parameters: {_brief(item)} is not a parameters object "
                                  "(a persistent object such as ScaleParams(factor=3.0))")
        earlier = found.get(type(item))
        if earlier is not None and earlier is not item:
            raise ParametersError(
                f"parameters: two {type(item).__name__} objects given ({_values(earlier)} and "
                f"{_values(item)}); give one per parameters class")
        found[type(item)] = item
    return tuple(found.values())


def check_used(parameters: Iterable[DBObject], cls: type, chain: Iterable[type]) -> None:
    """Raise when a parameters object is of no parameters class at all: neither of a target
    class of `chain` (those making `cls` takes, `cls` last) nor of any other process class
    defined in this process, so it would be ignored by every make. (One for another chain is
    left alone: a processor, or planner, may be given the parameters of a whole pipeline and
    make its stages one at a time.)

    Raises
    ------
    ParametersError
        Naming the object and the parameters class of each target class of the chain.
    """
    chain = list(chain)
    used = {target.parameters_class(): target for target in chain}  # type: ignore[attr-defined]
    for params in parameters:
        if type(params) in used or _parameters_of_some_process(type(params)):
            continue
        known = ", ".join(f"{p.__name__} ({t.__name__})" for p, t in used.items())
        raise ParametersError(
            f"parameters: {type(params).__name__} is the parameters class of no process "
            f"class, so it would be ignored; those of {cls.__name__} and the target classes "
            f"it is made from are: {known}")


def _parameters_of_some_process(params_class: type) -> bool:
    """Whether a process class defined in this process is made with `params_class`."""
    from awlineage.persistence import DBObjectMeta
    from awlineage.trace import Process

    return any(isinstance(c, type) and issubclass(c, Process)
               and c.parameters_class() is params_class
               for c in list(DBObjectMeta.registry.values()))


def _values(obj: DBObject) -> str:
    """``factor=3.0, label='x'``: an object's own values, for telling two apart."""
    values = [f"{name}={getattr(obj, name)!r}"
              for name, prop in type(obj)._properties.items()
              if not prop.builtin and prop.kind is Kind.DESCRIPTOR]
    return ", ".join(values) or f"object {obj.object_id}"


def _brief(value: Any) -> str:
    """``'Summary' (a str)``, for an error message."""
    text = repr(value)
    return f"{text[:40]}{'...' if len(text) > 40 else ''} (a {type(value).__name__})"
