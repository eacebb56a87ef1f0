"""PUCT Monte-Carlo tree: nodes with child statistics as arrays, selection, expansion, backup.

Perspective: every value is from the side to move at the node that owns the statistic. A node's
child arrays ``N``, ``W``, ``W2``, ``S``, ``S2`` describe the edges (moves) out of it, with ``W`` the summed
value *for the player choosing the move* (the node's side to move). A leaf's network value ``v`` is
for the leaf's side to move, so it enters its parent's edge as ``-v`` and flips sign at every level
(negamax backup). Terminal positions (two passes) are scored by area rules and backed up exactly.

Children are created lazily and kept in a dict ``move index -> Node``; a node is *expanded* once the
network has evaluated it (``moves``/``prior`` set).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .board import BLACK, Board
from .scoring import area_score


@dataclass(frozen=True)
class SearchConfig:
    """Search parameters (defaults for play; self-play switches noise and forced playouts on).

    c_puct: exploration constant; grows as ``c_puct + log((1 + N + base) / base)`` with ``c_puct_base``.
    fpu_reduction: unvisited children start at parent Q minus this times sqrt(visited prior mass)
        (``root_fpu_reduction`` at the root).
    batch_size: leaves gathered with virtual loss per network call.
    virtual_loss: visits (each a loss) temporarily added to every edge on a pending path.
    noise_fraction, dirichlet_total: root Dirichlet noise weight, and the total concentration (the
        per-move alpha is ``dirichlet_total / number of legal moves``); 0 fraction = no noise.
    root_policy_temperature: the root prior is ``softmax(log p / T)`` (1 = unchanged).
    forced_playouts_k: KataGo forced playouts at the root, ``sqrt(k * P * total)``; 0 = off.
    lcb: choose the move with the best lower confidence bound among children with at least
        ``lcb_min_visit_fraction`` of the most visits (``lcb_stdevs`` standard errors); else most visits.
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

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if self.c_puct <= 0:
            raise ValueError("c_puct must be > 0")


class Node:
    """One position in the tree. ``board`` is owned by the node (its own copy)."""

    __slots__ = (
        "board", "parent", "index", "moves", "prior", "N", "W", "W2", "S", "S2", "VL", "children",
        "value", "score", "ownership", "terminal", "expanded", "visits", "value_sum", "raw_prior",
    )

    def __init__(self, board: Board, parent: "Node | None" = None, index: int = -1):
        self.board = board
        self.parent = parent
        self.index = index  # position of this node's move in parent's arrays
        self.moves: np.ndarray | None = None
        self.prior: np.ndarray | None = None
        self.raw_prior: np.ndarray | None = None  # the network's prior, before root noise/temperature
        self.N = self.W = self.W2 = self.S = self.S2 = self.VL = None
        self.children: dict[int, Node] = {}
        self.value = 0.0  # network value, side to move here
        self.score = 0.0  # network score lead, side to move here
        self.ownership: np.ndarray | None = None
        self.terminal: float | None = None
        self.expanded = False
        self.visits = 0  # evaluations backed up through this node (itself included)
        self.value_sum = 0.0  # their values, side to move here

    def expand(self, legal_moves: np.ndarray, policy: np.ndarray, value: float, score: float,
               ownership: np.ndarray | None) -> None:
        """Attach the network's output: priors over ``legal_moves`` (renormalised)."""
        self.moves = legal_moves
        p = policy[legal_moves].astype(np.float64)
        total = p.sum()
        self.prior = p / total if total > 0 else np.full(len(p), 1.0 / len(p))
        self.raw_prior = self.prior
        k = len(legal_moves)
        self.N = np.zeros(k)
        self.W = np.zeros(k)
        self.W2 = np.zeros(k)
        self.S = np.zeros(k)
        self.S2 = np.zeros(k)  # summed squared score leads (the spread of the searched scores)
        self.VL = np.zeros(k)
        self.value = float(value)
        self.score = float(score)
        self.ownership = ownership
        self.expanded = True

    def q(self) -> float:
        """Mean value of the searches through this node, side to move here."""
        return self.value_sum / self.visits if self.visits else self.value

    def child(self, i: int, komi: float) -> "Node":
        """The child for edge ``i`` (created on first use; a finished game gets its exact value)."""
        m = int(self.moves[i])
        node = self.children.get(m)
        if node is None:
            b = self.board.copy()
            b.play_unchecked(m)
            node = Node(b, self, i)
            if b.game_over:
                node.terminal, node.score = exact_value(b, komi)
            self.children[m] = node
        return node


def exact_value(board: Board, komi: float) -> tuple[float, float]:
    """(+1/-1/0, score margin) for the side to move of a finished position, by area score."""
    s = area_score(board, komi)
    if board.to_move != BLACK:
        s = -s
    return (1.0 if s > 0 else -1.0 if s < 0 else 0.0), s


def c_puct_at(cfg: SearchConfig, total: float) -> float:
    return cfg.c_puct + math.log((1.0 + total + cfg.c_puct_base) / cfg.c_puct_base)


def select(node: Node, cfg: SearchConfig, is_root: bool, forced_k: float,
           blocked: np.ndarray | None = None) -> int:
    """Index of the edge PUCT picks at ``node`` (virtual loss included); ``blocked`` edges never."""
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
    else:  # nothing visited: every child gets the parent's Q
        q = parent_q
        sq = 1.0
    c = cfg.c_puct + math.log((1.0 + total + cfg.c_puct_base) / cfg.c_puct_base)  # c_puct_at inlined
    score = q + c * prior * sq / (1.0 + N)
    if blocked is not None:
        score[blocked] = -np.inf
    return int(score.argmax())
