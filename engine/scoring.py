"""Area scoring (Chinese / Tromp-Taylor) and the final-ownership map it implies.

A point counts for a colour if it holds that colour's stone, or if it is empty and every path of
empty points from it reaches stones of that colour only. No dead-stone removal: score the board as
it stands (games played out to two passes leave only living stones).
"""

from __future__ import annotations

import numpy as np

from .board import BLACK, EMPTY, WHITE, Board


def area_ownership(board: Board) -> np.ndarray:
    """``int8[N, N]``: +1 where the point counts for Black, -1 for White, 0 for neither (dame)."""
    g = board.g
    cells = board.cells
    owner = [0] * g.ncells
    seen = bytearray(g.ncells)
    nbrs = g.nbrs
    for loc in g.loc_of:
        c = cells[loc]
        if c == BLACK:
            owner[loc] = 1
        elif c == WHITE:
            owner[loc] = -1
        elif not seen[loc]:
            region, stack, reach = [], [loc], 0
            seen[loc] = 1
            while stack:
                p = stack.pop()
                region.append(p)
                for q in nbrs[p]:
                    cq = cells[q]
                    if cq == EMPTY:
                        if not seen[q]:
                            seen[q] = 1
                            stack.append(q)
                    elif cq == BLACK or cq == WHITE:
                        reach |= cq
            value = 1 if reach == BLACK else -1 if reach == WHITE else 0
            for p in region:
                owner[p] = value
    out = np.array([owner[loc] for loc in g.loc_of], dtype=np.int8)
    return out.reshape(board.size, board.size)


def area_score(board: Board, komi: float) -> float:
    """Black's area minus White's area minus komi (positive: Black leads)."""
    return float(area_ownership(board).sum()) - komi


def result_string(score: float) -> str:
    """SGF/GTP result text for a Black-minus-White margin: ``B+3.5``, ``W+0.5``, ``0`` for a draw."""
    if score > 0:
        return f"B+{score:g}"
    if score < 0:
        return f"W+{-score:g}"
    return "0"
