"""The Spark workers' daemon imports the classes' modules before it forks the workers, and
nothing those modules print reaches the JVM, which reads the daemon's port from its stdout."""

from __future__ import annotations

import importlib
import os
import struct
import subprocess
import sys
import zipfile

from awlineage.processing._spark import PRELOAD_VARIABLE
from awlineage.processing._spark_daemon import forget_zip_package_importers, preload


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


def test_a_worker_does_not_reread_a_zips_directory_for_each_package_in_it(tmp_path,
                                                                          monkeypatch) -> None:
    archive = tmp_path / "zipped_for_awl.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for package in ("zpkg_awl", "zpkg_awl/first", "zpkg_awl/second"):
            zipped.writestr(f"{package}/__init__.py", "VALUE = 1\n")
    monkeypatch.syspath_prepend(str(archive))
    for name in ("zpkg_awl", "zpkg_awl.first", "zpkg_awl.second"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    first = importlib.import_module("zpkg_awl.first")
    directory = first.__loader__._files
    inside = [path for path in sys.path_importer_cache if path.startswith(f"{archive}{os.sep}")]
    assert inside  # the importer of zpkg_awl's own directory

    assert forget_zip_package_importers() >= len(inside)
    assert not [path for path in sys.path_importer_cache
                if path.startswith(f"{archive}{os.sep}")]
    assert str(archive) in sys.path_importer_cache  # the zip's own importer stays
    importlib.invalidate_caches()  # what PySpark's worker does in its first task
    assert first.__loader__._files is directory  # not read again
    assert importlib.import_module("zpkg_awl.second").VALUE == 1  # packages still import
