"""Garbage collection: removing files no committed object refers to (a store whose commit
failed leaves one), never a referenced file, and never a file younger than a grace period,
whose commit may still be on its way; and removing uploads abandoned half-way (a process
killed during a store leaves its temporary file) once they have not been written to for the
grace period."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dataserver._errors import FileInUseError, FileNotFoundOnServer, ServerConfigError
from dataserver._storage import Storage
from dataserver._stored import FileEntry

DEFAULT_GRACE_SECONDS = 24 * 3600.0
"""A day: longer than any store-to-commit interval of a pipeline step we expect."""

_BATCH = 1000
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}

ReferencedAmong = Callable[[list[str]], set[str]]
"""Given file names, the subset that committed objects refer to (asked per batch)."""


@dataclass
class GarbageReport:
    """What a garbage collection found and did.

    Attributes
    ----------
    orphans
        Files old enough and referenced by no committed object.
    removed
        Names of the orphans deleted (none in a dry run).
    referenced
        How many files committed objects refer to.
    too_young
        How many files and unfinished uploads were skipped as younger than the grace
        period.
    kept
        Orphans not deleted, with the reason (a commit referred to one meanwhile, ...).
    abandoned
        Unfinished uploads not written to for the grace period (internal names such as
        ``.awl-tmp/put-x1y2``), as far as the back end shows them (see
        `Storage.unfinished_uploads`).
    abandoned_removed
        Names of the abandoned uploads deleted (none in a dry run).
    """

    orphans: list[FileEntry] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    referenced: int = 0
    too_young: int = 0
    kept: dict[str, str] = field(default_factory=dict)
    abandoned: list[FileEntry] = field(default_factory=list)
    abandoned_removed: list[str] = field(default_factory=list)

    @property
    def orphan_bytes(self) -> int:
        """Total size of the orphans."""
        return sum(entry.size for entry in self.orphans)

    @property
    def abandoned_bytes(self) -> int:
        """Total size of the abandoned uploads."""
        return sum(entry.size for entry in self.abandoned)

    @property
    def freed_bytes(self) -> int:
        """Bytes deleted: the orphans and abandoned uploads actually removed."""
        removed = set(self.removed)
        gone = set(self.abandoned_removed)
        return (sum(entry.size for entry in self.orphans if entry.name in removed)
                + sum(entry.size for entry in self.abandoned if entry.name in gone))


def collect_garbage(storage: Storage, referenced_among: ReferencedAmong, *,
                    grace_seconds: float = DEFAULT_GRACE_SECONDS, dry_run: bool = False,
                    now: float | None = None) -> GarbageReport:
    """Find, and unless `dry_run` delete, the files of `storage` that no committed object
    refers to and that are older than `grace_seconds`, and the uploads abandoned that long
    ago.

    Parameters
    ----------
    storage
        The data server.
    referenced_among
        The database's answer to "which of these names do committed objects refer to?",
        asked for batches of names right before they are deleted.
    grace_seconds
        Files stored (or stored again) more recently are left alone: the commit that will
        refer to them may still be running. So are unfinished uploads written to more
        recently.
    dry_run
        Only list the orphans.
    now
        The current time, in seconds since the epoch (for tests).

    Returns
    -------
    GarbageReport

    Notes
    -----
    A file counts as young when its back end cannot say when it was stored. On an HTTP data
    server every delete is checked against the server's database once more. Unfinished
    uploads are those of a local directory; the HTTP data server's are collected by running
    this on its directory, and S3 discards incomplete multipart uploads by a lifecycle rule
    of the bucket (``AbortIncompleteMultipartUpload``).
    """
    if grace_seconds < 0:
        raise ServerConfigError(f"grace period {grace_seconds} s is negative")
    cutoff = (time.time() if now is None else now) - grace_seconds
    report = GarbageReport()
    batch: list[FileEntry] = []
    for entry in storage.entries():
        if entry.modified is None or entry.modified > cutoff:
            report.too_young += 1
            continue
        batch.append(entry)
        if len(batch) >= _BATCH:
            _collect_batch(storage, referenced_among, batch, dry_run, report)
            batch = []
    if batch:
        _collect_batch(storage, referenced_among, batch, dry_run, report)
    _collect_abandoned(storage, cutoff, dry_run, report)
    return report


def _collect_abandoned(storage: Storage, cutoff: float, dry_run: bool,
                       report: GarbageReport) -> None:
    for entry in storage.unfinished_uploads():
        if entry.modified is None or entry.modified > cutoff:
            report.too_young += 1
            continue
        report.abandoned.append(entry)
        if dry_run:
            continue
        if storage.remove_unfinished_upload(entry.name, cutoff):
            report.abandoned_removed.append(entry.name)
        else:
            report.kept[entry.name] = "written to again, or finished, meanwhile"


def _collect_batch(storage: Storage, referenced_among: ReferencedAmong, batch: list[FileEntry],
                   dry_run: bool, report: GarbageReport) -> None:
    referenced = referenced_among([entry.name for entry in batch])
    report.referenced += len(referenced)
    orphans = [entry for entry in batch if entry.name not in referenced]
    report.orphans.extend(orphans)
    if dry_run:
        return
    for entry in orphans:
        try:
            storage.delete(entry.name)
        except FileInUseError:
            report.kept[entry.name] = "a committed object refers to it now"
            continue
        except FileNotFoundOnServer:
            report.kept[entry.name] = "already gone"
            continue
        report.removed.append(entry.name)


def parse_duration(text: str | float) -> float:
    """Seconds from ``3600``, ``"90s"``, ``"15m"``, ``"24h"`` or ``"7d"``.

    Raises
    ------
    ServerConfigError
        Naming the value.
    """
    if isinstance(text, int | float):
        return float(text)
    match = _DURATION.match(text)
    if not match:
        raise ServerConfigError(f"grace period {text!r} is not a duration (such as 3600, 15m, "
                                "24h, 7d)")
    return float(match.group(1)) * _SECONDS[match.group(2).lower()]

