"""The Spark driver JVM's class-data archive: half of its start, kept between commands.

A Spark driver JVM loads and verifies some ten thousand classes from Spark's jars before its
first job, and in local mode that is most of Spark's start: 5.2 s of CPU on this project's
2-core reference machine, against 2.2 s when the classes come from a class-data-sharing (CDS)
archive that maps them ready-made. Java 19 makes and refreshes such an archive by itself
(``-XX:+AutoCreateSharedArchive``); Java 17, the version Debian installs, needs the two steps
done by hand, and this module does them:

1. The first Spark start of a machine (no archive yet) runs the driver with
   ``-XX:ArchiveClassesAtExit=<part file>``: the JVM writes the classes it loaded when it
   exits. At the command's exit the Spark executor stops the JVM and waits for it (see
   `awlineage.processing._spark`), and `finish_recording` renames the part file to the archive
   (atomically: a concurrent start sees no half-written archive).
2. Every later start runs it with ``-XX:SharedArchiveFile=<archive>``. An archive that does not
   fit (another Java or Spark, a changed class path) is ignored by the JVM, which then loads
   classes as without it; the archive's name includes the Java binary and pyspark versions so
   that an upgrade records a new one.

The archives live in ``AWL_JVM_ARCHIVE_DIR`` (default ``~/.cache/awlineage-jvm``, beside and
not in the file cache, whose size limit would evict them); ``AWL_JVM_ARCHIVE_DIR=off`` turns
them off. One archive takes some 70 MB.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
from pathlib import Path

from awlineage import config

OFF = "off"
QUIET_JVM_LOG = "-Xlog:disable -Xlog:all=error:stderr"
"""The JVM's own log: only errors, on stderr. Its default prints CDS warnings (an archive that
does not fit) on stdout, which is the command's output."""
STALE_PART_SECONDS = 3600.0
"""A part file this old was left by a command that ended before its JVM wrote it."""
WRITE_TIMEOUT = 120.0
"""Seconds to wait, at exit, for the JVM to write the archive."""


def archive_directory() -> Path | None:
    """Where the archives are kept (``AWL_JVM_ARCHIVE_DIR``), or None when turned off.

    Returns
    -------
    pathlib.Path or None
        The directory (not created here), or None for ``AWL_JVM_ARCHIVE_DIR=off``.
    """
    explicit = config.setting("jvm_archive_dir")
    if explicit and str(explicit).lower() == OFF:
        return None
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "awlineage-jvm"


def _java_binary() -> str:
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found else "java"


def archive_path(directory: Path, java_options: str) -> Path:
    """The archive for this Java, this pyspark and these JVM options in `directory`.

    Parameters
    ----------
    directory : pathlib.Path
        Where the archives are kept.
    java_options : str
        The driver's other JVM options (they are part of what an archive fits).

    Returns
    -------
    pathlib.Path
        ``spark-<key>.jsa`` in `directory`, `key` a hash of what the archive depends on.
    """
    import pyspark

    java = _java_binary()
    with contextlib.suppress(OSError):
        java += f":{os.stat(java).st_mtime_ns}"
    key = "|".join((java, pyspark.__version__, os.path.dirname(pyspark.__file__),
                    java_options))
    return directory / f"spark-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


class ClassArchive:
    """The JVM options that use (or record) the archive of one Spark start.

    Parameters
    ----------
    java_options
        The driver's other JVM options.
    directory
        Where archives are kept; `archive_directory` when None.
    """

    def __init__(self, java_options: str, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else archive_directory()
        self.path = archive_path(self.directory, java_options) if self.directory else None
        self.part: Path | None = None
        """The part file the JVM writes into, when this start records the archive."""

    def java_options(self) -> str:
        """``-XX:`` options for the driver: use the archive, or record it when there is none
        (and nothing when archives are off or their directory cannot be written)."""
        if self.path is None:
            return ""
        if self.path.exists():
            # starts that recorded at once, or were killed while the JVM wrote, leave parts
            # (some 70 MB each) that no later start, using the archive, would remove
            _remove_stale_parts(self.path.parent)
            return f"{QUIET_JVM_LOG} -XX:SharedArchiveFile={self.path}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return ""
        _remove_stale_parts(self.path.parent)
        self.part = self.path.with_name(f".{self.path.stem}.{os.getpid()}.part")
        return f"{QUIET_JVM_LOG} -XX:ArchiveClassesAtExit={self.part}"

    @property
    def recording(self) -> bool:
        """Whether this start records the archive (the JVM writes it as it exits)."""
        return self.part is not None and self.path is not None

    def finish_recording(self) -> None:
        """Once the JVM started with these options has exited: make the part file it wrote
        the archive (nothing when this start did not record)."""
        if self.part is None or self.path is None:
            return
        with contextlib.suppress(OSError):
            if self.part.exists() and self.part.stat().st_size > 0:
                os.replace(self.part, self.path)
            else:
                self.part.unlink(missing_ok=True)


def _remove_stale_parts(directory: Path) -> None:
    now = time.time()
    for part in directory.glob(".spark-*.part"):
        with contextlib.suppress(OSError):
            if now - part.stat().st_mtime > STALE_PART_SECONDS:
                part.unlink()

