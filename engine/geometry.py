"""The padded board layout of one board size: cell values, point <-> cell tables, neighbours, Zobrist keys.

A board of size N is a flat ``bytearray`` of ``(N + 2) * (N + 1) + 1`` cells: point (row, col) lives at
``loc = (col + 1) + (row + 1) * (N + 1)``; off-board cells hold ``WALL``, and one padding column is shared
by the left and right edges. `geometry` builds the tables of a size once; every `azgo.engine.board.Board`
of that size shares them.
"""

from __future__ import annotations

import random

import numpy as np

from .coords import check_size

EMPTY, BLACK, WHITE, WALL = 0, 1, 2, 3


class Geometry:
    """Precomputed tables for one board size (shared by every board of that size)."""

    def __init__(self, size: int):
        check_size(size)
        n = size
        w = n + 1
        self.size = n
        self.stride = w
        self.npoints = n * n
        self.ncells = (n + 2) * w + 1
        self.loc_of = [(c + 1) + (r + 1) * w for r in range(n) for c in range(n)]
        self.move_of = [-1] * self.ncells
        for m, loc in enumerate(self.loc_of):
            self.move_of[loc] = m
        self.loc_array = np.array(self.loc_of, dtype=np.intp)
        self.nbrs: list[tuple[int, ...]] = [()] * self.ncells
        for loc in self.loc_of:
            self.nbrs[loc] = (loc - w, loc - 1, loc + 1, loc + w)
        empty = bytearray([WALL]) * self.ncells
        for loc in self.loc_of:
            empty[loc] = EMPTY
        self.empty_cells = bytes(empty)
        rng = random.Random(0xA260 + n)
        self.zobrist = (
            [0] * self.ncells,
            [rng.getrandbits(64) for _ in range(self.ncells)],
            [rng.getrandbits(64) for _ in range(self.ncells)],
        )


_GEOMETRIES: dict[int, Geometry] = {}


def geometry(size: int) -> Geometry:
    """The shared tables for a board size (built once)."""
    g = _GEOMETRIES.get(size)
    if g is None:
        g = _GEOMETRIES[size] = Geometry(size)
    return g
