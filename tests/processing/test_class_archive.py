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


def test_stale_part_files_go_when_the_archive_is_used_too(tmp_path) -> None:
    """Starts that record concurrently, or are killed while the JVM writes, leave part files
    of some 70 MB each; once an archive exists no start records, and they stayed for good."""
    archive = ClassArchive("", directory=tmp_path)
    assert archive.path is not None
    archive.path.write_bytes(b"an archive")
    old = tmp_path / ".spark-0123456789abcdef.99999.part"
    old.write_bytes(b"half")
    long_ago = time.time() - STALE_PART_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    assert "SharedArchiveFile" in archive.java_options()
    assert not old.exists() and archive.path.exists()


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


LEAVE_SPARK = textwrap.dedent("""
    import os
    from awlineage.processing import SparkExecutor
    executor = SparkExecutor("local[2]")
    workers = executor.context.parallelize(range(2), 2).map(lambda _: os.getpid()).collect()
    print("pids:", executor.context._gateway.proc.pid, *set(workers), flush=True)
""")


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_process_that_started_spark_ends_after_its_jvm_and_workers(tmp_path) -> None:
    """At exit the executor stops Spark and waits for the JVM it launched: once the command
    has ended, its JVM and the Python workers the JVM forked have ended too (nothing is left
    running, and the command's time includes their shutdown)."""
    env = dict(os.environ, AWL_JVM_ARCHIVE_DIR="off",  # a recording start waited already
               PYTHONPATH=os.pathsep.join(filter(None, (os.getcwd(),
                                                        os.environ.get("PYTHONPATH")))))
    output = tmp_path / "output.txt"
    with output.open("w") as out:  # not a pipe: waiting for its end would wait for the JVM
        done = subprocess.run([sys.executable, "-c", LEAVE_SPARK], env=env, stdout=out,
                              stderr=subprocess.STDOUT, timeout=300)
    assert done.returncode == 0, output.read_text()[-3000:]
    line = next(line for line in output.read_text().splitlines() if line.startswith("pids:"))
    pids = [int(word) for word in line.split()[1:]]
    assert len(pids) == 3  # the JVM and a worker per core
    assert [pid for pid in pids if _running(pid)] == []
    assert "Traceback" not in output.read_text()  # the JVM's end is no error in this process
