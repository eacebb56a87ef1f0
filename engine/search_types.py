"""What a search is asked and what it answers: limits, root candidates, the result."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Limits:
    """When to stop: total root ``visits`` (reused ones count), new ``playouts``, wall ``seconds``.

    None = no such limit. A time-control budget is passed to ``search`` separately and combines with
    these (the first limit reached stops the search). ``early_stop``: stop a timed search when no
    other move can catch the leader in the time left.
    """

    visits: int | None = None
    playouts: int | None = None
    seconds: float | None = None
    early_stop: bool = True

    def __post_init__(self) -> None:
        for name in ("visits", "playouts"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.seconds is not None and not (self.seconds > 0):
            raise ValueError("seconds must be > 0")


@dataclass(frozen=True)
class MoveInfo:
    """One root candidate. ``winrate`` and ``lcb`` are for the side to move at the root, in [0, 1];
    ``score_lead`` in points for the side to move (None without a score head)."""

    move: int
    visits: int
    winrate: float
    prior: float
    lcb: float
    pv: list[int]
    score_lead: float | None = None


@dataclass
class SearchResult:
    """What a search found; ``move`` is the choice for play (see ``choose_move``)."""

    move: int
    winrate: float
    score_lead: float | None
    visits: int
    playouts: int
    reused_visits: int
    seconds: float
    nn_seconds: float
    candidates: list[MoveInfo] = field(default_factory=list)
    ownership: np.ndarray | None = None
    stopped_early: bool = False
    memory_capped: bool = False

    @property
    def playouts_per_second(self) -> float:
        return self.playouts / self.seconds if self.seconds > 0 else 0.0
