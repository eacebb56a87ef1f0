"""Gumbel root search with sequential halving (Danihelka et al. 2022, "Policy improvement by planning with
Gumbel"): a root procedure that improves the policy even with few simulations, for self-play.

At the root, ``m`` moves are drawn without replacement by Gumbel-top-k on the network's logits (``g + logits``,
``g`` standard Gumbel noise). The visit budget is spent in ``ceil(log2 m)`` phases of sequential halving: in each
phase the remaining moves get equal visits, then the better half by ``g + logits + sigma(q)`` goes on. The move
played is the last one left (the best by that measure), and the policy target is

    pi' = softmax(logits + sigma(completed q)),

where a move's completed q is its own mean value when it was visited, else the mixed value ``v_mix`` of the
root (the network's value and the visited moves' values, weighted by prior), every q rescaled to [0, 1] by
the min and max over the root's moves, and ``sigma(q) = (c_visit + max visits) * c_scale * q``.

Perspective: values are from the side to move at the root, in [-1, 1]. Below the root the search is PUCT
as usual; `GumbelRoot` only chooses the root's edge for each playout and the final move.
"""

from __future__ import annotations

import math

import numpy as np


def sigma(q_hat: np.ndarray, max_visits: float, c_visit: float, c_scale: float) -> np.ndarray:
    """The monotone transform of rescaled values (in [0, 1]) that weighs them against the logits."""
    return (c_visit + max_visits) * c_scale * q_hat


def completed_q(N: np.ndarray, W: np.ndarray, prior: np.ndarray, root_value: float) -> np.ndarray:
    """Each move's mean value where visited, else ``v_mix``; then rescaled to [0, 1] (min-max over moves).

    ``N``/``W``: visits and value sums of the root's moves (side to move's view); ``prior`` the network's
    policy over them; ``root_value`` the network's value of the root."""
    visited = N > 0
    n_total = float(N.sum())
    q = np.where(visited, W / np.where(visited, N, 1.0), 0.0)
    p_visited = float(prior[visited].sum())
    if n_total > 0 and p_visited > 0:
        v_mix = (root_value + n_total * float((prior[visited] * q[visited]).sum()) / p_visited) / (1.0 + n_total)
    else:
        v_mix = root_value
    q = np.where(visited, q, v_mix)
    lo, hi = float(q.min()), float(q.max())
    return (q - lo) / (hi - lo) if hi > lo else np.full_like(q, 0.5)


def improved_policy(logits: np.ndarray, N: np.ndarray, W: np.ndarray, prior: np.ndarray, root_value: float,
                    c_visit: float, c_scale: float) -> np.ndarray:
    """``softmax(logits + sigma(completed q))`` over the root's moves: the Gumbel policy target."""
    z = logits + sigma(completed_q(N, W, prior, root_value), float(N.max()) if len(N) else 0.0, c_visit, c_scale)
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


class GumbelRoot:
    """The root schedule of one search: which root edge each playout takes, and the move at the end.

    ``prior``: the network's policy over the root's moves (``Node.raw_prior``); ``allowed``: a bool mask of
    moves that may be chosen (None: all); ``m``: moves sampled; ``budget``: the visits the caller will spend
    at the root (visits kept from an earlier tree count). ``rng``: a numpy Generator for the Gumbel noise."""

    def __init__(self, prior: np.ndarray, m: int, budget: int, rng: np.random.Generator,
                 allowed: np.ndarray | None = None, c_visit: float = 50.0, c_scale: float = 0.1):
        self.logits = np.log(np.maximum(np.asarray(prior, dtype=np.float64), 1e-12))
        self.g = rng.gumbel(size=len(self.logits))
        self.c_visit, self.c_scale = c_visit, c_scale
        key = self.g + self.logits
        if allowed is not None:
            key = np.where(allowed, key, -np.inf)
        k = max(1, min(m, int(np.isfinite(key).sum())))
        self.remaining = [int(i) for i in np.argsort(-key, kind="stable")[:k]]
        self.budget = max(1, budget)
        self.phases = max(1, math.ceil(math.log2(len(self.remaining)))) if len(self.remaining) > 1 else 1
        self.target = 0  # visits each remaining move has by the end of the current phase
        self._next_phase_target()

    def _next_phase_target(self) -> None:
        per = max(1, self.budget // (self.phases * len(self.remaining)))
        self.target += per

    def _scores(self, node) -> np.ndarray:
        """``g + logits + sigma(completed q)`` of every root edge (q rescaled over all the root's moves)."""
        q_hat = completed_q(node.N, node.W, node.raw_prior, node.value)
        return self.g + self.logits + sigma(q_hat, float(node.N.max()), self.c_visit, self.c_scale)

    def next_edge(self, node) -> int:
        """The root edge the next playout takes: the remaining move with the fewest visits (those in flight
        included). When every remaining move has had this phase's share, the better half goes on."""
        if all(node.N[i] >= self.target for i in self.remaining):
            if len(self.remaining) > 1:
                keep = max(1, len(self.remaining) // 2)
                score = self._scores(node)
                self.remaining = sorted(self.remaining, key=lambda i: -score[i])[:keep]
            self._next_phase_target()
        n = node.N + node.VL
        return min(self.remaining, key=lambda i: (n[i], -self.g[i] - self.logits[i]))

    def choice(self, node) -> int:
        """Index (into the root's moves) of the move to play: the best remaining move by ``g + logits +
        sigma(q)``, among those visited."""
        visited = [i for i in self.remaining if node.N[i] > 0] or self.remaining
        score = self._scores(node)
        return max(visited, key=lambda i: score[i])

    def policy_target(self, node) -> np.ndarray:
        """The improved policy over the root's moves (sums to 1)."""
        return improved_policy(self.logits, node.N, node.W, node.raw_prior, node.value, self.c_visit, self.c_scale)
