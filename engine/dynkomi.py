"""Dynamic komi for the player giving handicap: search as if White's komi were larger early in the game.

A player giving stones starts far behind: White's winrate against 2 stones at komi 0.5 is low, and a search
whose every move looks equally lost cannot tell the good ones apart. Pachi's answer (its "linear" dynamic komi)
is to pretend, for the search only, that White has about the stones' worth in extra komi at the start and to
let that bonus fall to zero over the game, so that the winrates the search compares stay near 50% while the
stones still count, and the real komi is back for the endgame, where the count is decided.

Here: ``komi_for_search = komi + offset`` with ``offset = max(0, 0.5 + handicap_worth(h) - komi)`` (the komi
that makes ``h`` stones an even game, less the komi there is) times ``1 - moves / (end * points)``, rounded to
whole points (so the komi keeps its half point and the tree is kept between moves while the offset is the
same). Only for White with a handicap of 2 or more stones (``Game.handicap_stones``) and only for the moves it
plays (``Player.genmove``); analysis, self-play and the count (pass safety, ``final_score``) use the real
komi. Off by default until games decide (``azgo gtp --dynamic-komi linear``).

"ahead" (Pachi's adaptive dynamic komi, seen from the side that leads): a search far ahead finds every move
winning and stops telling the ones that keep points from the ones that give them away; on 19x19 most games azgo
lost to GNU Go were won first by both engines' count and then given back a few points at a time
(docs/strength/gnugo19h2g6). So either colour, in any game, searches as if its komi were worse by its last real
lead beyond a margin (``margin`` of the board's points: 10.8 on 19x19, 5.1 on 13x13), so that the searched game
stays about ``margin`` points ahead and moves that lose points lose winrate. The offset is whole points, moves by
at least ``step`` points at a time (so the tree is kept while it stands) and is at most ``cap`` of the board's
points; it falls to 0 once the lead is within the margin. Off by default until games decide.
"""

from __future__ import annotations

from dataclasses import dataclass

from .board import WHITE
from .game import SearchView
from .resign import handicap_worth

MODES = ("off", "linear", "ahead")


@dataclass(frozen=True)
class DynamicKomi:
    """``mode``: "off", "linear" or "ahead"; ``end`` (linear): the share of the board's points (moves) after which
    the offset is 0 (0.55: move 199 on 19x19, 93 on 13x13, 45 on 9x9); ``margin``, ``step``, ``cap`` (ahead):
    the lead kept as it is and the largest offset, as shares of the board's points, and the least change of the
    offset, in points."""

    mode: str = "off"
    end: float = 0.55
    margin: float = 0.03
    step: float = 4.0
    cap: float = 0.15

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"dynamic komi must be one of {', '.join(MODES)}, not {self.mode!r}")
        if not 0 < self.end <= 2:
            raise ValueError(f"dynamic komi end must be in (0, 2], not {self.end}")
        if self.margin < 0 or self.step < 0 or self.cap < 0:
            raise ValueError("dynamic komi margin, step and cap must be >= 0")


def komi_offset(cfg: DynamicKomi, colour: int, handicap: int, komi: float, move_number: int, size: int) -> float:
    """Points added to White's komi for ``colour``'s search at ``move_number`` (moves played since the start
    position) of a ``size`` x ``size`` game with ``handicap`` stones and ``komi``: a whole number >= 0."""
    if cfg.mode == "off" or colour != WHITE or handicap < 2:
        return 0.0
    full = max(0.0, 0.5 + handicap_worth(handicap) - komi)
    left = 1.0 - move_number / (cfg.end * size * size)
    return float(round(full * left)) if left > 0 else 0.0


def ahead_offset(cfg: DynamicKomi, lead: float | None, current: float, size: int) -> float:
    """"ahead": the points the mover's komi is made worse by for its next search, given its last search's real
    score ``lead`` (its own, None when unknown) and the offset ``current``ly in force: ``lead`` less the margin,
    rounded, at most the cap, 0 when not ahead by more than the margin; ``current`` while the new value is within
    ``step`` of it."""
    if cfg.mode != "ahead":
        return 0.0
    if lead is None:
        return current
    area = size * size
    target = float(min(round(cfg.cap * area), max(0, round(lead - cfg.margin * area))))
    if target > 0 and abs(target - current) < cfg.step:
        return current
    return target


def search_game(cfg: DynamicKomi, game, colour: int, ahead: float = 0.0):
    """``(what to search, delta)``: the game itself and 0, or a `azgo.engine.game.SearchView` of it with White's
    komi changed by ``delta`` points: raised by `komi_offset` ("linear"), or made worse for ``colour`` by
    ``ahead`` ("ahead": raised when ``colour`` is Black, lowered when White)."""
    if cfg.mode == "ahead":
        delta = ahead if colour != WHITE else -ahead
    else:
        delta = komi_offset(cfg, colour, game.handicap_stones, game.komi, game.move_number, game.size)
    return (SearchView(game, game.komi + delta), delta) if delta else (game, 0.0)
