"""The search driver: batched PUCT playouts with tree reuse, limits, time budget, pondering, analysis.

``Searcher`` owns one tree. ``search(game, limits)`` first moves the root down the tree to the game's
current position when that position was explored (after our move and the opponent's reply), else
starts fresh; then runs playouts in batches of ``config.batch_size`` leaves per network call until a
limit is reached or ``stop`` is set. ``ponder(game)`` runs the same search in a background thread on
the opponent's time; ``stop_pondering()`` ends it at once (within one batch).

The evaluator is anything with ``evaluate(planes float32[B, C, N, N], legal bool[B, N*N+1], keys)``
returning ``policy [B, N*N+1]``, ``value [B]`` (side to move), ``ownership [B, N*N]`` or None and
``score [B]`` or None (``azgo.nets.evaluator.OnnxEvaluator`` does).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import planes as P
from .board import BLACK, Board
from .features import encode_into
from .mcts import Node, SearchConfig, select
from .scoring import area_score


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

    @property
    def playouts_per_second(self) -> float:
        return self.playouts / self.seconds if self.seconds > 0 else 0.0


class Searcher:
    """One search tree over one game; not thread-safe except through ``ponder``/``stop_pondering``."""

    def __init__(self, evaluator, config: SearchConfig = SearchConfig(), seed: int | None = None,
                 now: Callable[[], float] = time.monotonic, has_score: bool | None = None):
        self.evaluator = evaluator
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.now = now
        self.root: Node | None = None
        self.root_key: tuple | None = None
        self.komi = 7.5
        self.history: list[Board] = []  # positions before the root, most recent first
        self._stop = threading.Event()
        self._ponder_thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.has_score = has_score
        self._root_komi: float | None = None
        self.blocked: np.ndarray | None = None  # root edges excluded from this search (avoid/allow)
        cache = getattr(getattr(evaluator, "config", None), "cache_size", 1)
        self._want_keys = bool(cache)  # cache keys cost a tuple hash per leaf: skip them without a cache

    # ---------------------------------------------------------------- tree reuse
    def set_game(self, game, reuse: bool = True) -> int:
        """Make the game's current position the root, keeping the explored subtree if there is one.

        Returns the visits kept (0 for a fresh tree).
        """
        start = game.boards[0].hash
        moves = tuple(game.moves)
        self.komi = game.komi
        self.history = game.boards[-2::-1][: P.HISTORY - 1]
        node = None
        if reuse and self.root is not None and self.root_key is not None and game.komi == self._root_komi:
            r_start, r_moves = self.root_key
            if r_start == start and moves[: len(r_moves)] == r_moves:
                node = self.root
                for colour, move in moves[len(r_moves):]:
                    if move is None or colour != node.board.to_move or move not in node.children:
                        node = None
                        break
                    node = node.children[move]
                if node is not None and not (node.expanded and node.board.hash == game.board.hash
                                             and node.board.to_move == game.board.to_move):
                    node = None
        if node is None:
            node = Node(game.board.copy())
        node.parent = None
        self.root = node
        self.root_key = (start, moves)
        self._root_komi = game.komi
        return node.visits

    def advance(self, game) -> int:
        """Alias of ``set_game`` (after a move was played in ``game``)."""
        return self.set_game(game)

    # ---------------------------------------------------------------- evaluation
    def _boards(self, node: Node) -> list[Board]:
        out: list[Board] = []
        n = node
        while n is not None and len(out) < P.HISTORY:
            out.append(n.board)
            n = n.parent
        if len(out) < P.HISTORY:
            out.extend(self.history[: P.HISTORY - len(out)])
        return out

    def encode_leaves(self, nodes: list[Node], planes: np.ndarray, legal: np.ndarray, offset: int = 0) -> list[int]:
        """Write the input planes and legal masks of ``nodes`` into rows ``offset...`` of ``planes``
        (zeroed, ``float32[B, C, N, N]``) and ``legal`` (``bool[B, N*N+1]``); returns cache keys."""
        keys = []
        for k, node in enumerate(nodes, start=offset):
            boards = self._boards(node)
            encode_into(planes[k], boards, self.komi)
            b = node.board
            legal[k] = b.legal_mask()
            if self._want_keys:
                keys.append(hash((tuple(x.hash for x in boards), b.to_move, b.ko_move, self.komi)))
        return keys

    def expand_leaves(self, nodes: list[Node], ev, legal: np.ndarray, offset: int = 0) -> None:
        """Expand ``nodes`` from rows ``offset...`` of an evaluation (see ``encode_leaves``)."""
        if self.has_score is None:
            self.has_score = ev.score is not None
        for k, node in enumerate(nodes, start=offset):
            node.expand(np.flatnonzero(legal[k]), ev.policy[k], float(ev.value[k]),
                        float(ev.score[k]) if ev.score is not None else 0.0,
                        ev.ownership[k] if ev.ownership is not None else None)

    def _evaluate(self, nodes: list[Node]) -> float:
        """Evaluate and expand ``nodes``; returns seconds spent inside the network call."""
        size = nodes[0].board.size
        planes = np.zeros((len(nodes), P.NUM_PLANES, size, size), dtype=np.float32)
        legal = np.empty((len(nodes), size * size + 1), dtype=bool)
        keys = self.encode_leaves(nodes, planes, legal)
        t = time.perf_counter()
        ev = self.evaluator.evaluate(planes, legal, keys or None)
        spent = time.perf_counter() - t
        self.expand_leaves(nodes, ev, legal)
        return spent

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

    # ---------------------------------------------------------------- playouts
    def gather(self, want: int, forced_k: float = 0.0) -> tuple[list[tuple[list, Node]], int]:
        """Select up to ``want`` leaves under virtual loss. Finished games found on the way are backed
        up at once. Returns (pending (path, leaf) pairs that need the network, playouts completed)."""
        cfg = self.config
        vl = cfg.virtual_loss
        root = self.root
        komi = self.komi
        pending: list[tuple[list, Node]] = []
        pending_ids: set[int] = set()
        done = 0
        for _ in range(want):
            node = root
            path: list[tuple[Node, int]] = []
            while node.expanded and node.terminal is None:
                if node is root:
                    i = select(node, cfg, True, forced_k, self.blocked)
                else:
                    i = select(node, cfg, False, 0.0)
                node.VL[i] += vl
                path.append((node, i))
                node = node.child(i, komi)
            if node.terminal is not None:
                self._backup(path, node, node.terminal, node.score, vl)
                done += 1
                continue
            if id(node) in pending_ids:  # collision: this leaf is already waiting for the network
                for n, i in path:
                    n.VL[i] -= vl
                break
            pending_ids.add(id(node))
            pending.append((path, node))
        return pending, done

    def finish(self, pending: list[tuple[list, Node]]) -> int:
        """Back up leaves that ``expand_leaves`` has expanded; returns the playouts completed."""
        vl = self.config.virtual_loss
        for path, leaf in pending:
            self._backup(path, leaf, leaf.value, leaf.score, vl)
        return len(pending)

    def _playout_batch(self, want: int, forced_k: float) -> tuple[int, float]:
        """Run up to ``want`` playouts sharing one network call. Returns (playouts, nn seconds)."""
        pending, done = self.gather(want, forced_k)
        spent = 0.0
        if pending:
            spent = self._evaluate([leaf for _, leaf in pending])
            done += self.finish(pending)
        return done, spent

    @staticmethod
    def _backup(path: list[tuple[Node, int]], leaf: Node, value: float, score: float, vl: float) -> None:
        leaf.visits += 1
        leaf.value_sum += value
        v, s = -value, -score
        for node, i in reversed(path):
            node.VL[i] -= vl
            node.N[i] += 1
            node.W[i] += v
            node.W2[i] += v * v
            node.S[i] += s
            node.S2[i] += s * s
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
        """
        with self._lock:
            return self._search(game, limits, budget, stop, callback, interval, noise, reuse, temperature,
                                exclude)

    def _search(self, game, limits, budget, stop, callback, interval, noise, reuse, temperature, exclude):
        cfg = self.config
        t0 = self.now()
        reused = self.set_game(game, reuse=reuse)
        root = self.root
        nn = 0.0
        playouts = 0
        if root.terminal is None and not root.expanded:
            nn += self._evaluate([root])
            root.visits = 1
            root.value_sum = root.value
            playouts = 1
        self.prepare_root(noise, exclude)
        forced_k = cfg.forced_playouts_k if noise else 0.0
        deadline = math.inf
        if limits.seconds is not None:
            deadline = t0 + limits.seconds
        if budget is not None:
            deadline = min(deadline, t0 + budget)
        last_cb = t0
        stopped_early = False
        moves_available = root.moves is not None and len(root.moves) > 1
        while root.terminal is None:
            if stop is not None and stop.is_set():
                break
            visits = root.visits
            want = cfg.batch_size
            if limits.visits is not None:
                if visits >= limits.visits:
                    break
                want = min(want, limits.visits - visits)
            if limits.playouts is not None:
                if playouts >= limits.playouts:
                    break
                want = min(want, limits.playouts - playouts)
            now = self.now()
            if now >= deadline:
                break
            if (limits.early_stop and deadline < math.inf and moves_available and playouts >= 16
                    and now - t0 > 0.05):
                rate = playouts / (now - t0)
                n = np.sort(root.N)
                if len(n) > 1 and n[-2] + rate * (deadline - now) < n[-1]:
                    stopped_early = True
                    break
            done, spent = self._playout_batch(want, forced_k)
            nn += spent
            playouts += done
            if callback is not None and self.now() - last_cb >= interval:
                last_cb = self.now()
                callback(self.candidates())
        elapsed = self.now() - t0
        cands = self.candidates()
        if callback is not None:
            callback(cands)
        move = self.choose_move(temperature) if root.terminal is None else root.board.pass_move
        best = next((c for c in cands if c.move == move), None)
        winrate = best.winrate if best else (root.q() + 1) / 2
        lead = best.score_lead if best else None
        return SearchResult(
            move=move, winrate=winrate, score_lead=lead, visits=root.visits, playouts=playouts,
            reused_visits=reused, seconds=elapsed, nn_seconds=nn, candidates=cands,
            ownership=root.ownership, stopped_early=stopped_early)

    # ---------------------------------------------------------------- results
    def candidates(self, max_moves: int | None = None) -> list[MoveInfo]:
        """Root moves with visits, best first (by visits, then prior). Empty before expansion."""
        root = self.root
        if root is None or not root.expanded:
            return []
        order = np.lexsort((-root.prior, -root.N))
        out = []
        cfg = self.config
        for i in order:
            if max_moves is not None and len(out) >= max_moves:
                break
            n = int(root.N[i])
            if n == 0:
                break
            if self.blocked is not None and self.blocked[i]:
                continue
            mean = root.W[i] / n
            if n > 1:
                var = max(root.W2[i] / n - mean * mean, 0.0) * n / (n - 1)
                lcb = mean - cfg.lcb_stdevs * math.sqrt(var / n)
            else:
                lcb = -1.0
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
        while child is not None and child.expanded and len(pv) < max_len and child.N.sum() > 0:
            j = int(np.argmax(child.N))
            pv.append(int(child.moves[j]))
            visits.append(int(child.N[j]))
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
                mean = root.W[idx] / N[idx]
                var = np.maximum(root.W2[idx] / N[idx] - mean ** 2, 0.0) * N[idx] / (N[idx] - 1)
                lcb = mean - cfg.lcb_stdevs * np.sqrt(var / N[idx])
                best = int(idx[np.argmax(lcb)])
        return int(root.moves[best])

    def policy_target(self, prune: bool = True) -> np.ndarray:
        """Root visit counts ``float[N*N+1]``, with KataGo's forced-playout pruning when ``prune``.

        Every child but the most visited loses up to its forced playouts ``sqrt(k P total)`` as long
        as its PUCT value stays below the best child's; a child left with one visit or less is zeroed.
        """
        root = self.root
        n2 = root.board.size ** 2 + 1
        out = np.zeros(n2)
        N = root.N.copy()
        k = self.config.forced_playouts_k
        if prune and k > 0 and N.sum() > 0:
            total = N.sum()
            best = int(np.argmax(N))
            c = self.config.c_puct + math.log((1 + total + self.config.c_puct_base) / self.config.c_puct_base)
            sq = math.sqrt(total)
            q = np.where(N > 0, root.W / np.maximum(N, 1), -1.0)
            best_puct = q[best] + c * root.prior[best] * sq / (1 + N[best])
            forced = np.sqrt(k * root.prior * total)
            for i in range(len(N)):
                if i == best or N[i] == 0:
                    continue
                gap = best_puct - q[i]
                need = c * root.prior[i] * sq / gap - 1 if gap > 0 else N[i]
                new = max(N[i] - math.floor(forced[i]), math.ceil(need))
                new = min(new, N[i])
                N[i] = 0 if new <= 1 else new
        out[root.moves] = N
        return out

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


def pass_is_safe(board: Board, komi: float, color: int) -> bool:
    """Whether the area score of the board as it stands is a win for ``color``."""
    s = area_score(board, komi)
    return s > 0 if color == BLACK else s < 0


def apply_pass_rules(result: SearchResult, game) -> int:
    """Play-time passing rules: never pass while the board's area score says we lose; answer the
    opponent's pass with a pass when that wins on the board as it stands."""
    board = game.board
    me = board.to_move
    pass_move = board.pass_move
    if board.passes >= 1 and board.last_move == pass_move and pass_is_safe(board, game.komi, me):
        return pass_move
    if result.move == pass_move and not pass_is_safe(board, game.komi, me):
        for c in result.candidates:
            if c.move != pass_move:
                return c.move
        legal = [m for m in board.legal_moves() if m != pass_move]
        if legal:
            return legal[0]
    return result.move
