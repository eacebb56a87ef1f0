"""Pondering: the same search in a background thread on the opponent's time, stopped within one batch."""

from __future__ import annotations

import threading

from .game import SearchView
from .search_types import Limits


class PonderMixin:
    """Pondering of a `azgo.engine.search.Searcher`."""

    def ponder(self, game, max_visits: int = 1_000_000) -> None:
        """Search the current position in a background thread until ``stop_pondering``."""
        self.stop_pondering()
        self._stop.clear()
        snapshot = SearchView(game)
        self._ponder_thread = threading.Thread(
            target=self.search, args=(snapshot, Limits(visits=max_visits)), kwargs={"stop": self._stop},
            daemon=True, name="azgo-ponder")
        self._ponder_thread.start()

    @property
    def pondering(self) -> bool:
        return self._ponder_thread is not None and self._ponder_thread.is_alive()

    def stop_pondering(self) -> None:
        """Stop a running ponder search (returns when it has stopped: within one batch)."""
        t = self._ponder_thread
        if t is not None:
            self._stop.set()
            t.join()
            self._ponder_thread = None

