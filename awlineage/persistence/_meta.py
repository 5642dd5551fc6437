"""DBObjectMeta: turns every persistent class into a table description at definition time,
and keeps the registry of persistent classes by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from awlineage.errors import PropertyDefinitionError, UnknownClassError
from awlineage.persistence._properties import Kind, Property

ClassHook = Callable[[type], None]


class DBObjectMeta(type):
    """Metaclass of `DBObject`.

    At class creation it collects the class's persistent properties (its own and inherited),
    checks its identity declaration, registers it by name, and runs the hooks other layers
    registered (the tracer wraps ``make()`` there).
    """

    registry: dict[str, type] = {}
    class_hooks: list[ClassHook] = []

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any],
                **kwargs: Any) -> DBObjectMeta:
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        _refuse_name_taken_by_another_module(cls, mcls.registry.get(name))
        inherited: dict[str, Property] = {}
        for base in reversed(cls.__mro__[1:]):
            inherited.update(base.__dict__.get("_own_properties", {}))
        own = {k: v for k, v in namespace.items() if isinstance(v, Property)}
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
        table = namespace.get("__tablename__", name.lower())
        if table.startswith("awl_") and not cls.__module__.startswith("awlineage."):
            raise PropertyDefinitionError(
                f"class {name}: table names starting with 'awl_' are reserved for awlineage"
            )
        cls._table_name = table  # type: ignore[attr-defined]
        _check_identity(cls)
        _plan_state(cls)
        mcls.registry[name] = cls
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


def _refuse_name_taken_by_another_module(cls: type, earlier: type | None) -> None:
    """Persistent classes are known by name (their table, their class registry entry), so two
    modules may not both define one of the same name; redefining it in its own module (a
    script run again, a schema evolving within a test) is allowed."""
    if earlier is None or earlier.__module__ == cls.__module__:
        return
    raise PropertyDefinitionError(
        f"persistent class {cls.__name__} in module {cls.__module__}: a persistent class of "
        f"that name is already defined in {earlier.__module__}. The database knows persistent "
        "classes by name, so give one of them another name"
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
    """Key under which an object's state holds the id of a link not loaded yet."""
    return "@" + name


def set_identity(cls: type, names: tuple[str, ...]) -> None:
    """Give `cls` the identity attributes `names` (checked as a declared identity is)."""
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


def class_by_name(name: str, module: str | None = None) -> type:
    """The persistent class registered as `name`; raises naming the module to import."""
    try:
        return DBObjectMeta.registry[name]
    except KeyError:
        if module and module.startswith("__main__"):
            hint = (f"; it was defined in a script, {module}: move it into a module and "
                    "import that")
        else:
            hint = f"; import {module} first" if module else ""
        raise UnknownClassError(
            f"persistent class {name!r} is not defined in this Python process{hint}"
        ) from None


def concrete_subclasses(cls: type) -> list[type]:
    """`cls` (unless abstract) and every non-abstract subclass defined in this process."""
    seen: list[type] = []
    stack = [cls]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.append(current)
        stack.extend(current.__subclasses__())
    return [c for c in seen if not c.__dict__.get("__abstract__", False)]
