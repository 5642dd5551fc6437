"""The Python daemon of awlineage's Spark executors (``spark.python.daemon.module``).

PySpark's own daemon (`pyspark.daemon`) forks a Python worker for each task slot. This one
first imports the modules named in ``AWL_SPARK_PRELOAD`` (comma-separated: the modules of the
classes to make), so that every worker it forks starts with them, shared copy-on-write,
instead of each worker importing numpy, astropy and the pipeline in its first task (1.5 s of
CPU per worker, measured on the demo's pipeline). A module that cannot be imported is left
to the task that needs it, which reports the error.

What it imported is then frozen (`gc.freeze`): the workers' cycle collector (PySpark runs it
after every task) no longer walks those objects, and so no longer writes into, and copies,
every page they share with the daemon. On the demo's pipeline that kept 33 MB per worker and
the daemon's own 34 MB shared instead of copied (proportional set sizes, at rest).

Before it forks, it also forgets the zip importers of the packages inside PySpark's zip
(`forget_zip_package_importers`): each worker's first task adds Spark's files directory to
its path and calls `importlib.invalidate_caches`, which made every one of those importers
read the zip's directory again, a copy of its own each: 11.9 MB in every worker.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import zipimport
from collections.abc import Iterator

from awlineage.extras import require_extra

PRELOAD_VARIABLE = "AWL_SPARK_PRELOAD"


def preload(names: str) -> list[str]:
    """Import the comma-separated modules of `names`; return those that failed."""
    failed = []
    for name in filter(None, (n.strip() for n in names.split(","))):
        try:
            importlib.import_module(name)
        except Exception:  # the task that imports it reports the error
            failed.append(name)
    return failed


def forget_zip_package_importers() -> int:
    """Drop from ``sys.path_importer_cache`` the importers of directories inside zip files
    (``pyspark.zip/pyspark/sql``; a zip file's own importer stays).

    ``importlib.invalidate_caches`` asks every importer in that cache to reread its zip's
    directory, and each makes a copy of its own (Python 3.11: PySpark's zip is read again by
    each of the 16 importers of its packages, 11.9 MB). Modules already imported keep their
    importer, and the directory it read; a package imported later gets a new importer, which
    takes the directory the zip file's own importer holds.

    Returns
    -------
    int
        How many importers were dropped.
    """
    dropped = [path for path, finder in sys.path_importer_cache.items()
               if isinstance(finder, zipimport.zipimporter) and finder.prefix]
    for path in dropped:
        del sys.path_importer_cache[path]
    return len(dropped)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 points at stderr inside the block: the daemon's stdout carries its
    port number to the JVM, and nothing an imported module prints may come before it."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main() -> None:
    """Preload, freeze what was loaded, then run PySpark's daemon."""
    with _stdout_to_stderr():
        preload(os.environ.get(PRELOAD_VARIABLE, ""))
    forget_zip_package_importers()
    gc.collect()  # what the imports left as garbage is not frozen with the rest
    gc.freeze()
    manager = require_extra("pyspark.daemon", "spark", "the Spark executor").manager

    manager()


if __name__ == "__main__":
    main()
