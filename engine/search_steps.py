"""The stepwise search: ``begin`` / ``gather`` / ``encode_leaves`` / ``complete``, the steps that ``search``
runs itself and that self-play and the analysis server drive for many searches at once (their leaves in one
network call): selection under virtual loss, finished games backed up exactly, negamax backup."""

from __future__ import annotations

import numpy as np

from .gumbel import GumbelRoot
from .mcts import Node, exact_value, select, select_compact


class StepsMixin:
    """The stepwise interface and the playouts of a `azgo.engine.search.Searcher`."""

    def begin(self, game, noise: bool = False, reuse: bool = True, exclude: set[int] | None = None,
              gumbel: tuple[int, int] | None = None) -> int:
        """Start a search that the caller drives in steps, the one batching interface of play,
        self-play and the analysis server (which put the leaves of many searches into one network
        call): ``gather`` -> ``encode_leaves`` -> the network -> ``complete``, until the caller's limit.
        ``search`` runs the same steps itself. The root is prepared (``noise``: Dirichlet noise and
        forced playouts; ``exclude``: avoided moves) as soon as it has been evaluated. ``gumbel``: (moves
        sampled, root visit budget) for a Gumbel root with sequential halving (`azgo.engine.gumbel`) instead of
        PUCT at the root (no Dirichlet noise or forced playouts then); see ``self.gumbel``. Returns the
        visits kept from the last tree."""
        reused = self.set_game(game, reuse=reuse)
        self._noise = noise and gumbel is None
        self._exclude = exclude
        self._prepared = False
        self._forced_k = self.config.forced_playouts_k if self._noise else 0.0
        self._gumbel_args = gumbel
        self.gumbel = None
        self._maybe_prepare()
        return reused

    def _maybe_prepare(self) -> None:
        if not self._prepared and self.root.expanded:
            self.prepare_root(self._noise, self._exclude)
            self._prepared = True
            if self._gumbel_args is not None and self.root.terminal is None:
                m, budget = self._gumbel_args
                allowed = None if self.blocked is None else ~self.blocked
                self.gumbel = GumbelRoot(self.root.raw_prior, m, budget, self.rng, allowed,
                                         self.config.gumbel_c_visit, self.config.gumbel_c_scale)

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
                if node is root and self.gumbel is not None:
                    i = self.gumbel.next_edge(root)
                elif node.dense:
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
