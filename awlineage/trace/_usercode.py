"""Which modules are the user's own code, whose edits change code versions: not awlineage's,
not the standard library's, not an installed third-party package's (decided by the module's
package name and by where its file lives); a script's ``__main__`` is the user's."""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig

# The framework's own packages: their code is versioned by awlineage's release, not by the
# code versions of the user's classes.
FRAMEWORK_PACKAGES = frozenset({"awlineage", "dataserver"})
_INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages"})


def is_user_module(name: str) -> bool:
    """True when the module `name` (loaded in ``sys.modules``) is the user's own code.

    Examples
    --------
    >>> is_user_module("json"), is_user_module("awlineage.trace"), is_user_module("__main__")
    (False, False, True)
    """
    if name == "__main__":
        return True
    top = name.partition(".")[0]
    if top in FRAMEWORK_PACKAGES or top in sys.stdlib_module_names:
        return False
    file = getattr(sys.modules.get(name), "__file__", None)
    return file is not None and _is_user_file(file)


@functools.cache
def _is_user_file(file: str) -> bool:
    path = os.path.realpath(file)
    if _INSTALL_FOLDERS.intersection(path.split(os.sep)):
        return False
    return not path.startswith(_library_roots())


@functools.cache
def _library_roots() -> tuple[str, ...]:
    """The folders of the standard library and of installed packages, each ending in a
    separator so that ``/usr/lib/python3.11x`` is not taken for ``/usr/lib/python3.11``."""
    paths = {sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    paths.add(site.getusersitepackages())
    return tuple(os.path.join(os.path.realpath(p), "") for p in paths if p)
