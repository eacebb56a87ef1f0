"""The search driver: playouts in batches until a limit (visits, playouts, seconds, a time budget, the
memory cap, early stop) on one thread or ``config.threads`` threads sharing the tree (gathering and backing up
under one lock, the network call outside it: onnxruntime releases the GIL)."""

from __future__ import annotations

import math
import threading
import time
from typing import Callable

import numpy as np

from .memory import rss_mb
from .search_types import Limits, MoveInfo, SearchResult


class _Run:
    """The shared state of one search across its threads."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.playouts = 0
        self.nn = 0.0
        self.stopping = False
        self.deadline = math.inf  # every thread checks it (not only the searching one)
        self.error: BaseException | None = None


class DriverMixin:
    """``search`` of a `azgo.engine.search.Searcher`."""

    def search(self, game, limits: Limits = Limits(visits=200), budget: float | None = None,
               stop: threading.Event | None = None, callback: Callable[[list[MoveInfo]], None] | None = None,
               interval: float = 0.5, noise: bool = False, reuse: bool = True,
               temperature: float = 0.0, exclude: set[int] | None = None, gumbel: int = 0) -> SearchResult:
        """Search the game's current position and return the result (the move is not played).

        ``budget``: seconds from a time control (None = none). ``stop``: an Event that ends the
        search. ``callback(candidates)`` is called every ``interval`` seconds (analysis). ``noise``:
        root Dirichlet noise and forced playouts (self-play). ``temperature`` > 0 samples the move
        by visits^(1/T) instead of choosing the best. ``exclude``: root moves not to consider
        (GTP ``avoid``/``allow``; ignored if it would exclude every move). ``gumbel`` > 0: a Gumbel root over
        that many sampled moves (`azgo.engine.gumbel`) spending ``limits.visits`` (or ``playouts``); the move is
        its choice.
        With ``config.threads`` > 1, that many threads gather and evaluate batches on the one tree.
        """
        with self._lock:
            return self._search(game, limits, budget, stop, callback, interval, noise, reuse, temperature,
                                exclude, gumbel)

    def _want(self, run: _Run) -> int:
        """Leaves the next batch may take (<= 0: wait for the batches in flight, or the end)."""
        limits = run.limits
        want = self.config.batch_size
        flying = len(self._in_flight)
        if limits.visits is not None:
            want = min(want, limits.visits - self.root.visits - flying)
        if limits.playouts is not None:
            want = min(want, limits.playouts - run.playouts - flying)
        return want

    def _step(self, run: _Run) -> None:
        """One batch: gather under the tree lock, evaluate outside it, back up under it."""
        tree = self._tree
        with tree:
            if run.stopping:
                return
            want = self._want(run)
            if want <= 0:
                if self._in_flight:
                    tree.wait(0.01)
                else:
                    run.stopping = True
                return
            pending, done = self.gather(want)
            run.playouts += done
            if not pending:
                if not done and self._in_flight:
                    tree.wait(0.01)  # the next leaf is another thread's: wait for its batch
                return
            nodes = [leaf for _, leaf in pending]
            planes, legal, keys = self._encode(nodes)
        try:
            t = time.perf_counter()
            ev = self.evaluator.evaluate(planes, legal, keys or None)
            spent = time.perf_counter() - t
        except BaseException:
            with tree:
                self.abandon(pending)
                tree.notify_all()
            raise
        with tree:
            run.playouts += self.complete(pending, ev, legal)
            run.nn += spent
            tree.notify_all()

    def _worker(self, run: _Run) -> None:
        try:
            while not run.stopping:
                if self.now() >= run.deadline:  # a helper that runs while the searching thread waits
                    run.stopping = True        # for the GIL must not search past the budget
                    break
                self._step(run)
        except BaseException as e:  # handed to the searching thread
            run.error = e
            run.stopping = True

    def _over_memory(self) -> bool:
        cap = self.config.max_memory_mb
        if cap is None:
            return False
        now = time.monotonic()
        if now - self._rss_checked < 0.05:
            return False
        self._rss_checked = now
        rss = rss_mb()
        return rss is not None and rss >= cap

    def _search(self, game, limits, budget, stop, callback, interval, noise, reuse, temperature, exclude, gumbel):
        cfg = self.config
        t0 = self.now()
        root_budget = limits.visits or limits.playouts
        if gumbel and root_budget is None:
            raise ValueError("a Gumbel root search needs a visits or playouts limit (its budget)")
        reused = self.begin(game, noise=noise, reuse=reuse, exclude=exclude,
                            gumbel=(gumbel, root_budget) if gumbel else None)
        root = self.root
        run = _Run(limits)
        self.memory_capped = False
        if root.terminal is None and not root.expanded:
            run.nn += self._evaluate_root()
            if root.visits == 0:
                root.visits = 1
                root.value_sum = root.value
                run.playouts = 1
        self._maybe_prepare()
        deadline = math.inf
        if limits.seconds is not None:
            deadline = t0 + limits.seconds
        if budget is not None:
            deadline = min(deadline, t0 + budget)
        run.deadline = deadline
        last_cb = t0
        stopped_early = False
        moves_available = root.moves is not None and len(root.moves) > 1
        helpers = []
        if root.terminal is None and cfg.threads > 1:
            helpers = [threading.Thread(target=self._worker, args=(run,), daemon=True, name=f"azgo-search-{k}")
                       for k in range(cfg.threads - 1)]
            for h in helpers:
                h.start()
        try:
            while root.terminal is None and not run.stopping:
                if stop is not None and stop.is_set():
                    break
                if limits.visits is not None and root.visits >= limits.visits:
                    break
                if limits.playouts is not None and run.playouts >= limits.playouts:
                    break
                now = self.now()
                if now >= deadline:
                    break
                if (limits.early_stop and deadline < math.inf and moves_available and run.playouts >= 16
                        and now - t0 > 0.05):
                    rate = run.playouts / (now - t0)
                    with self._tree:
                        n = np.sort(root.N)
                    if len(n) > 1 and n[-2] + rate * (deadline - now) < n[-1]:
                        stopped_early = True
                        break
                if self._over_memory():
                    self.memory_capped = True
                    break
                self._step(run)
                if run.error is not None:
                    break
                if callback is not None and self.now() - last_cb >= interval:
                    last_cb = self.now()
                    with self._tree:
                        cands = self.candidates()
                    callback(cands)
        finally:
            run.stopping = True
            with self._tree:
                self._tree.notify_all()
            for h in helpers:
                h.join()
        if run.error is not None:
            raise run.error
        elapsed = self.now() - t0
        cands = self.candidates()
        if callback is not None:
            callback(cands)
        move = self.choose_move(temperature) if root.terminal is None else root.board.pass_move
        best = next((c for c in cands if c.move == move), None)
        winrate = best.winrate if best else (root.q() + 1) / 2
        lead = best.score_lead if best else None
        return SearchResult(
            move=move, winrate=winrate, score_lead=lead, visits=root.visits, playouts=run.playouts,
            reused_visits=reused, seconds=elapsed, nn_seconds=run.nn, candidates=cands,
            ownership=root.ownership, stopped_early=stopped_early, memory_capped=self.memory_capped)
