"""Code versions of process targets: the version a class declares, or else a hash of the
normalised syntax trees of its methods and of the user's code they use, so comments,
docstrings and formatting do not count."""

from __future__ import annotations

import functools
import hashlib
import inspect
from typing import Any

from awlineage.trace._syntax import bytecode, dump, function_tree
from awlineage.trace._usedcode import code_of, used_code

_FRAMEWORK_PREFIX = "awlineage."


def declared_code_version(cls: type) -> str | None:
    """The ``code_version`` class attribute of `cls` or a base, as text; None if none is set."""
    declared = getattr(cls, "code_version", None)
    return None if declared is None else str(declared)


def code_version(cls: type) -> str:
    """The code version of `cls`: declared, or ``ast:`` and 16 hex digits of a SHA-256.

    The hash covers every method, static method, class method and property defined in `cls`
    and its bases outside awlineage, each as a syntax tree without docstrings, line numbers or
    formatting, and the user's code they use (`covered_code`). Methods whose source is
    unavailable (defined interactively) hash their bytecode.

    Parameters
    ----------
    cls : type
        Any class (a process target, usually).

    Returns
    -------
    str
        The declared version, or ``ast:`` and the hash.

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
    return declared if declared is not None else _hashed(cls)[0]


def covered_code(cls: type) -> dict[str, str]:
    """The pieces of the user's code the hashed code version of `cls` covers.

    Covered are the methods of `cls` and of its bases outside awlineage, and, followed from
    them, the functions, classes (whole, methods included) and module-level assignments they
    name in modules that are neither awlineage's, the standard library's nor an installed
    package's; a name is resolved through the module's globals and closures, and through
    modules (``reduction.reduce_science``). Computed once per class and process.

    Parameters
    ----------
    cls : type
        Any class (a process target, usually).

    Returns
    -------
    dict of str to str
        Qualified name (``targets.reduction.reduce_science``,
        ``targets.science.ReducedScienceFrame.make``) to 16 hex digits of its syntax tree.
        Empty when `cls` declares its version.
    """
    if declared_code_version(cls) is not None:
        return {}
    return dict(_hashed(cls)[1])


def _methods(cls: type) -> list[tuple[str, Any]]:
    """(name, function) of the methods of `cls` and its bases outside awlineage, in MRO
    order, each class's sorted by name."""
    found = []
    for klass in cls.__mro__:
        if klass is object or klass.__module__.startswith(_FRAMEWORK_PREFIX) \
                or klass.__module__ == "builtins":
            continue
        for name in sorted(klass.__dict__):
            function = _function_of(klass.__dict__[name])
            if function is not None:
                found.append((name, function))
    return found


@functools.cache
def _hashed(cls: type) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The hashed code version of `cls` and the pieces it covers, sorted by name."""
    version = hashlib.sha256()
    methods = _methods(cls)
    covered: dict[str, str] = {}
    for name, function in methods:
        own = code_of(function)
        version.update(name.encode())
        # the digest of the method's own tree, as before code outside the class was covered,
        # so that classes that use none keep their version
        version.update(_normalised(function).encode())
        covered[own.name] = own.digest
    used = used_code(function for _, function in methods)
    for name in sorted(set(used) - set(covered)):
        version.update(f"\0{name}\0{used[name]}".encode())
    covered.update(used)
    return "ast:" + version.hexdigest()[:16], tuple(sorted(covered.items()))


def _function_of(member: Any) -> Any:
    if isinstance(member, staticmethod | classmethod):
        member = member.__func__
    elif isinstance(member, property):
        member = member.fget
    if inspect.isfunction(member):
        return inspect.unwrap(member)
    return None


def _normalised(function: Any) -> str:
    tree = function_tree(function)
    return bytecode(function.__code__) if tree is None else dump(tree)
