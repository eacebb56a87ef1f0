"""GTP commands on a finished game: ``final_score`` and ``final_status_list alive|dead|seki``.

On a played-out position (two passes) dead stones and seki are decided by the rules
(`azgo.engine.scoring`), as GNU Go judges a finished game; before that, by the network's ownership after a
short search. A mixin of `azgo.gtp.engine.GtpEngine` (it uses ``self.game``, ``searcher``, ``config``,
``size``, ``komi``, ``_nargs`` and ``_set_to_move``).
"""

from __future__ import annotations

import numpy as np

from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import move_to_gtp
from azgo.engine.scoring import area_ownership, dead_stones, final_status, result_string
from azgo.engine.search import Limits

from .protocol import GtpError


class ScoringCommands:
    """The end-of-game commands of `GtpEngine`."""

    def _ended(self) -> bool:
        """Whether two passes in a row ended the game at some point (a KGS cleanup phase goes on from
        there): the position is then taken as played out."""
        pass_move = self.game.board.pass_move
        moves = [m for _, m in self.game.moves]
        return any(a == b == pass_move for a, b in zip(moves, moves[1:]))

    def _dead_chains(self, played_out: bool) -> list[list[int]]:
        """Dead chains: on a played-out position by the rules (``dead_stones``, as GNU Go judges a
        finished game), else as the network's ownership calls them after a short search."""
        g = self.game
        b = g.board
        if not (b.counts[BLACK] or b.counts[WHITE]):
            return []
        if played_out:
            dead, chains = set(dead_stones(b)), []
            for m in sorted(dead):
                if not any(m in ch for ch in chains):
                    chains.append(b.chain(m))
            return chains
        result = self.searcher.search(g, Limits(visits=max(16, self.config.batch_size * 4)))
        own = result.ownership
        if own is None:
            return []
        me = b.to_move
        dead = []
        for chain in b.chains():
            sign = 1.0 if b.color_at(chain[0]) == me else -1.0  # ownership is from the side to move's view
            vals = sign * own[chain]
            if float(np.mean(vals)) < -0.2 or float(np.min(vals)) < -0.6:
                dead.append(chain)
        return dead

    def _opponent_has_dead_stones(self, color: int) -> bool:
        self._set_to_move(color)
        opp = 3 - color
        return any(self.game.board.color_at(ch[0]) == opp for ch in self._dead_chains(self._ended()))

    def cmd_final_score(self, args) -> str:
        board = self.game.board.copy()
        dead = [m for ch in self._dead_chains(self.game.over) for m in ch]
        if dead:
            board.setup(empty=dead)
        score = float(area_ownership(board).sum()) - self.komi
        return result_string(score)

    def cmd_final_status_list(self, args) -> str:
        self._nargs(args, 1, "final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GtpError("syntax error: status must be alive, dead or seki")
        b = self.game.board
        if status == "seki":  # on a played-out position, by the rules (as dead stones are); else none known
            if not self.game.over:
                return ""
            seki = set(final_status(b)[1])
            chains = []
            for m in sorted(seki):
                if not any(m in ch for ch in chains):
                    chains.append(b.chain(m))
            return "\n".join(" ".join(move_to_gtp(m, self.size) for m in ch) for ch in chains)
        dead = self._dead_chains(self.game.over)
        if status == "dead":
            chains = dead
        else:  # alive: neither dead nor (on a played-out position) in seki, as GNU Go lists them
            dead_points = {m for ch in dead for m in ch}
            if self.game.over:
                dead_points |= set(final_status(b)[1])
            chains = [ch for ch in b.chains() if ch[0] not in dead_points]
        return "\n".join(" ".join(move_to_gtp(m, self.size) for m in ch) for ch in chains)
