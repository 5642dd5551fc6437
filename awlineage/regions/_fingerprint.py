"""Fingerprints of what an operator's lineage depends on, for reuse signatures: its
parameters, the state it holds beyond them (a transform function, a WCS, an array), and
the code of its methods. A function is described by its code, constants, defaults, closure
and the plain global values it reads, not by its name, so two lambdas or two instances of
one transform class with other parameters never share a signature.

When something cannot be described (an object that is neither plain data, code, an object
with state, nor picklable), there is no fingerprint and the call is not reused: capture
costs time, a wrong reuse would cost correctness.
"""

from __future__ import annotations

import functools
import hashlib
import json
import pickle
import types
from typing import Any

import numpy as np

#: How deep functions referenced by functions, and objects held by objects, are followed.
MAX_DEPTH = 8


class Unknowable(Exception):
    """Raised inside the describer when a value cannot be fingerprinted."""


def fingerprint(value: Any) -> str | None:
    """A hex digest of everything `value` is made of (None when it cannot be known), with
    the versions of the packages whose classes are known by name."""
    try:
        description = [_describe(value, 0, set()), dict(_versions())]
    except (Unknowable, RecursionError):
        return None
    text = json.dumps(description, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in _BY_NAME[1:]:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "none"
    return found


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _describe(value: Any, depth: int, active: set[int]) -> Any:
    if depth > MAX_DEPTH:
        raise Unknowable("too deep")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, bytes | bytearray):
        return {"bytes": _digest(bytes(value))}
    if isinstance(value, np.generic):
        return {"numpy": str(value.dtype), "value": repr(value.item())}
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        if data.dtype == object:
            return {"objects": [_describe(v, depth + 1, active) for v in data.ravel()]}
        return {"ndarray": str(data.dtype), "shape": list(data.shape),
                "data": _digest(data.tobytes())}
    if id(value) in active:
        return {"cycle": type(value).__qualname__}
    active = active | {id(value)}
    if isinstance(value, list | tuple):
        return {type(value).__name__: [_describe(v, depth + 1, active) for v in value]}
    if isinstance(value, set | frozenset):
        items = [json.dumps(_describe(v, depth + 1, active), sort_keys=True) for v in value]
        return {"set": sorted(items)}
    if isinstance(value, dict):
        return {"dict": sorted([json.dumps(_describe(k, depth + 1, active), sort_keys=True),
                                _describe(v, depth + 1, active)] for k, v in value.items())}
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__}
    if isinstance(value, types.FunctionType):
        return _function(value, depth, active)
    if isinstance(value, types.MethodType):
        return {"method": _describe(value.__func__, depth + 1, active),
                "self": _describe(value.__self__, depth + 1, active)}
    if isinstance(value, types.BuiltinFunctionType | np.ufunc):
        owner = getattr(value, "__module__", None) or type(getattr(value, "__self__", None))
        return {"builtin": f"{owner}.{getattr(value, '__qualname__', value.__name__)}"}
    if isinstance(value, functools.partial):
        return {"partial": _describe(value.func, depth + 1, active),
                "args": _describe(value.args, depth + 1, active),
                "keywords": _describe(value.keywords, depth + 1, active)}
    if isinstance(value, type):
        return _class(value, depth, active)
    if isinstance(value, types.CodeType):
        return _code(value, depth, active)
    return _object(value, depth, active)


def _code(code: types.CodeType, depth: int, active: set[int]) -> Any:
    consts = [_code(c, depth + 1, active) if isinstance(c, types.CodeType)
              else _describe(c, depth + 1, active) for c in code.co_consts]
    return {"code": _digest(code.co_code), "consts": consts, "names": list(code.co_names)}


def _function(func: types.FunctionType, depth: int, active: set[int]) -> Any:
    closure = [_describe(cell.cell_contents, depth + 1, active)
               for cell in (func.__closure__ or ()) if _cell_filled(cell)]
    names = _global_names(func.__code__)
    globals_read = {name: _describe(func.__globals__[name], depth + 1, active)
                    for name in sorted(names) if name in func.__globals__}
    return {"function": func.__qualname__, "code": _code(func.__code__, depth, active),
            "defaults": _describe(func.__defaults__, depth + 1, active),
            "kwdefaults": _describe(func.__kwdefaults__, depth + 1, active),
            "closure": closure, "globals": globals_read}


def _cell_filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


#: Class attributes that say nothing about behaviour.
_CLASS_NOISE = frozenset({"__dict__", "__weakref__", "__module__", "__doc__", "__qualname__",
                          "__annotations__", "__slots__", "__firstlineno__",
                          "__static_attributes__", "__orig_bases__", "__parameters__"})
#: Packages whose classes are known by name: their code changes with their version, which
#: the fingerprint records.
_BY_NAME = ("builtins", "numpy", "scipy", "astropy", "awlineage")


def _class(cls: type, depth: int, active: set[int]) -> Any:
    """A class by its qualified name and, for classes defined outside the packages of
    `_BY_NAME`, everything it defines (methods, dunder methods such as ``__call__``, class
    attributes) and its base classes."""
    module = getattr(cls, "__module__", "") or ""
    name = f"{module}:{cls.__qualname__}"
    if module.split(".")[0] in _BY_NAME:
        return {"class": name}
    body = {}
    for attr, value in vars(cls).items():
        if attr in _CLASS_NOISE:
            continue
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        elif isinstance(value, property):
            value = (value.fget, value.fset, value.fdel)
        body[attr] = _describe(value, depth + 1, active)
    bases = [_describe(b, depth + 1, active) for b in cls.__bases__ if b is not object]
    return {"class": name, "body": body, "bases": bases}


def _object(value: Any, depth: int, active: set[int]) -> Any:
    header = getattr(value, "to_header_string", None)
    if callable(header):  # an astropy WCS: its header says everything about it
        try:
            return {"object": type(value).__qualname__, "header": header()}
        except Exception:  # fall back to the other descriptions
            pass
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict) and state:
        return {"object": _class(type(value), depth + 1, active),
                "state": _describe(state, depth + 1, active)}
    try:
        return {"pickled": type(value).__qualname__, "data": _digest(pickle.dumps(value))}
    except Exception as exc:  # any pickling failure: unknowable
        raise Unknowable(type(value).__qualname__) from exc
