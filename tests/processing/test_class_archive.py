"""The Spark driver JVM's class-data archive: recorded by the first start, mapped by the
next ones, kept per Java and pyspark, and never half-written where a start would read it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from awlineage.processing._class_archive import (
    STALE_PART_SECONDS,
    ClassArchive,
    archive_directory,
)

START_SPARK = textwrap.dedent("""
    import sys
    from awlineage.processing import SparkExecutor
    options = sys.argv[1] if len(sys.argv) > 1 else ""
    conf = {"spark.driver.extraJavaOptions": options} if options else {}
    executor = SparkExecutor("local[1]", conf=conf)
    print(executor.context.parallelize(range(4), 2).sum())
""")


def test_first_start_records_and_later_starts_use_the_archive(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AWL_JVM_ARCHIVE_DIR", str(tmp_path / "jvm"))
    archive = ClassArchive("-XX:TieredStopAtLevel=1")
    options = archive.java_options()
    assert archive.part is not None and archive.part.parent == tmp_path / "jvm"
    assert f"-XX:ArchiveClassesAtExit={archive.part}" in options
    assert not archive.part.name.endswith(".jsa")  # never read as an archive
    archive.path.write_bytes(b"recorded")
    again = ClassArchive("-XX:TieredStopAtLevel=1")
    assert f"-XX:SharedArchiveFile={archive.path}" in again.java_options()
    assert again.part is None
    assert ClassArchive("-XX:+UseSerialGC").path != archive.path  # other options, other file


def test_archives_can_be_turned_off(monkeypatch) -> None:
    monkeypatch.setenv("AWL_JVM_ARCHIVE_DIR", "off")
    assert archive_directory() is None
    assert ClassArchive("").java_options() == ""


def test_a_part_file_left_behind_is_removed_once_stale(tmp_path) -> None:
    old = tmp_path / ".spark-0123456789abcdef.99999.part"
    fresh = tmp_path / ".spark-0123456789abcdef.99998.part"
    for part in (old, fresh):
        part.write_bytes(b"half")
    long_ago = time.time() - STALE_PART_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    ClassArchive("", directory=tmp_path).java_options()
    assert not old.exists() and fresh.exists()  # a fresh one may be a JVM still writing


def _start_spark(tmp_path: Path, *options: str) -> str:
    env = dict(os.environ, AWL_JVM_ARCHIVE_DIR=str(tmp_path / "jvm"),
               PYTHONPATH=os.pathsep.join(filter(None, (os.getcwd(),
                                                        os.environ.get("PYTHONPATH")))))
    done = subprocess.run([sys.executable, "-c", START_SPARK, *options], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_spark_maps_the_classes_the_first_start_recorded(tmp_path) -> None:
    assert _start_spark(tmp_path).split()[-1] == "6"
    archives = list((tmp_path / "jvm").iterdir())
    assert [a.suffix for a in archives] == [".jsa"]  # written whole at exit, no part left
    assert archives[0].stat().st_size > 1_000_000
    log = tmp_path / "class-load.log"
    assert _start_spark(tmp_path, f"-Xlog:class+load=info:file={log}").split()[-1] == "6"
    from_archive = log.read_text().count("source: shared objects file (top)")
    assert from_archive > 1000, "the driver JVM did not map the recorded classes"
