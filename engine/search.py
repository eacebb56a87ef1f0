"""The search driver: batched PUCT playouts with tree reuse, limits, time budget, pondering, analysis.

``Searcher`` owns one tree. ``search(game, limits)`` first moves the root down the tree to the game's
current position when that position was explored (after our move and the opponent's reply), else
starts fresh; then runs playouts in batches of ``config.batch_size`` leaves per network call until a
limit is reached or ``stop`` is set. ``ponder(game)`` runs the same search in a background thread on
the opponent's time; ``stop_pondering()`` ends it at once (within one batch).

Threads: with ``config.threads`` > 1 that many threads share the tree, each with one batch in the
network at a time: gathering (selection under virtual loss, board rebuilding, encoding) and backing up
run under one lock, the network call outside it (onnxruntime releases the GIL).

Stepwise: ``begin`` / ``gather`` / ``encode_leaves`` / ``complete`` are the same steps for callers that
batch many searches into one network call (self-play, the JSON analysis server).

Memory: nodes are compact (``azgo.engine.mcts``); full boards live in a bounded LRU cache; with
``config.max_memory_mb`` the search stops growing the tree when the process reaches the cap.

The evaluator is anything with ``evaluate(planes float32[B, C, N, N], legal bool[B, N*N+1], keys)``
returning ``policy [B, N*N+1]``, ``value [B]`` (side to move), ``ownership [B, N*N]`` or None and
``score [B]`` or None (``azgo.nets.evaluator.OnnxEvaluator`` does).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable

import numpy as np

from .board import BLACK, Board
from .mcts import Node, SearchConfig
from .search_driver import DriverMixin
from .search_expand import ExpandMixin
from .search_ponder import PonderMixin
from .search_report import ReportMixin
from .search_steps import StepsMixin
from .search_tree import TreeMixin
from .search_types import Limits, MoveInfo, SearchResult  # noqa: F401  (the search's API, imported from here)


class Searcher(TreeMixin, ExpandMixin, StepsMixin, DriverMixin, ReportMixin, PonderMixin):
    """One search tree over one game; ``search`` may run ``config.threads`` threads on it. Not
    thread-safe for callers except through ``ponder``/``stop_pondering``.

    Its parts, one module each: tree reuse and the board cache (``search_tree``), leaf expansion and root
    preparation (``search_expand``), the stepwise interface and playouts (``search_steps``), the threaded
    driver with its limits (``search_driver``), candidates and the move choice (``search_report``),
    pondering (``search_ponder``)."""

    def __init__(self, evaluator, config: SearchConfig = SearchConfig(), seed: int | None = None,
                 now: Callable[[], float] = time.monotonic, has_score: bool | None = None):
        self.evaluator = evaluator
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.now = now
        self.root: Node | None = None
        self.root_policy: np.ndarray | None = None  # the network's policy at the root (see expand_leaves)
        self.root_key: tuple | None = None
        self.komi = 7.5
        self.history: list[Board] = []  # positions before the root, most recent first
        self._stop = threading.Event()
        self._ponder_thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one search at a time
        self._tree = threading.Condition()  # the tree, between a search's threads
        self.has_score = has_score
        self.has_ownership: bool | None = None
        self._root_komi: float | None = None
        self.blocked: np.ndarray | None = None  # root edges excluded from this search (avoid/allow)
        cache = getattr(getattr(evaluator, "config", None), "cache_size", 1)
        self._want_keys = bool(cache)  # cache keys cost a tuple hash per leaf: skip them without a cache
        self._boards: OrderedDict[Node, None] = OrderedDict()  # nodes holding a cached board, LRU first
        self._board_cap = 64
        self._in_flight: dict[Node, tuple] = {}  # leaves waiting for the network -> (cells, hashes, depth)
        self._root_to_move = BLACK
        self.memory_capped = False  # the last search stopped at config.max_memory_mb
        self._rss_checked = 0.0
        self._noise = False
        self._exclude: set[int] | None = None
        self._prepared = False
        self._forced_k = 0.0
        self._gumbel_args: tuple[int, int] | None = None
        self.gumbel = None  # the Gumbel root schedule of the current stepwise search (begin(gumbel=...))
