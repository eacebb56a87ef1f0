"""Leaf expansion: the network's input planes for the leaves of a batch, their expansion from its output
(with ladder reading in the priors), and the root's search prior (temperature, noise, excluded moves)."""

from __future__ import annotations

import time

import numpy as np

from . import planes as P
from .features import encode_batch_into
from .ladder import ladder_attacks, losing_escapes
from .mcts import Node


class ExpandMixin:
    """Leaf evaluation and expansion, and root preparation, of a `azgo.engine.search.Searcher`."""

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
