"""Garbage collection: removing files no committed object refers to (a store whose commit
failed leaves one), never a referenced file, and never a file younger than a grace period,
whose commit may still be on its way."""

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
        How many unreferenced-or-not files were skipped as younger than the grace period.
    kept
        Orphans not deleted, with the reason (a commit referred to one meanwhile, ...).
    """

    orphans: list[FileEntry] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    referenced: int = 0
    too_young: int = 0
    kept: dict[str, str] = field(default_factory=dict)

    @property
    def orphan_bytes(self) -> int:
        """Total size of the orphans."""
        return sum(entry.size for entry in self.orphans)


def collect_garbage(storage: Storage, referenced_among: ReferencedAmong, *,
                    grace_seconds: float = DEFAULT_GRACE_SECONDS, dry_run: bool = False,
                    now: float | None = None) -> GarbageReport:
    """Find, and unless `dry_run` delete, the files of `storage` that no committed object
    refers to and that are older than `grace_seconds`.

    Parameters
    ----------
    storage
        The data server.
    referenced_among
        The database's answer to "which of these names do committed objects refer to?",
        asked for batches of names right before they are deleted.
    grace_seconds
        Files stored (or stored again) more recently are left alone: the commit that will
        refer to them may still be running.
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
    server every delete is checked against the server's database once more.
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
    return report


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

