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

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import planes as P
from .board import BLACK, Board
from .features import encode_batch_into
from .ladder import ladder_attacks, losing_escapes
from .mcts import Node, SearchConfig, exact_value, lower_bounds, select, select_compact
from .memory import release_memory, rss_mb


@dataclass(frozen=True)
class Limits:
    """When to stop: total root ``visits`` (reused ones count), new ``playouts``, wall ``seconds``.

    None = no such limit. A time-control budget is passed to ``search`` separately and combines with
    these (the first limit reached stops the search). ``early_stop``: stop a timed search when no
    other move can catch the leader in the time left.
    """

    visits: int | None = None
    playouts: int | None = None
    seconds: float | None = None
    early_stop: bool = True

    def __post_init__(self) -> None:
        for name in ("visits", "playouts"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.seconds is not None and not (self.seconds > 0):
            raise ValueError("seconds must be > 0")


@dataclass(frozen=True)
class MoveInfo:
    """One root candidate. ``winrate`` and ``lcb`` are for the side to move at the root, in [0, 1];
    ``score_lead`` in points for the side to move (None without a score head)."""

    move: int
    visits: int
    winrate: float
    prior: float
    lcb: float
    pv: list[int]
    score_lead: float | None = None


@dataclass
class SearchResult:
    """What a search found; ``move`` is the choice for play (see ``choose_move``)."""

    move: int
    winrate: float
    score_lead: float | None
    visits: int
    playouts: int
    reused_visits: int
    seconds: float
    nn_seconds: float
    candidates: list[MoveInfo] = field(default_factory=list)
    ownership: np.ndarray | None = None
    stopped_early: bool = False
    memory_capped: bool = False

    @property
    def playouts_per_second(self) -> float:
        return self.playouts / self.seconds if self.seconds > 0 else 0.0


class _Run:
    """The shared state of one search across its threads."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.playouts = 0
        self.nn = 0.0
        self.stopping = False
        self.error: BaseException | None = None


class Searcher:
    """One search tree over one game; ``search`` may run ``config.threads`` threads on it. Not
    thread-safe for callers except through ``ponder``/``stop_pondering``."""

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

    # ---------------------------------------------------------------- tree reuse
    def set_game(self, game, reuse: bool = True) -> int:
        """Make the game's current position the root, keeping the explored subtree if there is one.

        Returns the visits kept (0 for a fresh tree). Under ``config.max_memory_mb`` the memory the
        discarded part of the tree held is given back to the system first; if the process is still
        over the cap, the tree starts afresh.
        """
        start = game.boards[0].hash
        moves = tuple(game.moves)
        board = game.board
        self.komi = game.komi
        self.history = game.boards[-2::-1][: P.HISTORY - 1]
        node = None
        if reuse and self.root is not None and self.root_key is not None and game.komi == self._root_komi:
            r_start, r_moves = self.root_key
            if r_start == start and moves[: len(r_moves)] == r_moves:
                node = self.root
                to_move = self._root_to_move
                for colour, move in moves[len(r_moves):]:
                    if move is None or colour != to_move or not node.expanded or move not in node.children:
                        node = None
                        break
                    node = node.children[move]
                    to_move = 3 - to_move
                if node is not None and node is not self.root and not (
                        node.expanded and to_move == board.to_move and node.cells is not None and node.hash == board.hash
                        and node.passes == board.passes):
                    node = None
                if node is self.root and self._root_to_move != board.to_move:
                    node = None
        self._drop_boards()
        if node is not self.root:
            self.root = None  # let the rest of the old tree go
            self.root_policy = None  # float32 [N*N+1]: the network's policy at the root, once evaluated here
        if node is not None and self.config.max_memory_mb is not None:
            release_memory()
            rss = rss_mb()
            if rss is not None and rss >= self.config.max_memory_mb:
                node = None  # what is kept is already too much: start afresh
                release_memory()
        if node is None:
            node = Node(passes=board.passes)
        node.board = board.copy()
        node.cells = bytes(board.cells)
        node.hash = board.hash
        node.passes = board.passes
        node.terminal = None  # a game after two passes can go on (GTP play, kgs-genmove_cleanup)
        if not node.to_dense() or (node.expanded and node.ownership is None and self.has_ownership):
            node.expanded = False  # the root needs every legal move and its ownership: ask the network again
        self.root = node
        self.root_key = (start, moves)
        self._root_komi = game.komi
        self._root_to_move = board.to_move
        self._board_cap = max(16, int(self.config.board_cache_mb * 2 ** 20 / _board_bytes(board)))
        return node.visits

    def _drop_boards(self) -> None:
        for n in self._boards:
            n.board = None
        self._boards.clear()
        self._in_flight.clear()

    # ---------------------------------------------------------------- boards
    def _build_board(self, path: list[tuple[Node, int]], node: Node) -> Board:
        """The full board of ``node`` (the end of ``path``, the (node, edge) pairs from the root): a copy
        of the deepest cached board on the path with the moves from there replayed. Every node of the
        path (they all have children now) gets its ``cells`` and ``hash`` on the way."""
        j = len(path) - 1
        while path[j][0].board is None:
            j -= 1
        start = path[j][0]
        if start in self._boards:
            self._boards.move_to_end(start)
        b = start.board.copy()
        if start.cells is None:
            start.cells = bytes(b.cells)
            start.hash = b.hash
        for k in range(j, len(path)):
            n, i = path[k]
            b.play_unchecked(int(n.moves[i]))
            if k + 1 < len(path):
                nxt = path[k + 1][0]
                if nxt.cells is None:
                    nxt.cells = bytes(b.cells)
                    nxt.hash = b.hash
        return b

    def _cache_board(self, node: Node) -> None:
        boards = self._boards
        boards[node] = None
        if len(boards) > self._board_cap:
            old, _ = boards.popitem(last=False)
            if old is not self.root:
                old.board = None

    def tree_nodes(self) -> int:
        """Nodes in the tree under the root (a walk of the whole tree: for tests and benchmarks)."""
        if self.root is None:
            return 0
        count = 0
        stack = [self.root]
        while stack:
            n = stack.pop()
            count += 1
            stack.extend(n.children.values())
        return count

    # ---------------------------------------------------------------- evaluation
    def encode_leaves(self, nodes: list[Node], planes: np.ndarray, legal: np.ndarray, offset: int = 0) -> list[int]:
        """Write the input planes and legal masks of ``nodes`` into rows ``offset...`` of ``planes``
        (zeroed, ``float32[B, C, N, N]``) and ``legal`` (``bool[B, N*N+1]``); returns cache keys.
        Every node must hold its board (``gather`` leaves them so)."""
        keys = []
        komi = self.komi
        boards = []
        cells = []
        for k, node in enumerate(nodes, start=offset):
            hist, hashes, _ = self._in_flight[node]
            b = node.board
            boards.append(b)
            cells.append(hist)
            legal[k] = b.legal_mask()
            if self._want_keys:
                keys.append(hash((tuple(hashes), b.to_move, b.ko_move, komi)))
        if boards:
            encode_batch_into(planes[offset:offset + len(boards)], boards, cells, komi)
        return keys

    def expand_leaves(self, nodes: list[Node], ev, legal: np.ndarray, offset: int = 0) -> None:
        """Expand ``nodes`` from rows ``offset...`` of an evaluation (see ``encode_leaves``)."""
        if self.has_score is None:
            self.has_score = ev.score is not None
        if self.has_ownership is None:
            self.has_ownership = ev.ownership is not None
        inner = self.config.inner_moves
        root = self.root
        rows = slice(offset, offset + len(nodes))
        mask = legal[rows]
        count = mask.sum(1)
        raw = ev.policy[rows]
        if self.config.ladder_prior < 1.0 or self.config.ladder_capture_prior > 0.0:
            raw = self._ladder_priors(nodes, raw, mask)
        policy = np.where(mask, raw, -1.0).astype(np.float32)
        keep = min(inner, policy.shape[1]) if inner else policy.shape[1]
        if keep < policy.shape[1]:  # the ``keep`` best of every row, then sorted
            top = np.argpartition(-policy, keep - 1, axis=1)[:, :keep]
            top = np.take_along_axis(top, np.argsort(-np.take_along_axis(policy, top, 1), axis=1, kind="stable"), 1)
        else:
            top = np.argsort(-policy, axis=1, kind="stable")
        total = np.where(mask, policy, 0.0).sum(1)
        top_p = (np.take_along_axis(policy, top, 1) / np.maximum(total, 1e-30)[:, None]).astype(np.float32)
        top = top.astype(np.int16)
        values = ev.value[rows].tolist()
        scores = ev.score[rows].tolist() if ev.score is not None else [0.0] * len(nodes)
        for k, node in enumerate(nodes):
            depth = self._in_flight[node][2]
            own = None
            if ev.ownership is not None:
                if depth == 0:
                    own = np.array(ev.ownership[offset + k], dtype=np.float32)
                elif depth <= self.config.ownership_depth:  # where analysis reports it
                    own = np.array(ev.ownership[offset + k], dtype=np.float16)
            n_legal = int(count[k])
            if node.dense or node.st is not None or total[k] <= 0:
                node.expand(np.flatnonzero(mask[k]), raw[k], float(values[k]), float(scores[k]),
                            own, inner)
            else:
                kk = min(keep, n_legal)
                node.expand_top(top[k, :kk], top_p[k, :kk], kk < n_legal, values[k], scores[k], own)
            if node is root:  # the network's own policy here (before ladder reading), for self-play's AZK
                self.root_policy = np.array(ev.policy[offset + k], dtype=np.float32)
            else:
                self._cache_board(node)

    def _ladder_priors(self, nodes: list[Node], policy: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``policy`` (rows of ``nodes``) with ladder reading applied (``azgo.engine.ladder``): every losing
        escape's prior multiplied by ``config.ladder_prior``, every winning ladder atari raised to at least
        ``config.ladder_capture_prior`` of the row's legal mass, the row renormalised. A copy where anything
        changed (the evaluator's arrays may be cached), else ``policy`` itself."""
        out = policy
        factor = self.config.ladder_prior
        floor = self.config.ladder_capture_prior
        for k, node in enumerate(nodes):
            b = node.board
            escapes = losing_escapes(b) if factor < 1.0 else []
            attacks = ladder_attacks(b) if floor > 0.0 else []
            if not escapes and not attacks:
                continue
            if out is policy:
                out = np.array(policy, dtype=np.float32)
            row = out[k]
            before = float(row[mask[k]].sum())
            if escapes:
                row[escapes] *= factor
            if attacks:
                row[attacks] = np.maximum(row[attacks], floor * before)
            after = float(row[mask[k]].sum())
            if after > 0:
                row *= before / after
        return out

    def _evaluate_root(self) -> float:
        """Evaluate and expand the root; returns seconds spent inside the network call."""
        nodes = [self.root]
        self._in_flight[self.root] = self._history([], self.root)
        planes, legal, keys = self._encode(nodes)
        t = time.perf_counter()
        ev = self.evaluator.evaluate(planes, legal, keys or None)
        spent = time.perf_counter() - t
        self.expand_leaves(nodes, ev, legal)
        del self._in_flight[self.root]
        return spent

    def _history(self, path: list[tuple[Node, int]], leaf: Node) -> tuple:
        """(stones, hashes, depth) of ``leaf`` and the positions before it, newest first (at most
        ``HISTORY``), for ``encode_leaves``."""
        b = leaf.board
        cells = [leaf.cells if leaf.cells is not None else bytes(b.cells)]
        hashes = [b.hash]
        j = len(path) - 1
        while j >= 0 and len(cells) < P.HISTORY:
            n = path[j][0]
            if n.cells is None:  # a parent whose board came from the cache
                n.cells = bytes(n.board.cells)
                n.hash = n.board.hash
            cells.append(n.cells)
            hashes.append(n.hash)
            j -= 1
        for b in self.history[: P.HISTORY - len(cells)]:
            cells.append(b.cells)
            hashes.append(b.hash)
        return cells, hashes, len(path)

    def _encode(self, nodes: list[Node]):
        size = self.root.board.size
        planes = np.zeros((len(nodes), P.NUM_PLANES, size, size), dtype=np.float32)
        legal = np.empty((len(nodes), size * size + 1), dtype=bool)
        keys = self.encode_leaves(nodes, planes, legal)
        return planes, legal, keys

    # ---------------------------------------------------------------- root preparation
    def prepare_root(self, noise: bool = False, exclude: set[int] | None = None) -> None:
        """Set the expanded root's search prior (network prior, root temperature, Dirichlet noise
        when ``noise``) and the root moves ``exclude``d from this search (ignored if it would exclude
        every move). Called once per search, after the root has been evaluated."""
        self._prepare_root(noise)
        self.blocked = None
        root = self.root
        if exclude and root.expanded:
            blocked = np.isin(root.moves, np.fromiter(exclude, dtype=np.int64))
            self.blocked = blocked if blocked.any() and not blocked.all() else None

    def _prepare_root(self, noise: bool) -> None:
        root = self.root
        cfg = self.config
        prior = root.raw_prior
        if cfg.root_policy_temperature != 1.0:
            logits = np.log(np.maximum(prior, 1e-12)) / cfg.root_policy_temperature
            logits -= logits.max()
            prior = np.exp(logits)
            prior /= prior.sum()
        if noise and cfg.noise_fraction > 0 and len(prior) > 1:
            alpha = cfg.dirichlet_total / len(prior)
            eta = self.rng.dirichlet(np.full(len(prior), alpha))
            prior = (1 - cfg.noise_fraction) * prior + cfg.noise_fraction * eta
        root.prior = prior

    # ---------------------------------------------------------------- stepwise search
    def begin(self, game, noise: bool = False, reuse: bool = True, exclude: set[int] | None = None) -> int:
        """Start a search that the caller drives in steps, the one batching interface of play,
        self-play and the analysis server (which put the leaves of many searches into one network
        call): ``gather`` -> ``encode_leaves`` -> the network -> ``complete``, until the caller's limit.
        ``search`` runs the same steps itself. The root is prepared (``noise``: Dirichlet noise and
        forced playouts; ``exclude``: avoided moves) as soon as it has been evaluated. Returns the
        visits kept from the last tree."""
        reused = self.set_game(game, reuse=reuse)
        self._noise = noise
        self._exclude = exclude
        self._prepared = False
        self._forced_k = self.config.forced_playouts_k if noise else 0.0
        self._maybe_prepare()
        return reused

    def _maybe_prepare(self) -> None:
        if not self._prepared and self.root.expanded:
            self.prepare_root(self._noise, self._exclude)
            self._prepared = True

    def complete(self, pending: list[tuple[list, Node]], ev, legal: np.ndarray, offset: int = 0) -> int:
        """Expand the ``pending`` leaves of ``gather`` from rows ``offset...`` of a network evaluation
        (see ``encode_leaves``) and back them up; returns the playouts completed."""
        self.expand_leaves([leaf for _, leaf in pending], ev, legal, offset)
        done = self.finish(pending)
        self._maybe_prepare()
        return done

    @property
    def searching_done(self) -> bool:
        """True when the root is a finished game or has a single legal move already evaluated."""
        root = self.root
        return root.terminal is not None or (root.expanded and len(root.moves) == 1 and root.visits >= 2)

    # ---------------------------------------------------------------- playouts
    def gather(self, want: int, forced_k: float | None = None) -> tuple[list[tuple[list, Node]], int]:
        """Select up to ``want`` leaves under virtual loss (each with its board built). Finished games
        found on the way are backed up at once. Returns (pending (path, leaf) pairs that need the
        network, playouts completed). A leaf already waiting for the network ends the gathering.
        ``forced_k`` (default: what ``begin`` set) are the forced playouts at the root."""
        if forced_k is None:
            forced_k = self._forced_k if self._prepared else 0.0
        cfg = self.config
        vl = cfg.virtual_loss
        root = self.root
        komi = self.komi
        blocked = self.blocked
        c_puct, base, red = cfg.c_puct, cfg.c_puct_base, cfg.fpu_reduction
        pass_move = root.board.pass_move
        in_flight = self._in_flight
        pending: list[tuple[list, Node]] = []
        done = 0
        lam = cfg.score_utility if self.has_score and root.expanded else 0.0
        if lam > 0:  # (weight, centre, scale) for the side to move at even and at odd depths
            scale = cfg.score_utility_scale or float(root.board.size)
            ours, theirs = (lam, root.score, scale), (lam, -root.score, scale)
        for _ in range(want):
            node = root
            path: list[tuple[Node, int]] = []
            utility = ours if lam > 0 else None
            while node.expanded and node.terminal is None:
                if node.dense:
                    i = select(node, cfg, node is root, forced_k if node is root else 0.0,
                               blocked if node is root else None, utility)
                else:
                    i = select_compact(node, c_puct, base, red, utility)
                    if i < 0:
                        break  # every kept move tried: this node goes to the network again
                if node.dense:
                    node.VL[i] += vl
                else:
                    node.st[6 * i + 5] += vl
                path.append((node, i))
                node = node.child(i, pass_move)
                if lam > 0:
                    utility = theirs if utility is ours else ours
            if node.terminal is None and node.passes >= 2:
                b = self._build_board(path, node)
                node.terminal, node.score = exact_value(b, komi)
            if node.terminal is not None:
                self._backup(path, node, node.terminal, node.score, vl)
                done += 1
                continue
            if node in in_flight:  # collision: this leaf is already waiting for the network
                for n, i in path:
                    n.add_virtual_loss(i, -vl)
                break
            if node.board is None:
                node.board = self._build_board(path, node)
            in_flight[node] = self._history(path, node)
            pending.append((path, node))
        return pending, done

    def finish(self, pending: list[tuple[list, Node]]) -> int:
        """Back up leaves that ``expand_leaves`` has expanded; returns the playouts completed."""
        vl = self.config.virtual_loss
        in_flight = self._in_flight
        for path, leaf in pending:
            in_flight.pop(leaf, None)
            self._backup(path, leaf, leaf.value, leaf.score, vl)
        return len(pending)

    def abandon(self, pending: list[tuple[list, Node]]) -> None:
        """Take back the virtual loss of leaves that will not be evaluated (an error in the network)."""
        vl = self.config.virtual_loss
        for path, leaf in pending:
            self._in_flight.pop(leaf, None)
            for n, i in path:
                n.add_virtual_loss(i, -vl)

    @staticmethod
    def _backup(path: list[tuple[Node, int]], leaf: Node, value: float, score: float, vl: float) -> None:
        leaf.visits += 1
        leaf.value_sum += value
        v, s = -value, -score
        for node, i in reversed(path):
            if node.dense:
                node.VL[i] -= vl
                node.N[i] += 1
                node.W[i] += v
                node.W2[i] += v * v
                node.S[i] += s
                node.S2[i] += s * s
            else:
                st = node.st
                j = 6 * i
                st[j] += 1
                st[j + 1] += v
                st[j + 2] += v * v
                st[j + 3] += s
                st[j + 4] += s * s
                st[j + 5] -= vl
            node.visits += 1
            node.value_sum += v
            v, s = -v, -s

    # ---------------------------------------------------------------- the search
    def search(self, game, limits: Limits = Limits(visits=200), budget: float | None = None,
               stop: threading.Event | None = None, callback: Callable[[list[MoveInfo]], None] | None = None,
               interval: float = 0.5, noise: bool = False, reuse: bool = True,
               temperature: float = 0.0, exclude: set[int] | None = None) -> SearchResult:
        """Search the game's current position and return the result (the move is not played).

        ``budget``: seconds from a time control (None = none). ``stop``: an Event that ends the
        search. ``callback(candidates)`` is called every ``interval`` seconds (analysis). ``noise``:
        root Dirichlet noise and forced playouts (self-play). ``temperature`` > 0 samples the move
        by visits^(1/T) instead of choosing the best. ``exclude``: root moves not to consider
        (GTP ``avoid``/``allow``; ignored if it would exclude every move).
        With ``config.threads`` > 1, that many threads gather and evaluate batches on the one tree.
        """
        with self._lock:
            return self._search(game, limits, budget, stop, callback, interval, noise, reuse, temperature,
                                exclude)

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

    def _search(self, game, limits, budget, stop, callback, interval, noise, reuse, temperature, exclude):
        cfg = self.config
        t0 = self.now()
        reused = self.begin(game, noise=noise, reuse=reuse, exclude=exclude)
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

    # ---------------------------------------------------------------- results
    def candidates(self, max_moves: int | None = None) -> list[MoveInfo]:
        """Root moves with visits, best first (by visits, then prior). Empty before expansion."""
        root = self.root
        if root is None or not root.expanded:
            return []
        order = np.lexsort((-root.prior, -root.N))
        out = []
        cfg = self.config
        lcbs = lower_bounds(root.N, root.W, root.W2, cfg.lcb_stdevs)
        for i in order:
            if max_moves is not None and len(out) >= max_moves:
                break
            n = int(root.N[i])
            if n == 0:
                break
            if self.blocked is not None and self.blocked[i]:
                continue
            mean = root.W[i] / n
            lcb = lcbs[i]
            out.append(MoveInfo(
                move=int(root.moves[i]), visits=n, winrate=float((mean + 1) / 2), prior=float(root.raw_prior[i]),
                lcb=float(max(0.0, (lcb + 1) / 2)), pv=self._pv(root, i),
                score_lead=float(root.S[i] / n) if self.has_score else None))
        return out

    @staticmethod
    def _pv(node: Node, i: int, max_len: int = 30) -> list[int]:
        return Searcher.pv_with_visits(node, i, max_len)[0]

    @staticmethod
    def pv_with_visits(node: Node, i: int, max_len: int = 30) -> tuple[list[int], list[int]]:
        """The principal variation starting with edge ``i`` of ``node`` (most visited replies) and
        the visits of each of its moves."""
        pv, visits = [int(node.moves[i])], [int(node.N[i])]
        child = node.children.get(pv[0])
        while child is not None and child.expanded and len(pv) < max_len:
            N = child.visit_counts()
            if not N:
                break
            j = max(range(len(N)), key=N.__getitem__)
            if N[j] <= 0:
                break
            pv.append(int(child.moves[j]))
            visits.append(int(N[j]))
            child = child.children.get(pv[-1])
        return pv, visits

    def choose_move(self, temperature: float = 0.0) -> int:
        """The move to play from the root: sampled by visits^(1/T) if T > 0, else LCB or most visits."""
        root = self.root
        N = root.N
        if N is not None and self.blocked is not None:
            N = np.where(self.blocked, 0.0, N)
        if N is None or N.sum() == 0:
            return int(root.moves[np.argmax(root.prior)]) if root.expanded else root.board.pass_move
        if temperature > 0:
            w = N ** (1.0 / temperature)
            return int(root.moves[self.rng.choice(len(N), p=w / w.sum())])
        best = int(np.argmax(N))
        cfg = self.config
        if cfg.lcb:
            mask = (N >= max(2.0, cfg.lcb_min_visit_fraction * N[best]))
            if mask.sum() > 1:
                idx = np.flatnonzero(mask)
                best = int(idx[np.argmax(lower_bounds(N[idx], root.W[idx], root.W2[idx], cfg.lcb_stdevs))])
        return int(root.moves[best])

    # ---------------------------------------------------------------- pondering
    def ponder(self, game, max_visits: int = 1_000_000) -> None:
        """Search the current position in a background thread until ``stop_pondering``."""
        self.stop_pondering()
        self._stop.clear()
        snapshot = _GameView(game)
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


class _GameView:
    """A frozen copy of the parts of a Game the search reads, so pondering never sees later changes."""

    def __init__(self, game):
        self.boards = list(game.boards)
        self.moves = list(game.moves)
        self.komi = game.komi
        self.board = game.boards[-1]


def _board_bytes(board: Board) -> int:
    """About what one copy of ``board`` holds in memory (five lists of its cells, the cells, the
    superko history set)."""
    return 45 * board.g.ncells + 48 * len(board.history) + 1000
