"""The benchmark's graph shape, shared by every tool: 10 masters from 30 raw calibrations,
frames that each choose their chip's master, groups of 4 frames."""

from __future__ import annotations

CHIPS = 10
"""Chips, hence masters; each master combines 3 raw calibrations."""

CALS = 3 * CHIPS
"""Raw calibrations (calibration k belongs to chip k % CHIPS)."""

GROUP = 4
"""Frames per group (frames 4g..4g+3 form group g)."""


def frames_for(targets: int) -> int:
    """Frames of a graph of about `targets` targets (10,000 -> 8,000 frames, 10,010 targets)."""
    return max(GROUP, targets * GROUP // (GROUP + 1) // GROUP * GROUP)


def targets_of(frames: int) -> int:
    """Targets of a graph of `frames` frames: masters, frames and groups."""
    return CHIPS + frames + frames // GROUP
