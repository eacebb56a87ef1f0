"""When to resign: the root winrate stays below a threshold for several of our moves in a row.

Defaults follow Leela Zero and KataGo: threshold 5% winrate (KataGo's -0.90 value), 3 consecutive
moves (KataGo ``resignConsecTurns``), never before move ``area / 4`` (Leela Zero). White in a handicap
game uses Leela Zero's lower bar ``t / (1 + handicap)`` blended back to ``t`` over the first
``0.6 * area`` moves. Black receiving a handicap does not resign while its score lead is still inside what
the stones are worth (``handicap_worth``): a network trained mostly on even games misjudges the winrate of
such positions, the lead less so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResignConfig:
    """``enabled`` off = never resign; ``threshold`` is a winrate in [0, 1] for the side to move."""

    enabled: bool = True
    threshold: float = 0.05
    consecutive: int = 3
    min_move_fraction: float = 0.25

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold < 1.0:
            raise ValueError(f"resign threshold must be a winrate in [0, 1), got {self.threshold}")
        if self.consecutive < 1:
            raise ValueError("consecutive must be >= 1")


def effective_threshold(cfg: ResignConfig, move_number: int, area: int, handicap: int, is_white: bool) -> float:
    """The winrate bar for this move (lower for White early in a handicap game)."""
    t = cfg.threshold
    if is_white and handicap > 1:
        blend = min(1.0, move_number / (0.6 * area))
        t = blend * t + (1 - blend) * t / (1 + handicap)
    return t


def handicap_worth(handicap: int) -> float:
    """Points that ``handicap`` stones give Black at komi 0.5, about: 7 a stone less 6 (+8, +22, +57 for 2, 4,
    9 stones, near the leads KataGo's networks give: +8, +25, +60); 0 without a handicap."""
    return 7.0 * handicap - 6.0 if handicap > 1 else 0.0


class ResignTracker:
    """Remembers our recent root winrates in one game and decides on resignation."""

    def __init__(self, cfg: ResignConfig = ResignConfig()):
        self.cfg = cfg
        self.history: list[bool] = []

    def reset(self) -> None:
        self.history.clear()

    def observe(self, winrate: float, move_number: int, area: int, handicap: int = 0,
                is_white: bool = False, lead: float | None = None) -> bool:
        """Record the winrate of our search at ``move_number`` (and its score ``lead`` in points, ours); True if
        we should resign now."""
        cfg = self.cfg
        low = winrate < effective_threshold(cfg, move_number, area, handicap, is_white)
        if low and not is_white and handicap > 1 and lead is not None and lead > -handicap_worth(handicap):
            low = False  # Black behind by less than its stones are worth: the winrate is not trusted
        self.history.append(low)
        if not cfg.enabled or move_number < cfg.min_move_fraction * area:
            return False
        tail = self.history[-cfg.consecutive:]
        return len(tail) == cfg.consecutive and all(tail)
