"""SIGINT/SIGTERM as a flag a training loop checks at step boundaries (so it saves before it stops)."""

from __future__ import annotations

import signal
from typing import Any


class StopFlag:
    """Turns SIGINT/SIGTERM into a flag checked at step boundaries (restored on exit)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self):
        for s in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[s] = signal.signal(s, self._handle)
            except (ValueError, OSError):  # not the main thread
                pass
        return self

    def _handle(self, signum, frame) -> None:
        if self.signal is not None:  # second signal: give up at once
            raise KeyboardInterrupt
        self.signal = signum

    def __exit__(self, *exc) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)
