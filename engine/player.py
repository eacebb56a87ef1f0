"""The player: which move a search turns into, for play (``azgo gtp``, ``azgo genmove``) and self-play.

One place for the rules that sit between a search and the board, so that play and self-play cannot
drift apart:

* the move: sampled by visits^(1/T) while ``move_number < temperature_moves`` (self-play's opening
  variety), else the search's choice (LCB or most visits, ``SearchConfig.lcb``);
* pass safety: never pass while the area score of the board as it stands loses for the mover (the
  most visited other move instead), so that a player with dead enemy stones in its territory removes
  them, and an early network cannot end a game after a few moves; but that other move is never the
  filling of one's own eye, and the pass stands when only such moves are left or when the mover's
  own search has given the game up (root winrate under ``hopeless``): a lost player passes and loses
  on the count instead of filling its eyes until its groups die (which would make the final position of a
  played-out self-play game, the ownership and score target, a board the winner owns almost entirely);
  with ``answer_pass``, answer the opponent's pass with a pass when the board as it stands wins
  (GTP play; self-play plays on);
* optionally no pass in reply to a move (``pass_replies_pass``, ``azgo gtp --no-pass-after-move``): when
  the search's choice is a pass but the opponent's last move was not one, the most visited playable
  move whose value is within ``pass_margin`` of the pass's is played instead (a pass hands the
  opponent a free move, and a player sure it has won must not pass while the opponent plays on and kills
  a group; under area scoring a move costs nothing). Off in ``PlayerConfig`` (self-play plays on
  regardless); on by default in GTP play (``azgo gtp --pass-after-move`` turns it off; the games that
  decided it: docs/strength/HISTORY.md);
* moves ``exclude``d by the caller (GTP ``avoid``/``allow``, ``kgs-genmove_cleanup``'s no-pass);
* resignation: one ``ResignTracker`` per colour (threshold, consecutive moves, Leela Zero's handicap
  rule and earliest move);
* the clock: the seconds a move may take under a time control (``Clock.budget`` with ``lag`` kept back);
* dynamic komi (``dynamic_komi``, off by default): White giving handicap searches with a raised komi early
  in the game, or ("ahead") a side far ahead searches as if its komi were worse by the lead beyond a margin
  (`azgo.engine.dynkomi`); the score lead it reports and resigns on is the real one.

Perspective: winrates are for the side to move at the searched position, in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .board import BLACK, WHITE, Board
from .dynkomi import DynamicKomi, ahead_offset, search_game
from .resign import ResignConfig, ResignTracker
from .scoring import area_score
from .search import Limits, SearchResult, Searcher

AHEAD_LOG_CAP = 1024  # "ahead" offsets remembered per colour (one per search at a new move number)


def _playable(board, m: int, me: int, exclude: set[int] | None) -> bool:
    """A move that may replace a pass: not the pass, not excluded, not the filling of ``me``'s own eye."""
    return m != board.pass_move and not (exclude and m in exclude) and not board.fills_own_eye(m, me)


@dataclass(frozen=True)
class PlayerConfig:
    """How a search becomes a move (see the module docstring). Play: the defaults; self-play:
    ``temperature_moves`` > 0, ``answer_pass=False`` and its own resignation settings."""

    temperature_moves: int = 0
    answer_pass: bool = True
    resign: ResignConfig = field(default_factory=ResignConfig)
    lag: float = 1.0
    hopeless: float = 0.05  # an unsafe pass stands when the root winrate is below this
    dynamic_komi: DynamicKomi = field(default_factory=DynamicKomi)
    pass_replies_pass: bool = False  # pass only after the opponent's pass (azgo gtp --no-pass-after-move)
    pass_margin: float = 0.1  # value units ([-1, 1]): how much worse than the pass a move played instead may be

    def __post_init__(self) -> None:
        if self.temperature_moves < 0 or self.lag < 0 or self.pass_margin < 0:
            raise ValueError("temperature_moves, lag and pass_margin must be >= 0")


@dataclass
class Decision:
    """The move the search chose, whether to resign instead, and the search behind it."""

    move: int
    resigned: bool
    result: SearchResult | None
    winrate: float
    komi_offset: float = 0.0  # dynamic komi: points White's komi was changed by for this search (the winrate's)


class Player:
    """Turns a ``Searcher``'s tree into moves for one game (both colours), remembering what
    resignation needs; ``reset`` for a new game."""

    def __init__(self, searcher: Searcher, config: PlayerConfig = PlayerConfig()):
        self.searcher = searcher
        self.config = config
        self.trackers = {BLACK: ResignTracker(config.resign), WHITE: ResignTracker(config.resign)}
        # dynamic komi "ahead": each colour's offsets as (move number searched at, points), oldest first; the one
        # in force is the newest at or before the game's move number, so that an undo takes the later ones back
        self._ahead_log: dict[int, list[tuple[int, float]]] = {BLACK: [], WHITE: []}

    def use_searcher(self, searcher: Searcher) -> None:
        """Search with ``searcher`` from now on (a new network or search settings); the resignation history of
        the game goes on."""
        self.searcher = searcher

    def resign_snapshot(self, color: int) -> list:
        """``color``'s resignation history, to put back with `restore_resign` after a search whose move is not
        played (``reg_genmove``)."""
        return list(self.trackers[color].history)

    def restore_resign(self, color: int, snapshot: list) -> None:
        self.trackers[color].history = list(snapshot)

    def reset(self) -> None:
        for t in self.trackers.values():
            t.reset()
        self._ahead_log = {BLACK: [], WHITE: []}

    @property
    def ahead(self) -> dict[int, float]:
        """Each colour's dynamic komi "ahead" offset set by its latest search (points; 0 before any)."""
        return {c: (log[-1][1] if log else 0.0) for c, log in self._ahead_log.items()}

    def ahead_in_force(self, color: int, move_number: int) -> float:
        """``color``'s "ahead" offset for a search at ``move_number``: set by its latest search at or before that
        move (a search of a position taken back by undo no longer counts)."""
        log = self._ahead_log[color]
        while log and log[-1][0] > move_number:
            log.pop()
        return log[-1][1] if log else 0.0

    def _record_ahead(self, color: int, move_number: int, offset: float) -> None:
        log = self._ahead_log[color]
        self.ahead_in_force(color, move_number)
        if log and log[-1][0] == move_number:
            log.pop()
        log.append((move_number, offset))
        if len(log) > AHEAD_LOG_CAP:
            del log[: len(log) - AHEAD_LOG_CAP]

    # ------------------------------------------------------------------ the rules
    def budget(self, clock, game, color: int) -> float | None:
        """Seconds this move may take under ``clock`` (None without a time control)."""
        if clock is None or clock.settings.kind == "none":
            return None
        size = game.size
        return clock.budget(color, sum(game.board.counts), size * size, lag=self.config.lag)

    def choose(self, game, exclude: set[int] | None = None) -> int:
        """The move to play from the searcher's tree for the game's side to move (not played)."""
        s = self.searcher
        root = s.root
        board = game.board
        me = board.to_move
        pass_move = board.pass_move
        if self.config.answer_pass and board.passes >= 1 and board.last_move == pass_move \
                and pass_is_safe(board, game.komi, me) and not (exclude and pass_move in exclude):
            return pass_move
        if root is None or root.terminal is not None or not root.expanded:
            return pass_move
        temperature = 1.0 if game.move_number < self.config.temperature_moves else 0.0
        move = s.choose_move(temperature)
        visited = [int(root.moves[i]) for i in np.argsort(-root.N, kind="stable") if root.N[i] > 0]
        if move == pass_move and not pass_is_safe(board, game.komi, me) \
                and (root.q() + 1) / 2 >= self.config.hopeless:
            others = [m for m in visited if _playable(board, m, me, exclude)]
            if not others:
                others = [m for m in board.legal_moves() if _playable(board, m, me, exclude)]
            move = others[0] if others else move  # only own eyes left: pass, the count stands
        elif move == pass_move and self.config.pass_replies_pass and board.last_move != pass_move \
                and (root.q() + 1) / 2 >= self.config.hopeless:
            move = self._instead_of_pass(root, board, me, visited, exclude)
        if exclude and move in exclude:
            move = next((m for m in visited if m not in exclude), move)
        return move

    def _instead_of_pass(self, root, board, me: int, visited: list[int], exclude: set[int] | None) -> int:
        """The most visited of ``visited`` (the root's moves by visits) that is playable (no pass, not
        excluded, no filling of one's own eye) and whose mean value is at least the pass's less
        ``pass_margin``; the pass when there is none."""
        pass_move = board.pass_move
        where = {int(m): i for i, m in enumerate(root.moves)}
        ip = where.get(pass_move)
        q_pass = root.W[ip] / root.N[ip] if ip is not None and root.N[ip] > 0 else root.q()
        floor = q_pass - self.config.pass_margin
        for m in visited:
            if _playable(board, m, me, exclude) and root.W[where[m]] / root.N[where[m]] >= floor:
                return m
        return pass_move

    def search_view(self, game, color: int):
        """``(what color's search reads, komi delta)``: the game, or a view of it with White's komi changed by
        dynamic komi (`azgo.engine.dynkomi`); pondering after ``color``'s move searches the same view."""
        return search_game(self.config.dynamic_komi, game, color, self.ahead_in_force(color, game.move_number))

    def should_resign(self, game, color: int, winrate: float, enabled: bool = True,
                      lead: float | None = None) -> bool:
        """Record ``color``'s root winrate (and score ``lead``, its own) at this move; True when it should resign
        now."""
        g = game
        area = g.size * g.size
        resign = self.trackers[color].observe(winrate, g.move_number, area, g.handicap_stones, color == WHITE,
                                              lead=lead)
        return resign and enabled

    # ------------------------------------------------------------------ play
    def genmove(self, game, limits: Limits, budget: float | None = None, exclude: set[int] | None = None,
                callback=None, interval: float = 0.5, stop=None) -> Decision:
        """Search the game's position for its side to move and decide (the move is not played)."""
        color = game.to_move
        view, offset = self.search_view(game, color)
        result = self.searcher.search(view, limits, budget=budget, stop=stop, callback=callback,
                                      interval=interval, exclude=exclude)
        if offset and result.score_lead is not None:
            # White's lead under a komi raised by ``offset`` is the real one + offset; Black's, the real one - offset
            result.score_lead -= offset if color == WHITE else -offset
        if self.config.dynamic_komi.mode == "ahead":
            current = self.ahead_in_force(color, game.move_number)
            self._record_ahead(color, game.move_number,
                               ahead_offset(self.config.dynamic_komi, result.score_lead, current, game.size))
        move = self.choose(game, exclude)
        return Decision(move, self.should_resign(game, color, result.winrate, lead=result.score_lead), result,
                        result.winrate, offset)


def pass_is_safe(board: Board, komi: float, color: int) -> bool:
    """Whether the area score of the board as it stands is a win for ``color``."""
    s = area_score(board, komi)
    return s > 0 if color == BLACK else s < 0
