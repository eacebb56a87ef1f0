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
    encode_cells_into(out, boards[0], [b.cells for b in boards[: P.HISTORY]], komi)


def encode_cells_into(out: np.ndarray, cur: Board, cells: Sequence[bytes], komi: float) -> None:
    """Fill ``out`` (zeroed ``float32[NUM_PLANES, N, N]``) for the position ``cur``, given the stones
    (``Board.cells``) of it and the positions before it, most recent first (``cells[0]`` is
    ``cur``'s): what the search uses, whose tree nodes keep only their stones."""
    n = cur.size
    me = cur.to_move
    opp = 3 - me
    idx = cur.g.loc_array
    flat = out.reshape(P.NUM_PLANES, n * n)
    k = min(len(cells), P.HISTORY)
    # all history positions in one buffer and one gather (instead of 8 frombuffer/gather pairs)
    hist = np.frombuffer(b"".join(cells[:k]), dtype=np.uint8).reshape(k, -1)[:, idx]
    flat[P.OWN_STONES:P.OWN_STONES + k] = hist == me
    flat[P.OPP_STONES:P.OPP_STONES + k] = hist == opp
    if me == BLACK:
        out[P.BLACK_TO_MOVE] = 1.0
    own = flat[P.OWN_STONES]
    theirs = flat[P.OPP_STONES]
    libs = cur.liberty_array().reshape(-1)
    flat[P.OWN_LIBERTIES] = own * (libs == 1)
    flat[P.OWN_LIBERTIES + 1] = own * (libs == 2)
    flat[P.OWN_LIBERTIES + 2] = own * (libs >= 3)
    flat[P.OPP_LIBERTIES] = theirs * (libs == 1)
    flat[P.OPP_LIBERTIES + 1] = theirs * (libs == 2)
    flat[P.OPP_LIBERTIES + 2] = theirs * (libs >= 3)
    ko = cur.ko_move
    if ko is not None:
        flat[P.KO_PLANE, ko] = 1.0
    out[P.ON_BOARD_PLANE] = 1.0
    out[P.KOMI_PLANE] = (komi if me != BLACK else -komi) / P.KOMI_SCALE


def encode_batch_into(out: np.ndarray, boards: Sequence[Board], cells: Sequence[Sequence[bytes]],
                      komi: float) -> None:
    """``encode_cells_into`` for a batch: ``out`` is a zeroed ``float32[B, NUM_PLANES, N, N]``, row ``k``
    for ``boards[k]`` with ``cells[k]`` its stones and history (newest first). The same planes, with one
    set of numpy calls for the whole batch instead of one per position."""
    batch = len(boards)
    cur = boards[0]
    n = cur.size
    nn = n * n
    g = cur.g
    blank = bytes(g.ncells)  # missing history: no stones
    parts = []
    for c in cells:
        k = min(len(c), P.HISTORY)
        parts.extend(c[:k])
        if k < P.HISTORY:
            parts.extend([blank] * (P.HISTORY - k))
    hist = np.frombuffer(b"".join(parts), dtype=np.uint8).reshape(batch, P.HISTORY, -1)[:, :, g.loc_array]
    me = np.fromiter((b.to_move for b in boards), dtype=np.uint8, count=batch)
    flat = out.reshape(batch, P.NUM_PLANES, nn)
    me3 = me[:, None, None]
    flat[:, P.OWN_STONES:P.OWN_STONES + P.HISTORY] = hist == me3
    flat[:, P.OPP_STONES:P.OPP_STONES + P.HISTORY] = (hist == 3 - me3) & (hist != 0)
    flat[:, P.BLACK_TO_MOVE] = (me == BLACK)[:, None]
    libs = np.empty((batch, nn), dtype=np.int16)
    for k, b in enumerate(boards):
        bc, bl, bh = b.cells, b.libs, b.head
        libs[k] = [bl[bh[loc]] if bc[loc] else 0 for loc in g.loc_of]
    own = flat[:, P.OWN_STONES]
    theirs = flat[:, P.OPP_STONES]
    l1, l2, l3 = libs == 1, libs == 2, libs >= 3
    flat[:, P.OWN_LIBERTIES] = own * l1
    flat[:, P.OWN_LIBERTIES + 1] = own * l2
    flat[:, P.OWN_LIBERTIES + 2] = own * l3
    flat[:, P.OPP_LIBERTIES] = theirs * l1
    flat[:, P.OPP_LIBERTIES + 1] = theirs * l2
    flat[:, P.OPP_LIBERTIES + 2] = theirs * l3
    for k, b in enumerate(boards):
        ko = b.ko_move
        if ko is not None:
            flat[k, P.KO_PLANE, ko] = 1.0
    flat[:, P.ON_BOARD_PLANE] = 1.0
    flat[:, P.KOMI_PLANE] = np.where(me == BLACK, -komi, komi)[:, None] / P.KOMI_SCALE


def encode_game(game, index: int | None = None) -> np.ndarray:
    """Planes for position ``index`` of a Game (default: the current one)."""
    boards = game.boards if index is None else game.boards[: index + 1]
    return encode(boards[: -P.HISTORY - 1: -1], game.komi)
