"""Input planes for the network (numpy only), as specified in ``azgo.engine.planes``.

Perspective: everything is relative to the side to move of the most recent position.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import planes as P
from .board import BLACK, Board


def encode(boards: Sequence[Board], komi: float) -> np.ndarray:
    """Planes ``float32[NUM_PLANES, N, N]`` for ``boards[0]`` (the current position).

    ``boards`` are the current position and the positions before it, most recent first (at most
    ``HISTORY`` are used; missing history is zero). ``komi`` is White's komi in points.
    """
    out = np.zeros((P.NUM_PLANES, boards[0].size, boards[0].size), dtype=np.float32)
    encode_into(out, boards, komi)
    return out


def encode_into(out: np.ndarray, boards: Sequence[Board], komi: float) -> None:
    """Fill ``out`` (``float32[NUM_PLANES, N, N]``, zeroed by the caller) like ``encode``."""
    cur = boards[0]
    n = cur.size
    me = cur.to_move
    opp = 3 - me
    idx = cur.g.loc_array
    flat = out.reshape(P.NUM_PLANES, n * n)
    boards = boards[: P.HISTORY]
    k = len(boards)
    # all history boards in one buffer and one gather (instead of 8 frombuffer/gather pairs)
    hist = np.frombuffer(b"".join([b.cells for b in boards]), dtype=np.uint8).reshape(k, -1)[:, idx]
    flat[P.OWN_STONES:P.OWN_STONES + k] = hist == me
    flat[P.OPP_STONES:P.OPP_STONES + k] = hist == opp
    if me == BLACK:
        out[P.BLACK_TO_MOVE] = 1.0
    cells = hist[0]
    libs = np.minimum(cur.liberty_array().reshape(-1), 3)
    own = cells == me
    theirs = cells == opp
    for j in range(3):
        band = libs == j + 1
        flat[P.OWN_LIBERTIES + j] = own & band
        flat[P.OPP_LIBERTIES + j] = theirs & band
    ko = cur.ko_move
    if ko is not None:
        flat[P.KO_PLANE, ko] = 1.0
    out[P.ON_BOARD_PLANE] = 1.0
    out[P.KOMI_PLANE] = (komi if me != BLACK else -komi) / P.KOMI_SCALE


def encode_game(game, index: int | None = None) -> np.ndarray:
    """Planes for position ``index`` of a Game (default: the current one)."""
    boards = game.boards if index is None else game.boards[: index + 1]
    return encode(boards[: -P.HISTORY - 1: -1], game.komi)
