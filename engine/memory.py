"""The process's resident memory, and giving freed memory back to the system (the memory caps of
``azgo gtp`` and ``azgo analysis`` read these). Linux reads ``/proc/self/statm``; elsewhere the
figures are unknown (None) and no cap applies."""

from __future__ import annotations

import ctypes
import gc
import os

_LIBC = None


def rss_mb() -> float | None:
    """This process's resident memory in MB (Linux), or None where it cannot be read."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError, IndexError):
        return None


def release_memory(collect: bool = False) -> None:
    """Give freed heap pages back to the system (glibc ``malloc_trim``), so that the resident size
    reflects what is alive; ``collect`` runs the cyclic garbage collector first."""
    global _LIBC
    if collect:
        gc.collect()
    try:
        if _LIBC is None:
            _LIBC = ctypes.CDLL("libc.so.6")
        _LIBC.malloc_trim(0)
    except (OSError, AttributeError):
        pass


def default_memory_mb() -> float:
    """The default cap: a quarter of the machine's memory, at most 4 GB (2 GB where it cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 20
    except (ValueError, OSError, AttributeError):
        return 2048.0
    return float(min(total / 4, 4096))
