"""What a search reports: root candidates best first (visits, winrate, LCB, score lead, PV) and the move
chosen for play (LCB among the well-visited moves, or sampled by visits with a temperature)."""

from __future__ import annotations

import numpy as np

from .mcts import Node, lower_bounds
from .search_types import MoveInfo


class ReportMixin:
    """Candidates, principal variations and the move choice of a `azgo.engine.search.Searcher`."""

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
        return ReportMixin.pv_with_visits(node, i, max_len)[0]

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
        """The move to play from the root: with a Gumbel root (``begin(gumbel=...)``) its choice; else sampled by
        visits^(1/T) if T > 0, else LCB or most visits."""
        root = self.root
        if self.gumbel is not None and root.expanded and root.N is not None and root.N.sum() > 0:
            return int(root.moves[self.gumbel.choice(root)])
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
