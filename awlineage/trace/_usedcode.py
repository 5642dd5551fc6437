"""The user's code that functions run: the functions, classes and module-level assignments they
refer to by name (module globals, closures, ``module.attribute`` chains), followed through the
user's own modules, each with a digest of its syntax tree.

Only names resolve: a method reached through an object (``self.raw.gain()``) is the code of
that object's class, which is not followed. Persistent classes are not followed either: a
process target's code is versioned on its own objects, and a stored object's class is data."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from awlineage.persistence import DBObject
from awlineage.trace._syntax import (
    bytecode,
    class_tree,
    digest,
    dump,
    function_tree,
    module_assignments,
    referenced_names,
)
from awlineage.trace._usercode import is_user_module

_MISSING = object()


@dataclass(frozen=True)
class UsedCode:
    """One piece of the user's code: its qualified name, the digest of its syntax tree, and
    the pieces it refers to in turn."""

    name: str
    digest: str
    uses: tuple[UsedCode | Any, ...] = ()
    """Further pieces: `UsedCode` for assignments, functions and classes for the rest (their
    own `UsedCode` is made once, when first followed)."""


def used_code(functions: Iterable[Callable[..., Any]]) -> dict[str, str]:
    """Qualified name -> digest of every piece of the user's code that `functions` use,
    directly or through other pieces (the functions themselves are left out)."""
    found: dict[str, str] = {}
    seen: set[int] = set()
    pending: list[Any] = [use for function in functions for use in code_of(function).uses]
    while pending:
        item = pending.pop()
        if not isinstance(item, UsedCode):
            if id(item) in seen:
                continue
            seen.add(id(item))
            item = code_of(item)
        elif item.name in found:
            continue  # an assignment met before (they may refer to one another)
        found[item.name] = item.digest
        pending.extend(item.uses)
    return found


_known: dict[int, tuple[Any, UsedCode]] = {}
# (module, name) -> (the parsed statements it was made from, its UsedCode)
_assignments: dict[tuple[str, str], tuple[list[Any], UsedCode]] = {}


def code_of(item: Callable[..., Any]) -> UsedCode:
    """The `UsedCode` of a function or class of the user's, made once per process (keyed by
    the object, which is kept alive: an edited module loaded again makes new objects)."""
    known = _known.get(id(item))
    if known is None:
        made = _class_code(item) if isinstance(item, type) else _function_code(item)
        known = _known[id(item)] = (item, made)
    return known[1]


def _function_code(function: Any) -> UsedCode:
    name = f"{function.__module__}.{function.__qualname__}"
    code = function.__code__
    closure = {}
    for variable, cell in zip(code.co_freevars, function.__closure__ or (), strict=False):
        try:
            closure[variable] = cell.cell_contents
        except ValueError:  # a cell not yet filled
            continue
    namespace = function.__globals__
    tree = function_tree(function)
    names: set[tuple[str, ...]]
    if tree is None:
        text, names = bytecode(code), {(n,) for n in code.co_names}
    else:
        text, names = dump(tree), referenced_names(tree)

    def lookup(variable: str) -> Any:
        return closure[variable] if variable in closure else namespace.get(variable, _MISSING)

    return UsedCode(name, digest(text), _resolve(names, lookup, function.__module__))


def _class_code(cls: type) -> UsedCode:
    name = f"{cls.__module__}.{cls.__qualname__}"
    tree = class_tree(cls)
    module = sys.modules.get(cls.__module__)
    namespace = vars(module) if module is not None else {}
    if tree is None:
        methods = [m for m in vars(cls).values() if inspect.isfunction(m)]
        text = "|".join(bytecode(m.__code__) for m in methods)
        names: set[tuple[str, ...]] = {(n,) for m in methods for n in m.__code__.co_names}
    else:
        text, names = dump(tree), referenced_names(tree)
    return UsedCode(name, digest(text),
                    _resolve(names, lambda v: namespace.get(v, _MISSING), cls.__module__))


def _resolve(names: set[tuple[str, ...]], lookup: Callable[[str], Any], home: str
             ) -> tuple[Any, ...]:
    """The user's pieces that dotted `names` denote, looked up with `lookup` and followed
    through modules (``reduction.reduce_science``); `home` is the module of the code."""
    uses: dict[int, Any] = {}
    for chain in sorted(names):
        value, module, attribute = lookup(chain[0]), home, chain[0]
        for part in chain[1:]:
            if not inspect.ismodule(value):
                break
            module, attribute = value.__name__, part
            value = getattr(value, part, _MISSING)
        used = _user_piece(value, module, attribute)
        if used is not None:
            uses[id(used)] = used
    return tuple(uses.values())


def _user_piece(value: Any, module: str, attribute: str) -> Any:
    """The function, class or assignment `value` stands for, if it is the user's code."""
    if value is _MISSING or inspect.ismodule(value):
        return None
    if isinstance(value, functools.partial):
        value = value.func
    if isinstance(value, type):
        if issubclass(value, DBObject) or not is_user_module(value.__module__):
            return None
        return value
    if inspect.isfunction(value):
        value = inspect.unwrap(value)
        return value if is_user_module(value.__module__) else None
    if callable(value) and not is_user_module(getattr(value, "__module__", None) or ""):
        return None  # a library's callable object (numpy ufuncs and the like)
    return _assignment(module, attribute)


def _assignment(module_name: str, attribute: str) -> UsedCode | None:
    """A module-level value as the statements that assign it: their code, not the value, so
    that ``STARTED = time.time()`` does not change the version of every run."""
    if not is_user_module(module_name):
        return None
    module = sys.modules.get(module_name)
    statements = module_assignments(module).get(attribute)
    if not statements:
        return None  # imported from elsewhere, or made at run time: not the user's code here
    cached = _assignments.get((module_name, attribute))
    if cached is not None and cached[0] is statements:
        return cached[1]
    namespace = vars(module)
    used = UsedCode(f"{module_name}.{attribute}", digest(dump(statements)),
                    _resolve(referenced_names(statements), lambda v: namespace.get(v, _MISSING),
                             module_name))
    _assignments[(module_name, attribute)] = (statements, used)
    return used
