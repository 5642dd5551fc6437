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
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
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
    gc.collect()  # what the imports left as garbage is not frozen with the rest
    gc.freeze()
    manager = require_extra("pyspark.daemon", "spark", "the Spark executor").manager

    manager()


if __name__ == "__main__":
    main()
