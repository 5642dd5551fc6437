"""The Spark workers' daemon imports the classes' modules before it forks the workers, and
nothing those modules print reaches the JVM, which reads the daemon's port from its stdout."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

from awlineage.processing._spark import PRELOAD_VARIABLE
from awlineage.processing._spark_daemon import preload


def test_preloading_imports_the_modules_and_names_those_that_failed() -> None:
    assert preload("json, no_such_module_for_awl ,,") == ["no_such_module_for_awl"]
    assert "json" in sys.modules


def test_what_a_preloaded_module_prints_does_not_come_before_the_port(tmp_path) -> None:
    (tmp_path / "noisy_module_for_awl.py").write_text("print('hello from a module')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.getcwd()]),
               **{PRELOAD_VARIABLE: "noisy_module_for_awl"})
    daemon = subprocess.Popen([sys.executable, "-m", "awlineage.processing._spark_daemon"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    try:
        port = struct.unpack("!i", daemon.stdout.read(4))[0]  # PySpark's framing
        assert 0 < port < 65536
    finally:
        daemon.kill()
        _, err = daemon.communicate(timeout=30)
    assert b"hello from a module" in err
