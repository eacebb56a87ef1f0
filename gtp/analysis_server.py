"""``azgo analysis``: KataGo's JSON analysis protocol over stdin/stdout (KaTrain, review scripts).

One JSON query a line in, one JSON response a line out, asynchronously: a query may name several
turns of one game (one response each, ``turnNumber`` set), many queries may be in flight, and
``terminate``/``terminate_all``/``query_version``/``clear_cache`` act at once. Every line in gets at
least one line out (an ``error`` for a bad line, which never stops the server); stdout carries JSON
lines only, diagnostics go to stderr.

Scheduling: up to ``positions`` turns are searched at the same time, the highest ``priority`` first
(ties: the earlier query), a started search is never pre-empted. The turns of one query are cut into
one stretch of the game per slot, each searched in move order, and a turn starts from the subtree
that the search of the turn before it left (its visits count towards ``maxVisits``, as in GTP). One search thread runs them all in
steps: every active search gathers a batch of leaves under virtual loss, the leaves of all searches
on one board size go through the network in one call (so positions batch together), then each search
backs up its leaves, reports when ``reportDuringSearchEvery`` is due and ends at ``maxVisits``,
``maxTime``, a ``terminate`` or the memory cap.

Memory: each tree is bounded by its ``maxVisits``; besides, the server watches its resident memory
(Linux ``/proc/self/statm``): at ``max_memory_mb`` the searches in progress end with what they have
(their final response is sent as usual), one line on stderr says so, and the next searches start
once memory is released.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from azgo.engine import planes as P
from azgo.engine.mcts import SearchConfig
from azgo.engine.memory import release_memory, rss_mb
from azgo.engine.search import Searcher

from .kata_query import Action, AnalysisQuery, Defaults, QueryError, Turn, exclusion_set, parse_request
from .kata_response import analysis_response, no_results

VERSION_REPLY = "1.15.0"  # the KataGo release whose analysis protocol this server follows


@dataclass(frozen=True)
class ServerConfig:
    """``positions``: turns searched at once (KataGo's numAnalysisThreads); ``batch_size``: leaves a
    search gathers per step; ``max_memory_mb``: resident-memory cap (None = no cap); ``defaults``:
    visits, time and perspective for queries that do not say."""

    positions: int = 4
    batch_size: int = 8
    max_memory_mb: float | None = None
    defaults: Defaults = Defaults()
    seed: int | None = None
    quit_without_waiting: bool = False

    def __post_init__(self) -> None:
        if self.positions < 1 or self.batch_size < 1:
            raise ValueError("positions and batch_size must be >= 1")


@dataclass
class _Task:
    """One turn of one query, queued or being searched."""

    query: AnalysisQuery
    turn: Turn
    seq: int
    searcher: Searcher | None = None
    started: float = 0.0
    last_report: float = 0.0
    stop: bool = False
    done: bool = False
    exclude: set = field(default_factory=set)
    inherit: Searcher | None = None  # the finished tree of the previous analysed turn, to reuse

    @property
    def key(self) -> tuple:
        return (-self.turn.priority, self.seq)


def resident_mb() -> float | None:
    """This process's resident memory in MB (see ``azgo.engine.memory.rss_mb``)."""
    return rss_mb()


def _release_memory() -> None:
    release_memory(collect=True)


class AnalysisServer:
    """The protocol state: queued and active positions, one search thread, one output writer.

    ``evaluator_for(size)`` returns the evaluator for a board size (a network call takes
    ``planes [B, C, N, N]``, ``legal [B, N*N+1]``, keys; see :mod:`azgo.engine.search`);
    ``loaded_evaluators()`` lists those to clear on ``clear_cache``; ``write(line)`` sends one line
    (without newline) to the client.
    """

    def __init__(self, evaluator_for: Callable[[int], object], config: ServerConfig,
                 write: Callable[[str], None], log: Callable[[str], None] = lambda m: None,
                 min_size: int = 7, max_size: int = 19,
                 loaded_evaluators: Callable[[], list] | None = None):
        self.evaluator_for = evaluator_for
        self.loaded_evaluators = loaded_evaluators or (lambda: [])
        self.config = config
        self._write = write
        self.log = log
        self.min_size, self.max_size = min_size, max_size
        self._cond = threading.Condition()
        self._out_lock = threading.Lock()
        self._eval_lock = threading.Lock()
        self._queued: list[_Task] = []
        self._active: list[_Task] = []
        self._seq = itertools.count()
        self._closing = False
        self._cap_noted = False
        self._rng = np.random.default_rng(config.seed)
        self._thread = threading.Thread(target=self._run, name="azgo-analysis", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ input
    def submit(self, line: str | bytes) -> None:
        """Handle one input line (blank lines are ignored)."""
        if not (line.strip() if isinstance(line, str) else line.strip()):
            return
        try:
            req = parse_request(line, self.config.defaults, self.min_size, self.max_size)
        except QueryError as e:
            self.send(e.response())
            return
        if isinstance(req, Action):
            self._action(req)
            return
        for f, message in req.warnings:
            self.send({"id": req.id, "warning": message, "field": f})
        with self._cond:
            for turn, seq in zip(req.turns, self._turn_order(req)):
                self._queued.append(_Task(req, turn, seq))
            self._cond.notify_all()

    def _turn_order(self, req: AnalysisQuery) -> list[int]:
        """Queue numbers for a query's turns: the game is cut into one stretch per slot, and each
        stretch is searched in move order, so that a turn can reuse the tree of the turn before it
        (as a GTP engine reuses its tree from move to move) while the stretches share network calls."""
        turns = sorted(range(len(req.turns)), key=lambda i: req.turns[i].turn)
        k = self.config.positions
        stretch = -(-len(turns) // k)
        base = next(self._seq)
        for _ in range(len(turns) - 1):
            next(self._seq)
        out = [0] * len(turns)
        for rank, i in enumerate(turns):
            out[i] = base + (rank % stretch) * k + rank // stretch
        return out

    def _action(self, a: Action) -> None:
        if a.name == "query_version":
            self.send({**a.request, "version": VERSION_REPLY, "git_hash": "<omitted>",
                       "azgo_version": _azgo_version()})
            return
        if a.name == "clear_cache":
            with self._eval_lock:
                for ev in self.loaded_evaluators():
                    if hasattr(ev, "clear_cache"):
                        ev.clear_cache()
            self.send(a.request)
            return
        dropped = []
        with self._cond:
            def hit(t: _Task) -> bool:
                if a.name == "terminate_all":
                    return a.turn_numbers is None or t.turn.turn in a.turn_numbers
                return t.query.id == a.terminate_id and (a.turn_numbers is None or t.turn.turn in a.turn_numbers)
            for t in self._active:
                if hit(t):
                    t.stop = True
            dropped = [t for t in self._queued if hit(t)]
            self._queued = [t for t in self._queued if not hit(t)]
            self._cond.notify_all()
        self.send(a.request)
        for t in dropped:
            self.send(no_results(t.query.id, t.turn.turn))

    def close(self, wait: bool = True) -> None:
        """End of input: finish every queued position (``wait``), or stop at once and report."""
        with self._cond:
            self._closing = True
            if not wait:
                for t in self._active:
                    t.stop = True
                dropped, self._queued = self._queued, []
            else:
                dropped = []
            self._cond.notify_all()
        for t in dropped:
            self.send(no_results(t.query.id, t.turn.turn))
        self._thread.join()

    # ------------------------------------------------------------------ output
    def send(self, obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":"), allow_nan=False)
        with self._out_lock:
            self._write(line)

    # ------------------------------------------------------------------ the search thread
    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    self._fill()
                    while not self._active:
                        if self._closing and not self._queued:
                            return
                        self._cond.wait()
                        self._fill()
                    active = list(self._active)
                self._step(active)
                self._check_memory(active)
                finished = [t for t in active if self._maybe_report(t)]
                if finished:
                    with self._cond:
                        self._active = [t for t in self._active if not t.done]
                        for t in finished:
                            self._pass_on_tree(t)
                    for t in finished:
                        t.searcher = None  # the tree goes now (or with its heir), not when the task does
                    if self._cap_noted:
                        _release_memory()
        except Exception as e:  # pragma: no cover - a bug; say so on stderr and answer what is left
            self.log(f"azgo analysis: search thread failed: {e!r}")
            with self._cond:
                left = self._active + self._queued
                self._active, self._queued = [], []
            for t in left:
                self.send({"id": t.query.id, "error": f"internal error: {e!r}", "turnNumber": t.turn.turn})

    def _fill(self) -> None:
        """Start the best queued positions while there are free slots (lock held)."""
        while self._queued and len(self._active) < self.config.positions:
            best = min(self._queued, key=lambda t: t.key)
            self._queued.remove(best)
            self._start(best)
            self._active.append(best)

    def _pass_on_tree(self, t: _Task) -> None:
        """Give a finished tree to the queued next turn of the same query (lock held)."""
        if t.stop or self._cap_noted:
            return
        later = [u for u in self._queued if u.query is t.query and u.turn.turn > t.turn.turn]
        if later:
            heir = min(later, key=lambda u: u.turn.turn)
            if heir.inherit is None:
                heir.inherit = t.searcher

    def _start(self, t: _Task) -> None:
        q = t.query
        t.exclude = exclusion_set(q.exclude, t.turn.game.to_move, q.size)
        t.started = t.last_report = time.monotonic()
        if t.inherit is not None:
            s, t.inherit = t.inherit, None
            s.begin(t.turn.game, reuse=True, exclude=t.exclude)
            t.searcher = s
            return
        cfg = SearchConfig(batch_size=self.config.batch_size,
                           ownership_depth=2 if q.include_moves_ownership else 1,  # turns move the tree one on
                           root_policy_temperature=q.root_policy_temperature,
                           **({"root_fpu_reduction": q.root_fpu_reduction} if q.root_fpu_reduction is not None else {}),
                           **({"c_puct": q.c_puct} if q.c_puct else {}))
        s = Searcher(self.evaluator_for(q.size), cfg, seed=int(self._rng.integers(2 ** 31)))
        s.begin(t.turn.game, reuse=False, exclude=t.exclude)
        t.searcher = s

    def _step(self, active: list[_Task]) -> None:
        """One batched round: gather leaves in every search, one network call per board size."""
        groups: dict[int, list[tuple[_Task, list]]] = {}
        for t in active:
            if t.stop or t.done:
                continue
            s = t.searcher
            root = s.root
            want = 1 if not root.expanded else min(self.config.batch_size, t.query.max_visits - root.visits)
            if want <= 0:
                continue
            pending, _ = s.gather(want)
            if pending:
                groups.setdefault(t.query.size, []).append((t, pending))
        for size, items in groups.items():
            total = sum(len(p) for _, p in items)
            planes = np.zeros((total, P.NUM_PLANES, size, size), dtype=np.float32)
            legal = np.empty((total, size * size + 1), dtype=bool)
            keys: list[int] = []
            offsets = []
            k = 0
            for t, pending in items:
                offsets.append(k)
                keys += t.searcher.encode_leaves([leaf for _, leaf in pending], planes, legal, k)
                k += len(pending)
            with self._eval_lock:
                ev = self.evaluator_for(size).evaluate(planes, legal, keys if len(keys) == total else None)
            for (t, pending), off in zip(items, offsets):
                t.searcher.complete(pending, ev, legal, off)

    def _check_memory(self, active: list[_Task]) -> None:
        cap = self.config.max_memory_mb
        if cap is None:
            return
        rss = resident_mb()
        if rss is None or rss < cap:
            return
        if not self._cap_noted:
            self.log(f"azgo analysis: memory cap reached ({rss:.0f} MB >= {cap:.0f} MB): searches in "
                     "progress end with the tree they have")
            self._cap_noted = True
        for t in active:
            if t.searcher is not None and t.searcher.root.expanded:
                t.stop = True

    def _maybe_report(self, t: _Task) -> bool:
        """Send a partial or the final response when due; True when the position is finished."""
        s = t.searcher
        q = t.query
        now = time.monotonic()
        root = s.root
        finished = t.stop or (root.expanded and (
            root.visits >= q.max_visits or (q.max_time is not None and now - t.started >= q.max_time)))
        if finished:
            t.done = True
            self.send(analysis_response(q, t.turn.turn, s, False) if root.expanded
                      else no_results(q.id, t.turn.turn))
            return True
        if q.report_every is not None and root.expanded and now - t.last_report >= q.report_every:
            t.last_report = now
            self.send(analysis_response(q, t.turn.turn, s, True))
        return False


def _azgo_version() -> str:
    try:
        from importlib.metadata import version
        return version("azgo")
    except Exception:  # pragma: no cover - not installed as a package
        return "unknown"


def serve(server: AnalysisServer, stdin=None) -> None:
    """Read query lines from ``stdin`` (binary) until end of input, then finish (or not) and return."""
    stream = stdin if stdin is not None else sys.stdin.buffer
    for line in stream:
        server.submit(line)
    server.close(wait=not server.config.quit_without_waiting)
