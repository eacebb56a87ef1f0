"""How many search threads and onnxruntime threads to use for a number of cores.

Small networks scale poorly over onnxruntime's intra-op threads (``benchmarks/nn_throughput.py``:
1.05-1.2x from 1 to 2 threads for b6c64), while search threads that each keep one batch in the
network scale almost linearly: onnxruntime releases the GIL, so one thread's batch runs while
another thread selects and backs up in Python. So cores go to search threads first (up to 4: more
batches in flight mean more virtual loss in the tree), the rest to intra-op threads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_SEARCH_THREADS = 4


@dataclass(frozen=True)
class ThreadPlan:
    """``search`` threads in the tree, ``intra_op`` onnxruntime threads per network call, from
    ``cores`` (``auto`` when taken from ``os.cpu_count()``)."""

    search: int
    intra_op: int
    cores: int
    auto: bool

    def describe(self) -> str:
        how = f"--threads auto: {self.cores} cores" if self.auto else f"--threads {self.cores}"
        return (f"{self.search} search thread{'s' if self.search > 1 else ''} x {self.intra_op} onnxruntime "
                f"thread{'s' if self.intra_op > 1 else ''} ({how})")


def parse_threads(value) -> int | None:
    """``"auto"`` (or None) -> None; a positive integer (or its text) -> itself; else ValueError."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"threads must be 'auto' or a positive integer, got {value!r}") from None
    if isinstance(value, float) and value != n or n < 1:
        raise ValueError(f"threads must be 'auto' or a positive integer, got {value!r}")
    return n


def plan_threads(threads=None, cpu_count: int | None = None) -> ThreadPlan:
    """The plan for ``threads`` cores (None/"auto": every core of this machine)."""
    n = parse_threads(threads)
    auto = n is None
    if auto:
        n = max(1, cpu_count if cpu_count is not None else (os.cpu_count() or 1))
    search = min(n, MAX_SEARCH_THREADS)
    return ThreadPlan(search=search, intra_op=max(1, n // search), cores=n, auto=auto)
