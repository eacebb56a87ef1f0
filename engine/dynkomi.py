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
"""

from __future__ import annotations

from dataclasses import dataclass

from .board import WHITE
from .game import SearchView
from .resign import handicap_worth

MODES = ("off", "linear")


@dataclass(frozen=True)
class DynamicKomi:
    """``mode``: "off" or "linear"; ``end``: the share of the board's points (moves) after which the offset
    is 0 (0.55: move 199 on 19x19, 93 on 13x13, 45 on 9x9)."""

    mode: str = "off"
    end: float = 0.55

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"dynamic komi must be one of {', '.join(MODES)}, not {self.mode!r}")
        if not 0 < self.end <= 2:
            raise ValueError(f"dynamic komi end must be in (0, 2], not {self.end}")


def komi_offset(cfg: DynamicKomi, colour: int, handicap: int, komi: float, move_number: int, size: int) -> float:
    """Points added to White's komi for ``colour``'s search at ``move_number`` (moves played since the start
    position) of a ``size`` x ``size`` game with ``handicap`` stones and ``komi``: a whole number >= 0."""
    if cfg.mode == "off" or colour != WHITE or handicap < 2:
        return 0.0
    full = max(0.0, 0.5 + handicap_worth(handicap) - komi)
    left = 1.0 - move_number / (cfg.end * size * size)
    return float(round(full * left)) if left > 0 else 0.0


def search_game(cfg: DynamicKomi, game, colour: int):
    """``(what to search, offset)``: the game itself and 0, or a `azgo.engine.game.SearchView` of it with White's komi raised by
    the offset (`komi_offset`)."""
    offset = komi_offset(cfg, colour, game.handicap_stones, game.komi, game.move_number, game.size)
    return (SearchView(game, game.komi + offset), offset) if offset else (game, 0.0)
