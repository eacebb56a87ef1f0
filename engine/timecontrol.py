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
  Canadian in overtime: the lagged time left in the period over the stones left;
* Fischer (``increment`` seconds added after every move; ``fischer-capped`` keeps the main time under
  ``main_limit`` and a move under ``max_per_move``): while the main time exceeds the increment, the increment
  plus the lagged excess over the turns left (KataGo's increment estimate ``max(0.75 A + 15 - s, 0.10 A + 20)
  / 2``), never more than the increment plus a fifth of the excess; else the lagged main time (the increment
  comes back after the move).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .board import BLACK, WHITE

KINDS = ("none", "absolute", "byoyomi", "canadian", "fischer")


@dataclass(frozen=True)
class TimeSettings:
    """A time control. ``main`` seconds; byo-yomi: ``periods`` of ``period`` s; Canadian: ``stones`` in ``period`` s."""

    kind: str = "none"
    main: float = 0.0
    period: float = 0.0
    periods: int = 0
    stones: int = 0
    increment: float = 0.0  # Fischer: seconds added after each move
    main_limit: float = -1.0  # Fischer: the main time never grows above this (-1: no cap)
    max_per_move: float = -1.0  # Fischer: the most one move may take (-1: no cap)

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
        for name in ("increment", "main_limit", "max_per_move"):
            v = getattr(self, name)
            if not math.isfinite(v) or (v < 0 and not (name != "increment" and v == -1)):
                raise ValueError(f"{name} must be a finite number >= 0" + (" (or -1: none)" if name != "increment" else "")
                                 + f", got {v!r}")
        if self.kind == "fischer" and self.main <= 0 and self.increment <= 0:
            raise ValueError("Fischer time needs main time or an increment")

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


TIME_GRAMMAR = ("none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN PERIOD STONES | "
                "fischer MAIN INC | fischer-capped MAIN INC MAIN_LIMIT MAX_PER_MOVE")
KGS_KINDS = ("none", "absolute", "byoyomi", "canadian")  # what kgs-time_settings takes; kata-time_settings adds Fischer


def parse_time_settings(words, kinds=KGS_KINDS + ("fischer", "fischer-capped")) -> TimeSettings:
    """A time control from the words of ``kgs-time_settings``/``kata-time_settings`` (see ``TIME_GRAMMAR``;
    seconds; -1 leaves a Fischer cap unused; ``absolute 0`` is no limit). ValueError names what is wrong."""
    words = list(words)
    kind = words[0].lower() if words else ""
    arity = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3, "fischer": 2, "fischer-capped": 4}
    if kind not in kinds or len(words) - 1 != arity[kind]:
        allowed = " | ".join(part for part in TIME_GRAMMAR.split(" | ") if part.split()[0] in kinds)
        raise ValueError(f"expected {allowed}, got {' '.join(words)!r}")
    try:
        nums = [float(w) for w in words[1:]]
    except ValueError:
        raise ValueError(f"expected numbers, got {' '.join(words[1:])!r}") from None
    if not all(math.isfinite(x) for x in nums):
        raise ValueError(f"expected finite numbers, got {' '.join(words[1:])!r}")
    for i in ((2,) if kind in ("byoyomi", "canadian") else ()):
        if nums[i] != int(nums[i]):
            raise ValueError(f"expected a whole number of {'periods' if kind == 'byoyomi' else 'stones'}, "
                             f"got {words[i + 1]!r}")
    if kind == "none" or (kind == "absolute" and nums[0] == 0):
        return TimeSettings("none")
    if kind == "absolute":
        return TimeSettings("absolute", nums[0])
    if kind == "byoyomi":
        return TimeSettings("byoyomi", nums[0], nums[1], int(nums[2]))
    if kind == "canadian":
        return TimeSettings("canadian", nums[0], nums[1], 0, int(nums[2]))
    if kind == "fischer":
        return TimeSettings("fischer", nums[0], increment=nums[1])
    cap = [-1.0 if x < 0 else x for x in nums[2:]]
    return TimeSettings("fischer", nums[0], increment=nums[1], main_limit=cap[0], max_per_move=cap[1])


def settings_words(s: TimeSettings) -> list[str]:
    """The ``kata-time_settings`` words of ``s`` (``kgs-time_settings`` takes them unless Fischer)."""
    if s.kind == "none":
        return ["none"]
    if s.kind == "absolute":
        return ["absolute", f"{s.main:g}"]
    if s.kind == "byoyomi":
        return ["byoyomi", f"{s.main:g}", f"{s.period:g}", str(s.periods)]
    if s.kind == "canadian":
        return ["canadian", f"{s.main:g}", f"{s.period:g}", str(s.stones)]
    if s.main_limit < 0 and s.max_per_move < 0:
        return ["fischer", f"{s.main:g}", f"{s.increment:g}"]
    return ["fischer-capped", f"{s.main:g}", f"{s.increment:g}", f"{s.main_limit:g}", f"{s.max_per_move:g}"]


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
        stones > 0 = in overtime with that many stones (Canadian) or periods (byo-yomi, KGS) left.
        Fischer has main time only (stones must be 0)."""
        if not math.isfinite(seconds) or stones < 0:
            raise ValueError("time_left needs a finite time and stones >= 0")
        s = self.settings
        c = self.clocks[color]
        seconds = max(0.0, seconds)
        if s.kind == "fischer":
            if stones:
                raise ValueError("a Fischer clock has no overtime stones: time_left COLOR TIME 0")
            c.main_left = seconds
            return
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
        if s.kind == "fischer":
            c.main_left -= elapsed
            if c.main_left < 0 or (s.max_per_move >= 0 and elapsed > s.max_per_move):
                c.flagged = True
                return
            c.main_left += s.increment
            if s.main_limit >= 0:
                c.main_left = min(c.main_left, s.main_limit)
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

    def banks_time(self, color: int) -> bool:
        """Whether seconds ``color`` leaves unspent on this move are kept for later moves: yes in main time,
        under Fischer and in a Canadian period; no in a byo-yomi period (a period that is not used up is
        given back whole, so its unspent seconds are lost) and without a time control."""
        s, c = self.settings, self.clocks[color]
        if s.kind == "none":
            return False
        if s.kind == "byoyomi":
            return not c.in_overtime
        return True

    def budget(self, color: int, stones_on_board: int, area: int, lag: float = 1.0) -> float:
        """Seconds to think about the next move of ``color``; ``math.inf`` without a time limit."""
        s = self.settings
        c = self.clocks[color]
        if s.kind == "none":
            return math.inf
        if s.kind == "absolute":
            turns = max(0.95 * area + 20 - stones_on_board, 0.15 * area + 30) / 2
            return lagged(c.main_left, lag) / max(turns, 1.0)
        if s.kind == "fischer":
            main, inc = c.main_left, s.increment
            if main <= inc:
                t = lagged(main, lag)
            else:
                turns = max(0.75 * area + 15 - stones_on_board, 0.10 * area + 20) / 2
                excess = lagged(main - inc, lag)
                t = min(inc + excess / max(turns, 1.0), inc + excess / 5, lagged(main, lag))
            if s.max_per_move >= 0:
                t = min(t, lagged(s.max_per_move, lag))
            return max(t, 0.0)
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
