"""Code versions of process targets: the version a class declares, or else a hash of the
normalised syntax trees of its methods, so comments, docstrings and formatting do not count."""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import textwrap
from typing import Any

_FRAMEWORK_PREFIX = "awlineage."


def declared_code_version(cls: type) -> str | None:
    """The ``code_version`` class attribute of `cls` or a base, as text; None if none is set."""
    declared = getattr(cls, "code_version", None)
    return None if declared is None else str(declared)


def code_version(cls: type) -> str:
    """The code version of `cls`: declared, or ``ast:`` and 16 hex digits of a SHA-256.

    The hash covers every method, static method, class method and property defined in `cls`
    and its bases outside awlineage, each as a syntax tree without docstrings, line numbers or
    formatting. Methods whose source is unavailable (defined interactively) hash their bytecode.

    Examples
    --------
    >>> class A:
    ...     def f(self):
    ...         return 1  # a comment
    >>> class B:
    ...     def f(self):
    ...         "A docstring."
    ...         return (1)
    >>> code_version(A) == code_version(B)
    True
    """
    declared = declared_code_version(cls)
    return declared if declared is not None else _hashed_code_version(cls)


@functools.cache
def _hashed_code_version(cls: type) -> str:
    digest = hashlib.sha256()
    for klass in cls.__mro__:
        if klass is object or klass.__module__.startswith(_FRAMEWORK_PREFIX) \
                or klass.__module__ == "builtins":
            continue
        for name in sorted(klass.__dict__):
            function = _function_of(klass.__dict__[name])
            if function is not None:
                digest.update(name.encode())
                digest.update(_normalised(function).encode())
    return "ast:" + digest.hexdigest()[:16]


def _function_of(member: Any) -> Any:
    if isinstance(member, staticmethod | classmethod):
        member = member.__func__
    elif isinstance(member, property):
        member = member.fget
    if inspect.isfunction(member):
        return inspect.unwrap(member)
    return None


def _normalised(function: Any) -> str:
    try:
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return _bytecode(function.__code__)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def _bytecode(code: Any) -> str:
    parts = [code.co_code.hex(), repr(code.co_names)]
    for const in code.co_consts:
        parts.append(_bytecode(const) if inspect.iscode(const) else repr(const))
    return "|".join(parts)
