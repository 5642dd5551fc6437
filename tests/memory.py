"""A process's resident memory high-water mark (Linux), which counts the database driver's C
memory that tracemalloc does not see; for the streaming tests and the persistence benchmark."""

from __future__ import annotations


def resident_peak_kib() -> int | None:
    """This process's resident high-water mark in KiB; None where it cannot be read."""
    try:
        with open("/proc/self/status") as status:
            return next((int(line.split()[1]) for line in status
                         if line.startswith("VmHWM:")), None)
    except OSError:
        return None


def reset_resident_peak() -> bool:
    """Start the high-water mark again from the current resident size; False where the
    system does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        return False
    return True
