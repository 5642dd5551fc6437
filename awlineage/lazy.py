"""Package attributes imported when first used (PEP 562), so that ``import awlineage`` and
``awl --help`` do not pay for SQLAlchemy, numpy, astropy or scipy before a name needs them.

A package lists where each public name lives and hands the module functions this returns::

    __getattr__, __dir__ = lazy_attributes(__name__, {"Database": "._database"})

Type checkers see the same names through imports under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["import_names", "lazy_attributes"]


def lazy_attributes(package: str, where: Mapping[str, str]
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose attributes are imported on use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    where : Mapping of str to str
        Each attribute's module (``"._database"``, relative to `package`, or absolute), with
        ``":name"`` appended when the module calls it otherwise (``".x:Path"``).

    Returns
    -------
    tuple
        ``__getattr__(name)``, which imports the attribute's module (or the subpackage of that
        name) and keeps the value in the package, and ``__dir__()``.
    """

    def __getattr__(name: str) -> Any:
        module = sys.modules[package]
        if name in where:
            source, _, own_name = where[name].partition(":")
            value = getattr(importlib.import_module(source, package), own_name or name)
        elif not name.startswith("__"):
            try:  # `awlineage.persistence` after a bare `import awlineage`, as before
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__


def import_names(package: ModuleType) -> None:
    """Import every name in `package`'s ``__all__`` now, as an eager package did on import.

    For what needs every module that defines persistent classes or registers hooks (the
    framework's DDL), not only those a program has used so far.

    Parameters
    ----------
    package : types.ModuleType
        A package whose attributes come from `lazy_attributes`.
    """
    for name in getattr(package, "__all__", ()):
        getattr(package, name)
