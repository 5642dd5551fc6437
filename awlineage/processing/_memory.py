"""Handing freed memory back to the operating system, in the processes of a Spark make.

A process that made a target (numpy arrays of a few megabytes each, LACosmic's temporaries)
keeps what it freed: glibc's allocator raises its mmap threshold after the first large array
is freed, so later arrays come from the heap, and a heap shrinks only from its top. A Spark
worker between two targets, or the driver once the workers have taken over, would hold that
memory while the other workers are at their peak; `release_freed_memory` returns it
(``malloc_trim``, which gives back the free pages of every arena, not only the top).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def release_freed_memory(collect: bool = False) -> bool:
    """Give the memory this process has freed back to the operating system.

    Parameters
    ----------
    collect : bool, optional
        Run Python's cycle collector first (frees objects only a cycle keeps).

    Returns
    -------
    bool
        Whether the C library could be asked (False where it has no ``malloc_trim``).
    """
    if collect:
        gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
