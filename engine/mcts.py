"""PUCT Monte-Carlo tree: compact nodes, selection, expansion, backup.

Perspective: every value is from the side to move at the node that owns the statistic. A node's
child statistics ``N``, ``W``, ``W2``, ``S``, ``S2``, ``VL`` describe the edges (moves) out of it, with
``W`` the summed value *for the player choosing the move* (the node's side to move). A leaf's network
value ``v`` is for the leaf's side to move, so it enters its parent's edge as ``-v`` and flips sign at
every level (negamax backup). Terminal positions (two passes) are scored by area rules and backed up
exactly.

Memory (a GTP engine analyses for hours): a node does not own a ``Board``. It keeps its position's
stones (``cells``, bytes) and hash for the network's history planes and cache keys; full boards are
rebuilt on the way down from the nearest ancestor that holds one (the search keeps a bounded
cache of them, see ``azgo.engine.search``). Two layouts:

* **compact** (every node but the root): ``moves`` and ``prior`` are ``array('h')``/``array('f')``
  sorted by prior, highest first, and at most ``SearchConfig.inner_moves`` long (``truncated`` when
  the position had more legal moves; the rest are fetched from the network again if all kept ones
  have been tried). Unvisited children all share the first-play-urgency value, so PUCT always tries
  them in prior order: the tried children are a prefix of ``moves`` and the statistics are Python
  lists of that prefix's length (a leaf has none).
* **dense** (the root): ``moves``/``prior``/``raw_prior`` and the statistics are numpy ``float64``
  arrays over every legal move, as the analysis outputs read them. ``to_dense`` converts a node that
  becomes the root.

``children`` maps a move index to its child node (an empty read-only mapping until the first one).
Nodes hold no parent pointer (no reference cycles: a discarded subtree is freed at once); the
search passes the path from the root down.
A node is *expanded* once the network has evaluated it (``moves``/``prior`` set).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .board import BLACK, Board
from .scoring import area_score

NO_CHILDREN = MappingProxyType({})
LADDERS_OFF = MappingProxyType({"ladder_prior": 1.0, "ladder_capture_prior": 0.0})  # SearchConfig without ladder reading


@dataclass(frozen=True)
class SearchConfig:
    """Search parameters (defaults for play; self-play switches noise and forced playouts on).

    c_puct: exploration constant; grows as ``c_puct + log((1 + N + base) / base)`` with ``c_puct_base``.
    fpu_reduction: unvisited children start at parent Q minus this times sqrt(visited prior mass)
        (``root_fpu_reduction`` at the root).
    batch_size: leaves gathered with virtual loss per network call (per search thread).
    virtual_loss: visits (each a loss) temporarily added to every edge on a pending path.
    noise_fraction, dirichlet_total: root Dirichlet noise weight, and the total concentration (the
        per-move alpha is ``dirichlet_total / number of legal moves``); 0 fraction = no noise.
    root_policy_temperature: the root prior is ``softmax(log p / T)`` (1 = unchanged).
    forced_playouts_k: KataGo forced playouts at the root, ``sqrt(k * P * total)``; 0 = off.
    lcb: choose the move with the best lower confidence bound among children with at least
        ``lcb_min_visit_fraction`` of the most visits (``lcb_stdevs`` standard errors); else most visits.
    threads: search threads sharing the tree, each with its own batch in the network at a time
        (onnxruntime releases the GIL, so they overlap on separate cores).
    inner_moves: moves (highest priors) a node below the root keeps; the root and its children keep
        every legal move. 0 = keep all.
    board_cache_mb: memory for the cache of full boards inside the tree (boards are rebuilt from the
        nearest cached ancestor; the root's board is always kept).
    max_memory_mb: resident-memory cap of the process (None = none): at the cap a search stops
        growing its tree and returns what it has (``SearchResult.memory_capped``).
    ownership_depth: nodes down to this depth keep their ownership (the root always does; 1: the
        root's children too, for analysis that reports them; 2: also after the tree moved one move on).
    ladder_prior: the network prior of a move that extends the side to move's chain out of atari into a
        ladder it loses (``azgo.engine.ladder.losing_escapes``) is multiplied by this, at every node the
        search expands (the row is renormalised); 1 = off. Lowered, not forbidden: the reader is narrow.
    score_utility: weight of the score lead in the utility that PUCT maximises (KataGo's idea; 0 = off,
        the value alone): an edge's utility is its mean value plus
        ``score_utility * (2/pi) * atan((mean score lead - centre) / scale)``, the centre being the
        root's network score lead at the start of the search (from the side to move at that node). Once
        the value saturates (a network sure it is winning, or losing, sees every move alike) the score still
        tells a move that keeps a group from one that loses it. Winrates, LCB and resignation still read the
        value alone.
    score_utility_scale: points over which the score term bends (0 = the board's side, 19 on 19x19).
    ladder_capture_prior: an atari that wins a ladder against the chain of the opponent's last move
        (``azgo.engine.ladder.ladder_attacks``) gets at least this share of the node's prior before the
        row is renormalised, so the search reads the chase to its end; 0 = off.
    gumbel_c_visit, gumbel_c_scale: the constants of ``sigma(q) = (c_visit + max visits) * c_scale * q`` in a
        Gumbel root search (``Searcher.begin(gumbel=...)``, `azgo.engine.gumbel`; 50 and 0.1 as in DeepMind's
        mctx, whose values are rescaled to [0, 1] as here).
    """

    c_puct: float = 1.1
    c_puct_base: float = 19652.0
    fpu_reduction: float = 0.2
    root_fpu_reduction: float = 0.1
    batch_size: int = 8
    virtual_loss: float = 1.0
    noise_fraction: float = 0.0
    dirichlet_total: float = 10.83
    root_policy_temperature: float = 1.0
    forced_playouts_k: float = 0.0
    lcb: bool = True
    lcb_stdevs: float = 5.0
    lcb_min_visit_fraction: float = 0.15
    threads: int = 1
    inner_moves: int = 32
    board_cache_mb: float = 6.0
    max_memory_mb: float | None = None
    ownership_depth: int = 1
    ladder_prior: float = 0.1
    ladder_capture_prior: float = 0.25
    score_utility: float = 0.0
    score_utility_scale: float = 0.0
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 0.1

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if self.c_puct <= 0:
            raise ValueError("c_puct must be > 0")
        if self.threads < 1:
            raise ValueError("threads must be >= 1")
        if self.inner_moves < 0 or self.board_cache_mb < 0:
            raise ValueError("inner_moves and board_cache_mb must be >= 0")
        if not 0.0 <= self.ladder_prior <= 1.0:
            raise ValueError(f"ladder_prior must be in [0, 1], got {self.ladder_prior}")
        if not 0.0 <= self.ladder_capture_prior <= 1.0:
            raise ValueError(f"ladder_capture_prior must be in [0, 1], got {self.ladder_capture_prior}")
        if not (self.score_utility >= 0 and self.score_utility_scale >= 0):
            raise ValueError("score_utility and score_utility_scale must be >= 0")
        if self.max_memory_mb is not None and not self.max_memory_mb > 0:
            raise ValueError("max_memory_mb must be > 0")


class Node:
    """One position in the tree (see the module docstring for the two layouts)."""

    __slots__ = (
        "move", "moves", "prior", "raw_prior", "st", "N", "W", "W2", "S", "S2", "VL", "children",
        "value", "score", "ownership", "terminal", "expanded", "visits", "value_sum", "board", "cells",
        "hash", "passes", "truncated", "dense",
    )

    def __init__(self, move: int = -1, passes: int = 0):
        self.move = move  # the move that led here from the parent (-1 for a root made from a game)
        self.moves = self.prior = self.raw_prior = None
        self.st: list | None = None  # compact: [N, W, W2, S, S2, VL] per tried edge, flat
        self.N = self.W = self.W2 = self.S = self.S2 = self.VL = None  # dense: numpy arrays
        self.children = NO_CHILDREN
        self.value = 0.0  # network value, side to move here
        self.score = 0.0  # network score lead, side to move here
        self.ownership: np.ndarray | None = None  # kept near the root only (see Searcher.expand_leaves)
        self.terminal: float | None = None
        self.expanded = False
        self.visits = 0  # evaluations backed up through this node (itself included)
        self.value_sum = 0.0  # their values, side to move here
        self.board: Board | None = None  # a full board, where cached
        self.cells: bytes | None = None  # this position's stones, once the node has children
        self.hash = 0  # this position's hash, with ``cells``
        self.passes = passes  # consecutive passes before this position
        self.truncated = False
        self.dense = False

    # ------------------------------------------------------------------ statistics
    def tried(self) -> int:
        """Edges with statistics (a prefix of ``moves`` for a compact node; every edge for a dense one)."""
        if self.dense:
            return len(self.N) if self.N is not None else 0
        return len(self.st) // 6 if self.st is not None else 0

    def edge(self, i: int) -> tuple[float, float, float, float, float, float]:
        """(N, W, W2, S, S2, VL) of edge ``i``."""
        if self.dense:
            return (self.N[i], self.W[i], self.W2[i], self.S[i], self.S2[i], self.VL[i])
        j = 6 * i
        return tuple(self.st[j:j + 6])

    def visit_counts(self) -> list:
        """N of the tried edges, in ``moves`` order."""
        if self.dense:
            return self.N.tolist() if self.N is not None else []
        return self.st[0::6] if self.st is not None else []

    def add_virtual_loss(self, i: int, vl: float) -> None:
        if self.dense:
            self.VL[i] += vl
        else:
            self.st[6 * i + 5] += vl

    # ------------------------------------------------------------------ expansion
    def expand(self, legal_moves: np.ndarray, policy: np.ndarray, value: float, score: float,
               ownership: np.ndarray | None, inner_moves: int = 0) -> None:
        """Attach the network's output: priors over ``legal_moves`` (renormalised).

        A dense node keeps every legal move; a compact one the ``inner_moves`` best (0 = all). A node
        expanded again (a root that was truncated, or a node whose kept moves were all tried) keeps
        its children and their statistics, with the new priors for the moves not tried yet.
        """
        p = policy[legal_moves].astype(np.float64)
        total = p.sum()
        p = p / total if total > 0 else np.full(len(p), 1.0 / len(p))
        old = {}  # re-expansion: the edges tried so far -> (N, W, W2, S, S2, VL, prior)
        children = self.children
        for i in range(self.tried()):
            e = self.edge(i)
            m = int(self.moves[i])
            if e[0] or e[5] or m in children:
                old[m] = e + (float(self.prior[i]),)
        if self.dense:
            self.moves = np.asarray(legal_moves, dtype=np.int64)
            self.prior = p
            self.raw_prior = p
            k = len(p)
            stats = np.zeros((6, k))
            if old:
                index = {int(m): i for i, m in enumerate(self.moves)}
                for m, e in old.items():
                    i = index.get(m)
                    if i is not None:
                        stats[:, i] = e[:6]
            self.N, self.W, self.W2, self.S, self.S2, self.VL = stats
            self.st = None
            self.truncated = False
        else:
            tried = list(old)
            order = np.argsort(-p, kind="stable")
            if tried:
                order = np.asarray([i for i in order.tolist() if int(legal_moves[i]) not in old], dtype=np.int64)
            elif inner_moves and len(order) > inner_moves:
                order = order[:inner_moves]
            self.truncated = len(tried) + len(order) < len(legal_moves)
            self.moves = array("h", tried + legal_moves[order].tolist())
            self.prior = array("f", [old[m][6] for m in tried] + p[order].tolist())
            self.raw_prior = self.prior
            st = None
            if tried:
                st = []
                for m in tried:
                    st.extend(old[m][:6])
            self.st = st
        self.value = float(value)
        self.score = float(score)
        self.ownership = ownership
        self.expanded = True

    def expand_top(self, moves: np.ndarray, prior: np.ndarray, truncated: bool, value: float, score: float,
                   ownership: np.ndarray | None) -> None:
        """``expand`` for a fresh compact node whose moves are already chosen and sorted (highest prior
        first): ``moves`` int16, ``prior`` float32 (the search's batched fast path)."""
        m = array("h")
        m.frombytes(moves.tobytes())
        p = array("f")
        p.frombytes(prior.tobytes())
        self.moves = m
        self.prior = self.raw_prior = p
        self.st = None
        self.truncated = truncated
        self.value = value
        self.score = score
        self.ownership = ownership
        self.expanded = True

    def to_dense(self) -> bool:
        """Make this node (the new root) dense. Returns False when it needs the network again
        (it kept only some of its legal moves): it is then marked unexpanded, and the next
        ``expand`` restores every legal move and keeps the children's statistics."""
        if self.dense:
            return True
        self.dense = True
        if not self.expanded:
            return True
        k = len(self.moves)
        stats = np.zeros((6, k))
        st = self.st or []
        t = len(st) // 6
        for j in range(6):
            stats[j, :t] = st[j::6]
        self.N, self.W, self.W2, self.S, self.S2, self.VL = stats
        self.st = None
        self.moves = np.asarray(self.moves, dtype=np.int64)
        self.prior = np.asarray(self.prior, dtype=np.float64)
        if self.truncated:
            self.expanded = False
            return False
        self.prior = self.prior / self.prior.sum()
        self.raw_prior = self.prior
        return True

    def q(self) -> float:
        """Mean value of the searches through this node, side to move here."""
        return self.value_sum / self.visits if self.visits else self.value

    def child(self, i: int, pass_move: int) -> "Node":
        """The child for edge ``i`` (created on first use, without a board; ``pass_move`` = N*N)."""
        m = int(self.moves[i])
        children = self.children
        node = children.get(m)
        if node is None:
            node = Node(m, self.passes + 1 if m == pass_move else 0)
            if children is NO_CHILDREN:
                self.children = children = {}
            children[m] = node
        return node


def exact_value(board: Board, komi: float) -> tuple[float, float]:
    """(+1/-1/0, score margin) for the side to move of a finished position, by area score."""
    s = area_score(board, komi)
    if board.to_move != BLACK:
        s = -s
    return (1.0 if s > 0 else -1.0 if s < 0 else 0.0), s


def lower_bounds(N: np.ndarray, W: np.ndarray, W2: np.ndarray, stdevs: float) -> np.ndarray:
    """Lower confidence bounds of edges' mean values (``W / N``, side to move, -1..1): the mean less ``stdevs``
    standard errors of the sample variance; -1 where an edge has fewer than 2 visits. Arrays of one shape."""
    N = np.asarray(N, np.float64)
    n = np.maximum(N, 2.0)
    mean = np.asarray(W, np.float64) / np.maximum(N, 1.0)
    var = np.maximum(np.asarray(W2, np.float64) / np.maximum(N, 1.0) - mean * mean, 0.0) * n / (n - 1)
    return np.where(N > 1, mean - stdevs * np.sqrt(var / n), -1.0)


def c_puct_value(c_puct: float, base: float, total: float) -> float:
    """The exploration constant after ``total`` visits of a node: ``c_puct + log((1 + total + base) / base)``
    (AlphaZero's growth; the one place this formula lives)."""
    return c_puct + math.log((1.0 + total + base) / base)


def c_puct_at(cfg: SearchConfig, total: float) -> float:
    """`c_puct_value` with a config's constants."""
    return c_puct_value(cfg.c_puct, cfg.c_puct_base, total)


_TWO_OVER_PI = 2.0 / math.pi  # the score term (2/pi) atan(x) lies in (-1, 1), as the value does


def select(node: Node, cfg: SearchConfig, is_root: bool, forced_k: float,
           blocked: np.ndarray | None = None, utility: tuple[float, float, float] | None = None) -> int:
    """Index of the edge PUCT picks at a dense ``node`` (virtual loss included); ``blocked`` edges never.
    ``utility``: (weight, centre, scale) of the score term (see ``SearchConfig.score_utility``; the
    centre from the side to move at ``node``), or None for the value alone."""
    N = node.N + node.VL
    total = N.sum()
    prior = node.prior
    if forced_k > 0 and total > 0:
        forced = np.sqrt(forced_k * prior * total)
        short = np.flatnonzero((node.N > 0) & (N < forced) if blocked is None else (node.N > 0) & (N < forced) & ~blocked)
        if len(short):
            return int(short[np.argmax(forced[short] - N[short])])
    parent_q = node.value_sum / node.visits if node.visits else node.value  # node.q() inlined
    if total > 0:
        visited = N > 0
        red = cfg.root_fpu_reduction if is_root else cfg.fpu_reduction
        fpu = parent_q - red * math.sqrt(float(prior[visited].sum()))
        # dividing by N only where visited (same values) avoids the costly np.errstate context
        q = np.where(visited, (node.W - node.VL) / np.where(visited, N, 1.0), fpu)
        sq = math.sqrt(total)
        if utility is not None:
            lam, centre, scale = utility
            real = node.N > 0
            n_real = float(node.N.sum())
            parent_s = float(node.S.sum()) / n_real if n_real > 0 else node.score
            lead = np.where(real, node.S / np.where(real, node.N, 1.0), parent_s)
            q = q + lam * _TWO_OVER_PI * np.arctan((lead - centre) / scale)
    else:  # nothing visited: every child gets the parent's Q
        q = parent_q
        sq = 1.0
    c = c_puct_value(cfg.c_puct, cfg.c_puct_base, total)
    score = q + c * prior * sq / (1.0 + N)
    if blocked is not None:
        score[blocked] = -np.inf
    return int(score.argmax())


def select_compact(node: Node, c_puct: float, c_puct_base: float, fpu_reduction: float,
                   utility: tuple[float, float, float] | None = None) -> int:
    """Index of the edge PUCT picks at a compact ``node``: the best tried edge, or the next untried
    one (``node.tried()``; all untried edges share the first-play urgency, so the highest prior wins).
    Returns -1 when every kept move was tried, the node is ``truncated`` and the next untried move
    could be best: the node then needs the network again (see ``Node.expand``).

    Plain Python: compact nodes have few tried edges, where numpy's per-call cost dominates.
    ``utility`` as in `select`.
    """
    st = node.st
    P = node.prior
    if st is None:
        st = node.st = []
    t = len(st) // 6
    total = 0.0
    mass = 0.0
    for i in range(t):
        n = st[6 * i] + st[6 * i + 5]
        if n > 0:
            total += n
            mass += P[i]
    parent_q = node.value_sum / node.visits if node.visits else node.value
    if total > 0:
        fpu = parent_q - fpu_reduction * math.sqrt(mass)
        sq = math.sqrt(total)
    else:
        fpu = parent_q
        sq = 1.0
    cs = c_puct_value(c_puct, c_puct_base, total) * sq
    best = -math.inf
    bi = -1
    if utility is not None and total > 0:
        lam, centre, scale = utility
        n_real = s_sum = 0.0
        for i in range(t):
            n_real += st[6 * i]
            s_sum += st[6 * i + 3]
        parent_s = s_sum / n_real if n_real > 0 else node.score
        fpu += lam * _TWO_OVER_PI * math.atan((parent_s - centre) / scale)
        for i in range(t):
            j = 6 * i
            vl = st[j + 5]
            n = st[j] + vl
            if n > 0:
                lead = st[j + 3] / st[j] if st[j] > 0 else parent_s
                u = (st[j + 1] - vl) / n + lam * _TWO_OVER_PI * math.atan((lead - centre) / scale)
            else:
                u = fpu
            s = u + cs * P[i] / (1.0 + n)
            if s > best:
                best = s
                bi = i
    else:
        for i in range(t):
            j = 6 * i
            vl = st[j + 5]
            n = st[j] + vl
            s = ((st[j + 1] - vl) / n if n > 0 else fpu) + cs * P[i] / (1.0 + n)
            if s > best:
                best = s
                bi = i
    if t < len(P):
        if fpu + cs * P[t] > best:
            st.extend((0, 0.0, 0.0, 0.0, 0.0, 0.0))
            return t
    elif node.truncated and t and fpu + cs * P[t - 1] > best:
        return -1
    return bi
