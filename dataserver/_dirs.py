"""Directory housekeeping shared by the local back end's files and its hash sidecars."""

from __future__ import annotations

from pathlib import Path


def prune_empty_directories(directory: Path, stop: Path) -> None:
    """Remove `directory` and its parents below `stop` while they are empty."""
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent
