"""Game clocks and the per-move time budget: absolute, byo-yomi, Canadian (GTP and KGS settings).

The clock is updated from outside (``time_left`` from the GUI or server) at any moment, or by
``spend`` when azgo keeps it itself (and in tests, which drive a simulated clock through whole games).

Budget (seconds for one move of ours), after a lag buffer ``lag`` (KataGo's rule: ``t - lag``,
or ``t / 2`` when ``t < 2 * lag``):

* absolute: remaining / turns left, turns left estimated from the stones on the board as KataGo does:
  ``max(0.95 A + 20 - s, 0.15 A + 30) / 2`` for board area A and s stones;
* byo-yomi / Canadian in main time: the larger of the main-time share (turns left with KataGo's
  byo-yomi estimate ``max(0.5 A + 10 - s, 0.02 A + 4) / 2``) and one overtime move's time, but never
  more than can be spent without losing a period;
* byo-yomi in overtime: the lagged period (never less than a safe minimum, a quarter period);
  Canadian in overtime: the lagged time left in the period over the stones left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .board import BLACK, WHITE

KINDS = ("none", "absolute", "byoyomi", "canadian")


@dataclass(frozen=True)
class TimeSettings:
    """A time control. ``main`` seconds; byo-yomi: ``periods`` of ``period`` s; Canadian: ``stones`` in ``period`` s."""

    kind: str = "none"
    main: float = 0.0
    period: float = 0.0
    periods: int = 0
    stones: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"time control must be one of {KINDS}, got {self.kind!r}")
        for name in ("main", "period"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} time must be a finite number >= 0, got {v!r}")
        if self.periods < 0 or self.stones < 0:
            raise ValueError("periods and stones must be >= 0")
        if self.kind == "byoyomi" and (self.periods < 1 or self.period <= 0):
            raise ValueError("byo-yomi needs at least one period of positive length")
        if self.kind == "canadian" and (self.stones < 1 or self.period <= 0):
            raise ValueError("Canadian overtime needs at least one stone and a positive period")

    @classmethod
    def from_gtp(cls, main: float, byo_time: float, byo_stones: int) -> "TimeSettings":
        """GTP ``time_settings``: stones 0 and byo time > 0 = no limit; byo time 0 = absolute; else Canadian."""
        if byo_stones == 0 and byo_time > 0:
            return cls("none")
        if byo_time == 0 or byo_stones == 0:
            return cls("absolute", main) if main > 0 else cls("none")
        return cls("canadian", main, byo_time, 0, byo_stones)

    @property
    def overtime(self) -> bool:
        return self.kind in ("byoyomi", "canadian")


@dataclass
class ColourClock:
    """One player's remaining time."""

    main_left: float = 0.0
    period_left: float = 0.0
    periods_left: int = 0
    stones_left: int = 0
    in_overtime: bool = False
    flagged: bool = False
    periods_lost: int = 0


def lagged(t: float, lag: float) -> float:
    """Time usable out of ``t`` after a lag buffer."""
    if t <= 0:
        return 0.0
    return t / 2 if t < 2 * lag else t - lag


@dataclass
class Clock:
    """Both players' clocks under one TimeSettings."""

    settings: TimeSettings = field(default_factory=TimeSettings)
    clocks: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.reset(self.settings)

    def reset(self, settings: TimeSettings) -> None:
        self.settings = settings
        self.clocks = {c: self._fresh() for c in (BLACK, WHITE)}

    def _fresh(self) -> ColourClock:
        s = self.settings
        c = ColourClock(main_left=s.main)
        if s.overtime and s.main <= 0:
            self._enter_overtime(c)
        return c

    def _enter_overtime(self, c: ColourClock) -> None:
        s = self.settings
        c.in_overtime = True
        c.main_left = 0.0
        c.period_left = s.period
        c.periods_left = s.periods if s.kind == "byoyomi" else 1
        c.stones_left = s.stones if s.kind == "canadian" else 1

    def time_left(self, color: int, seconds: float, stones: int) -> None:
        """GTP ``time_left``: stones 0 = still in main time (``time_left C 0 0`` = main time just ran out);
        stones > 0 = in overtime with that many stones (Canadian) or periods (byo-yomi, KGS) left."""
        if not math.isfinite(seconds) or stones < 0:
            raise ValueError("time_left needs a finite time and stones >= 0")
        s = self.settings
        c = self.clocks[color]
        seconds = max(0.0, seconds)
        if stones == 0 or not s.overtime:
            if s.overtime and seconds == 0:
                self._enter_overtime(c)
            else:
                c.in_overtime = False
                c.main_left = seconds
            return
        c.in_overtime = True
        c.main_left = 0.0
        c.period_left = seconds
        if s.kind == "byoyomi":
            c.periods_left = stones
        else:
            c.stones_left = stones

    def spend(self, color: int, elapsed: float) -> None:
        """Take ``elapsed`` seconds for one move of ``color`` off its clock (simulated or own clock)."""
        s = self.settings
        c = self.clocks[color]
        if s.kind == "none":
            return
        if not c.in_overtime:
            if elapsed <= c.main_left or s.kind == "absolute":
                c.main_left -= elapsed
                if c.main_left < 0:
                    c.flagged = True
                return
            elapsed -= c.main_left
            self._enter_overtime(c)
        if s.kind == "byoyomi":
            c.period_left = s.period
            if elapsed > s.period:
                lost = math.ceil(elapsed / s.period) - 1
                c.periods_lost += lost
                c.periods_left -= lost
                if c.periods_left <= 0:
                    c.flagged = True
            return
        c.period_left -= elapsed
        c.stones_left -= 1
        if c.period_left < 0:
            c.flagged = True
        elif c.stones_left == 0:
            c.period_left = s.period
            c.stones_left = s.stones

    def budget(self, color: int, stones_on_board: int, area: int, lag: float = 1.0) -> float:
        """Seconds to think about the next move of ``color``; ``math.inf`` without a time limit."""
        s = self.settings
        c = self.clocks[color]
        if s.kind == "none":
            return math.inf
        if s.kind == "absolute":
            turns = max(0.95 * area + 20 - stones_on_board, 0.15 * area + 30) / 2
            return lagged(c.main_left, lag) / max(turns, 1.0)
        if s.kind == "byoyomi":
            per_move = max(lagged(s.period, lag), 0.25 * s.period)
        else:
            per_move = max(lagged(c.period_left if c.in_overtime else s.period, lag)
                           / max(c.stones_left if c.in_overtime else s.stones, 1), 0.0)
        if c.in_overtime:
            return per_move
        turns = max(0.5 * area + 10 - stones_on_board, 0.02 * area + 4) / 2
        share = lagged(c.main_left, lag) / max(turns, 1.0)
        return min(max(share, per_move), c.main_left + per_move)
