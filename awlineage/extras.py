"""The optional parts of awlineage and the packages each needs: a part imports its packages
through `require_extra`, so that a missing one is one line naming the extra to install.

``pip install awlineage`` is the framework on SQLite, the serial executor and local files;
Spark, PostgreSQL, S3, the web apps, the solvers and the example pipeline come with extras.
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType

from awlineage.errors import MissingExtraError

__all__ = ["DISTRIBUTION", "install_hint", "missing_extra", "require_extra", "require_java"]

DISTRIBUTION = "awlineage"
"""The distribution whose extras the messages name."""


def install_hint(extra: str, distribution: str = DISTRIBUTION) -> str:
    """The pip command that installs `extra` of `distribution`.

    Parameters
    ----------
    extra : str
        The extra (``"spark"``).
    distribution : str
        The distribution that declares it.

    Returns
    -------
    str
        The command, quoted for a shell.

    Examples
    --------
    >>> print(install_hint("postgres"))
    pip install "awlineage[postgres]"
    """
    return f'pip install "{distribution}[{extra}]"'


def missing_extra(what: str, package: str, extra: str, *,
                  distribution: str = DISTRIBUTION) -> MissingExtraError:
    """The error for `what` (``"the Spark executor"``) needing `package`, which is missing.

    Parameters
    ----------
    what : str
        The part that needs the package, as the start of a sentence.
    package : str
        The missing package.
    extra : str
        The extra that installs it.
    distribution : str
        The distribution that declares the extra (a plug-in's own, for its commands).

    Returns
    -------
    MissingExtraError
        The error, to raise.

    Examples
    --------
    >>> print(missing_extra("the Spark executor", "pyspark", "spark"))
    the Spark executor needs pyspark, which is not installed: pip install "awlineage[spark]"
    """
    return MissingExtraError(f"{what} needs {package}, which is not installed: "
                             f"{install_hint(extra, distribution)}")


def require_extra(module: str, extra: str, what: str) -> ModuleType:
    """Import `module` for `what`, or raise the one-line error naming `extra`.

    Parameters
    ----------
    module : str
        The module to import (``"pyspark"``, ``"minio"``).
    extra : str
        The extra of awlineage that installs it (``"spark"``).
    what : str
        The part that needs it, as the start of a sentence (``"the Spark executor"``).

    Returns
    -------
    types.ModuleType
        The imported module.

    Raises
    ------
    MissingExtraError
        When `module`, or a package it needs, is not installed.

    Examples
    --------
    >>> require_extra("json", "none", "the standard library").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = (exc.name or module).split(".")[0]
        raise missing_extra(what, missing, extra) from None


def require_java(what: str = "the Spark executor") -> str:
    """The ``java`` program Spark will start, or a one-line error saying Java is missing.

    ``$JAVA_HOME/bin/java`` is taken first, else the ``java`` on the PATH.

    Parameters
    ----------
    what : str
        The part that needs Java, as the start of the error's sentence.

    Returns
    -------
    str
        The path of the ``java`` program.

    Raises
    ------
    MissingExtraError
        When no ``java`` program is found.
    """
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if found and os.access(found, os.X_OK):
        return found
    where = f"JAVA_HOME={home} has no bin/java" if home else "no java program is on the PATH"
    raise MissingExtraError(f"{what} needs Java, which is not installed ({where}): install "
                            "Java 17 (e.g. apt-get install openjdk-17-jre-headless), or use "
                            "the serial executor (--executor serial)")
