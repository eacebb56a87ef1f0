"""Training targets from a finished search: the root's policy target (self-play writes it as ``AZX``)."""

from __future__ import annotations

import math

import numpy as np

from azgo.engine.mcts import c_puct_at


def policy_target(searcher, prune: bool = True) -> np.ndarray:
    """The root's visit counts ``float[N*N+1]`` of ``searcher`` (an ``azgo.engine.search.Searcher`` after a
    search), with KataGo's forced-playout pruning when ``prune``.

    Every child but the most visited loses up to its forced playouts ``sqrt(k P total)`` as long as its PUCT
    value stays below the best child's; a child left with one visit or less is zeroed.
    """
    root = searcher.root
    cfg = searcher.config
    n2 = root.board.size ** 2 + 1
    out = np.zeros(n2)
    N = root.N.copy()
    k = cfg.forced_playouts_k
    if prune and k > 0 and N.sum() > 0:
        total = N.sum()
        best = int(np.argmax(N))
        c = c_puct_at(cfg, total)
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
