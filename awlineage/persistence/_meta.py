"""DBObjectMeta: turns every persistent class into a table description at definition time,
and keeps the registry of persistent classes by qualified name (``namespace.ClassName``)."""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from awlineage.errors import AmbiguousClassError, PropertyDefinitionError, UnknownClassError
from awlineage.persistence._names import check_attribute_names, check_name_lengths
from awlineage.persistence._properties import Kind, Property

ClassHook = Callable[[type], None]


class DBObjectMeta(type):
    """Metaclass of `DBObject`.

    At class creation it collects the class's persistent properties (its own and inherited),
    checks its identity declaration, registers it by qualified name, and runs the hooks other
    layers registered (the tracer wraps ``make()`` there).

    A class is known to the database by its qualified name, ``namespace.ClassName``: the
    namespace is the class's own ``__namespace__`` when it declares one (as Luigi's
    ``task_namespace``), else the top-level package of its module, or the file name of the
    script that defines it (``proc`` for ``python proc.py``, the same as ``import proc``).

    Parameters
    ----------
    name : str
        The class name.
    bases : tuple of type
        The base classes: `DBObject` or its subclasses.
    namespace : dict
        The class body; its `persistent` declarations become the class's properties.
    **kwargs : Any
        Keyword arguments of the class statement, passed on to `type`.

    Raises
    ------
    PropertyDefinitionError
        For a subclass that redefines a property incompatibly, an attribute name the
        framework uses, a table or column name too long for PostgreSQL, a reserved table
        name, a bad identity declaration, or a class name another module of the namespace
        already uses.

    Examples
    --------
    >>> from awlineage import DBObject, DBObjectMeta, persistent
    >>> class Telescope(DBObject):
    ...     aperture = persistent("Aperture in metres", float, 0.0)
    >>> type(Telescope) is DBObjectMeta
    True
    >>> DBObjectMeta.registry["awlineage.Telescope"] is Telescope
    True
    """

    registry: dict[str, type] = {}
    class_hooks: list[ClassHook] = []

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                **kwargs: Any) -> DBObjectMeta:
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        qualified = f"{namespace.get('__namespace__') or default_namespace(cls)}.{name}"
        cls._qualified_name = qualified  # type: ignore[attr-defined]
        registered = not namespace.get("_stand_in", False)
        if registered:
            _refuse_name_taken_by_another_module(cls, mcls.registry.get(qualified))
        inherited: dict[str, Property] = {}
        for base in reversed(cls.__mro__[1:]):
            inherited.update(base.__dict__.get("_own_properties", {}))
        own = {k: v for k, v in namespace.items() if isinstance(v, Property)}
        if registered:
            check_attribute_names(cls, own)
        for key, prop in own.items():
            old = inherited.get(key)
            if old is not None and not _compatible_override(old, prop):
                raise PropertyDefinitionError(
                    f"{name}.{key} redefines {old.qualified_name} ({old.kind.value}) "
                    f"as a {prop.kind.value} of {getattr(prop.type, '__name__', prop.type)}; a "
                    "subclass may change doc and default, or narrow a link to a subclass"
                )
        cls._own_properties = own  # type: ignore[attr-defined]
        cls._properties = {**inherited, **own}  # type: ignore[attr-defined]
        cls._abstract = bool(namespace.get("__abstract__", False))  # type: ignore[attr-defined]
        table = namespace.get("__tablename__") or default_table_name(qualified)
        if table.startswith("awl_") and not cls.__module__.startswith("awlineage.") \
                and "__tablename__" in namespace:
            raise PropertyDefinitionError(
                f"class {name}: table names starting with 'awl_' are reserved for awlineage"
            )
        cls._table_name = table  # type: ignore[attr-defined]
        if registered:  # a stand-in reads what a database holds already
            check_name_lengths(cls, table)
        _check_identity(cls)
        _plan_state(cls)
        if registered:  # a stand-in is one database's reading of a class: never global
            mcls.registry[qualified] = cls
            for hook in mcls.class_hooks:
                hook(cls)
        return cls


    @classmethod
    def add_class_hook(mcls, hook: ClassHook) -> None:
        """Run `hook` on every persistent class: those defined already, and each one defined
        from now on (at the end of its creation)."""
        mcls.class_hooks.append(hook)
        for cls in list(mcls.registry.values()):
            hook(cls)


def default_namespace(cls: type) -> str:
    """The namespace of a class that declares none: the top-level package of its module, or
    for a script the script's file name without ``.py``."""
    module = cls.__module__
    if module != "__main__":
        return namespace_of_module(module)
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    return namespace_of_module(f"__main__ ({script})" if script else "__main__")


def namespace_of_module(module: str) -> str:
    """The default namespace of the classes of `module`, as the class registry records modules.

    Parameters
    ----------
    module : str
        A dotted module name, or ``__main__ (path of the script)``.

    Returns
    -------
    str
        The top-level package, or the script's name without suffix (``__main__`` when unknown).

    Examples
    --------
    >>> namespace_of_module("targets.science")
    'targets'
    """
    if module.startswith("__main__"):
        script = recorded_script(module)
        return Path(script).stem if script else "__main__"
    return module.split(".")[0]


def recorded_script(module: str) -> str | None:
    """The script's path in a registry module ``__main__ (path)``; None for a module or an
    interactive session."""
    if not module.startswith("__main__"):
        return None
    return module[len("__main__"):].strip(" ()") or None


def default_table_name(qualified_name: str) -> str:
    """The table of a class that declares no ``__tablename__``: its qualified name, lower
    case, with every character that is not a letter, digit or underscore as ``_`` (and
    ``ns_`` before a name that would start as awlineage's own tables do)."""
    table = re.sub(r"\W", "_", qualified_name.lower())
    return f"ns_{table}" if table.startswith("awl_") else table


def qualified_name(cls: type) -> str:
    """The name the database knows a persistent class by: ``namespace.ClassName``.

    Parameters
    ----------
    cls : type
        A persistent class.

    Returns
    -------
    str
        Its namespace (the module, or the one the class declares) and its name.
    """
    return cls._qualified_name  # type: ignore[attr-defined]


def short_name(qualified: str) -> str:
    """The class name of a qualified class name.

    Parameters
    ----------
    qualified : str
        A qualified name, as `qualified_name` gives it.

    Returns
    -------
    str
        The part after the namespace.

    Examples
    --------
    >>> short_name("targets.RawFrame")
    'RawFrame'
    """
    return qualified.rsplit(".", 1)[-1]


def _refuse_name_taken_by_another_module(cls: type, earlier: type | None) -> None:
    """Persistent classes are known by qualified name (their table, their class registry
    entry), so two modules of one namespace may not both define a class of one name;
    redefining it in its own module (a script run again, a schema evolving within a test) is
    allowed."""
    if earlier is None or earlier.__module__ == cls.__module__:
        return
    raise PropertyDefinitionError(
        f"persistent class {cls.__name__} in module {cls.__module__}: a persistent class "
        f"{qualified_name(cls)} is already defined in {earlier.__module__}. Give one of them "
        "another name, or another namespace with a class attribute __namespace__ = '...'"
    )


def _compatible_override(old: Property, new: Property) -> bool:
    if (old.kind, old.type) == (new.kind, new.type):
        return True
    narrowing = (old.kind is new.kind and (old.kind.is_link or old.kind is Kind.LINK_LIST)
                 and isinstance(new.type, type) and issubclass(new.type, old.type))
    return narrowing


def _plan_state(cls: type) -> None:
    """Precompute what constructing, committing and loading objects of `cls` needs."""
    props = [p for p in cls._properties.values() if not p.builtin]  # type: ignore[attr-defined]
    fresh: dict[str, Any] = {"_committed": False, "_store": None, "version": None}
    fresh.update((p.name, p.default) for p in props if not p.kind.is_list)
    cls._fresh_state = fresh  # type: ignore[attr-defined]
    cls._list_defaults = tuple(  # type: ignore[attr-defined]
        (p.name, p.default) for p in props if p.kind.is_list)
    cls._link_names = tuple(p.name for p in props if p.kind.is_link)  # type: ignore[attr-defined]
    cls._link_list_names = tuple(  # type: ignore[attr-defined]
        p.name for p in props if p.kind is Kind.LINK_LIST)


def link_key(name: str) -> str:
    """The key under which an object's state holds the id of a link not loaded yet.

    Parameters
    ----------
    name : str
        The link attribute's name.

    Returns
    -------
    str
        The key in the object's ``__dict__``.
    """
    return "@" + name


def set_identity(cls: type, names: tuple[str, ...]) -> None:
    """Give `cls` the identity attributes `names` (checked as a declared identity is).

    Parameters
    ----------
    cls : type
        A persistent class.
    names : tuple of str
        The names of its identity attributes.

    Raises
    ------
    PropertyDefinitionError
        When the names are not fit to be an identity.
    """
    cls.identity = names  # type: ignore[attr-defined]
    _check_identity(cls)


def _check_identity(cls: type) -> None:
    identity = getattr(cls, "identity", ())
    if isinstance(identity, str):
        identity = (identity,)
    identity = tuple(identity)
    for attr in identity:
        prop = cls._properties.get(attr)  # type: ignore[attr-defined]
        if prop is None or prop.kind not in (Kind.DESCRIPTOR, Kind.LINK, Kind.SELF_LINK):
            raise PropertyDefinitionError(
                f"{cls.__name__}.identity names {attr!r}, which is not a persistent "
                "descriptor or link of the class"
            )
    cls.identity = identity  # type: ignore[attr-defined]


def classes_named(name: str) -> list[type]:
    """The persistent classes defined in this process whose short or qualified name is `name`.

    Parameters
    ----------
    name : str
        A qualified name (with a dot) or a short class name.

    Returns
    -------
    list of type
        The classes of that name; empty when there is none.
    """
    if "." in name:
        found = DBObjectMeta.registry.get(name)
        return [found] if found is not None else []
    return [c for c in DBObjectMeta.registry.values() if c.__name__ == name]


def class_by_name(name: str) -> type:
    """The persistent class defined in this process as `name`.

    Parameters
    ----------
    name : str
        A qualified name, or a short name that only one class has.

    Returns
    -------
    type
        The class.

    Raises
    ------
    UnknownClassError
        When no class, or more than one, has that name (the error lists them).

    Examples
    --------
    >>> from awlineage import DBObject
    >>> class Pd1Chip(DBObject):
    ...     pass
    >>> class_by_name("Pd1Chip") is Pd1Chip
    True
    """
    found = classes_named(name)
    if len(found) == 1:
        return found[0]
    if not found:
        guess = guess_of(name)
        unknown = UnknownClassError(f"persistent class {name!r}{guess} is not defined in this "
                                    "Python process")
        unknown.guess = guess
        raise unknown
    raise AmbiguousClassError(ambiguity_message(name, [qualified_name(c) for c in found]))


NEAR_RATIO = 0.75
"""How alike (difflib's ratio) a known class name must be to an unknown one to be offered."""


def guess_of(name: str, stored: Iterable[str] = ()) -> str:
    """What an unknown class name most likely meant, as `` (did you mean A or B?)``, else
    ``""``: the classes defined in this process or named in `stored` (qualified names, as
    a database's registry holds) whose short names are most like `name`'s, case aside,
    then those that begin with it.

    Parameters
    ----------
    name : str
        The unknown name, short or qualified.
    stored : iterable of str
        Qualified names of further known classes.

    Returns
    -------
    str
        The guess, with a leading space, or the empty string.
    """
    known = {short_name(q) for q in (*stored, *DBObjectMeta.registry)}
    typed = short_name(name).lower()
    scored = sorted((difflib.SequenceMatcher(None, typed, k.lower()).ratio(), k) for k in known)
    best = max((score for score, _ in scored), default=0.0)
    near = [k for score, k in reversed(scored) if score >= max(NEAR_RATIO, best - 0.05)]
    begun = sorted(k for k in known if k.lower().startswith(typed) and k not in near)
    offered = (near + begun)[:3]
    return f" (did you mean {' or '.join(offered)}?)" if offered else ""


def ambiguity_message(name: str, candidates: list[str]) -> str:
    """The error text of a short class name that several persistent classes have.

    Parameters
    ----------
    name : str
        The short name asked for.
    candidates : list of str
        The qualified names it may mean.

    Returns
    -------
    str
        One line naming the candidates and asking for a qualified name.

    Examples
    --------
    >>> print(ambiguity_message("Frame", ["b.Frame", "a.Frame"]))  # doctest: +ELLIPSIS
    persistent class name 'Frame' is ambiguous: it may mean a.Frame or b.Frame; write ...
    """
    return (f"persistent class name {name!r} is ambiguous: it may mean "
            f"{' or '.join(sorted(map(_as_written, candidates)))}; write the qualified name")


def written_name(cls: type) -> str:
    """The qualified name of `cls` as a textual query takes it (`_as_written`)."""
    return _as_written(qualified_name(cls))


def _as_written(qualified: str) -> str:
    """A qualified name as a textual query takes it: a namespace that is no identifier
    (a script ``my-script.py``) in double quotes, ``"my-script".Hy``."""
    namespace, _, name = qualified.rpartition(".")
    if all(part.isidentifier() for part in namespace.split(".")):
        return qualified
    return f'"{namespace}".{name}'


def concrete_subclasses(cls: type) -> list[type]:
    """`cls` (unless abstract) and every non-abstract subclass defined in this process.

    Parameters
    ----------
    cls : type
        A persistent class.

    Returns
    -------
    list of type
        The class and its subclasses, abstract ones left out.
    """
    seen: list[type] = []
    stack = [cls]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.append(current)
        stack.extend(current.__subclasses__())
    return [c for c in seen if not c.__dict__.get("__abstract__", False)]
