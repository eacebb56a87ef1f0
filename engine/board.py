"""The rules of Go on one position: stones, chains, liberties, captures, ko, positional superko.

Representation (chosen for speed in pure Python, see benchmarks/board_speed.py):

* The board is a flat padded ``bytearray`` of ``(N + 2) * (N + 1) + 1`` cells: point (row, col) lives at
  ``loc = (col + 1) + (row + 1) * (N + 1)``; off-board cells hold ``WALL``. One padding column is shared
  by the left and right edges. ``np.frombuffer`` views it without a copy. The tables of that layout
  (neighbours, point <-> cell, Zobrist keys) are `azgo.engine.geometry`'s, shared by every board of a size.
* Chains are circular linked lists of stones (``nxt``) with a representative stone (``head``); the
  head's entries of ``libs`` (exact liberty count), ``csize`` (stones) and ``chash`` (XOR of the
  chain's Zobrist keys) describe the chain, so liberty and capture questions are O(1) per point.
* The position hash is an incremental 64-bit Zobrist hash of the stones (positional: side to move is
  not part of it). ``history`` holds the hashes of every position of the game so far for positional
  superko, and ``seen_counts`` the per-colour stone counts they had, which lets the legal-move mask
  skip the superko test for every point where no repetition is possible.

Moves are azgo move indices (``row * N + col``, pass = ``N * N``; see ``azgo.engine.coords``).
Colours are ``BLACK = 1`` and ``WHITE = 2``; ``opponent(c) == 3 - c``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coords import CoordinateError
from .geometry import BLACK, EMPTY, WALL, WHITE, Geometry, geometry  # noqa: F401 (re-exported)
COLOR_NAMES = {BLACK: "black", WHITE: "white"}


def opponent(color: int) -> int:
    """The other colour."""
    return 3 - color


@dataclass(frozen=True)
class Rules:
    """Rules switches. Defaults: suicide illegal, positional superko (Chinese / Tromp-Taylor area rules).

    ``suicide=True`` allows multi-stone suicide as Tromp-Taylor does (single-stone suicide then only
    passes the turn, and positional superko forbids it as it repeats the position).
    ``superko=False`` leaves only the simple ko rule (as GNU Go checks it).
    """

    suicide: bool = False
    superko: bool = True


class IllegalMove(ValueError):
    """A move the rules forbid; ``reason`` is one of occupied, suicide, ko, superko."""

    def __init__(self, reason: str, move: int | None = None):
        super().__init__(f"illegal move: {reason}")
        self.reason = reason
        self.move = move


class Board:
    """One Go position with the side to move, ko state, pass count and superko history.

    ``play`` mutates; ``copy`` is cheap (a handful of list/bytearray slices) so a tree search can copy
    per node. The board does not stop play after two passes; ``game_over`` reports it.
    """

    __slots__ = (
        "size", "g", "rules", "cells", "head", "nxt", "libs", "csize", "chash", "hash",
        "ko", "ko_color", "to_move", "passes", "history", "seen_counts", "counts",
        "prisoners", "last_move",
    )

    def __init__(self, size: int = 19, rules: Rules = Rules()):
        g = geometry(size)
        self.size = size
        self.g = g
        self.rules = rules
        self._clear_chains(bytearray(g.empty_cells))
        self.ko = 0  # loc of the simple-ko point, 0 = none
        self.ko_color = EMPTY  # the colour that may not play at ``ko``
        self.to_move = BLACK
        self.passes = 0
        self.prisoners = [0, 0, 0]  # stones captured *by* each colour
        self.last_move: int | None = None
        self.history: set[int] = {0}
        self.seen_counts: set[int] = {BLACK, WHITE}  # key n*4+colour of every past position

    # ------------------------------------------------------------------ basics
    @property
    def pass_move(self) -> int:
        """The move index of a pass on this board."""
        return self.g.npoints

    @property
    def game_over(self) -> bool:
        """True after two consecutive passes."""
        return self.passes >= 2

    def copy(self) -> "Board":
        """An independent copy (history set included)."""
        b = Board.__new__(Board)
        b.size = self.size
        b.g = self.g
        b.rules = self.rules
        b.cells = self.cells[:]
        b.head = self.head[:]
        b.nxt = self.nxt[:]
        b.libs = self.libs[:]
        b.csize = self.csize[:]
        b.chash = self.chash[:]
        b.hash = self.hash
        b.ko = self.ko
        b.ko_color = self.ko_color
        b.to_move = self.to_move
        b.passes = self.passes
        b.counts = self.counts[:]
        b.prisoners = self.prisoners[:]
        b.last_move = self.last_move
        b.history = self.history.copy()
        b.seen_counts = self.seen_counts.copy()
        return b

    def _loc(self, move: int) -> int:
        if not 0 <= move < self.g.npoints:
            raise CoordinateError(f"move index {move} is not a point of the {self.size}x{self.size} board")
        return self.g.loc_of[move]

    def color_at(self, move: int) -> int:
        """EMPTY, BLACK or WHITE at a point."""
        return self.cells[self._loc(move)]

    def liberties(self, move: int) -> int:
        """Liberties of the chain at a point (0 for an empty point). O(1)."""
        loc = self._loc(move)
        return self.libs[self.head[loc]] if self.cells[loc] in (BLACK, WHITE) else 0

    def chain(self, move: int) -> list[int]:
        """The stones (move indices) of the chain at a point, empty list for an empty point."""
        loc = self._loc(move)
        if self.cells[loc] not in (BLACK, WHITE):
            return []
        out, s = [], loc
        while True:
            out.append(self.g.move_of[s])
            s = self.nxt[s]
            if s == loc:
                return sorted(out)

    def chains(self) -> list[list[int]]:
        """Every chain on the board (each as `chain` gives it), in the order of their first point."""
        seen: set[int] = set()
        out = []
        for m in range(self.size * self.size):
            if m in seen or self.color_at(m) not in (BLACK, WHITE):
                continue
            ch = self.chain(m)
            seen.update(ch)
            out.append(ch)
        return out

    def stones(self, color: int) -> list[int]:
        """All points holding ``color``, in move-index order."""
        cells = self.cells
        return [m for m, loc in enumerate(self.g.loc_of) if cells[loc] == color]

    def to_array(self) -> np.ndarray:
        """The board as an ``int8[N, N]`` array of EMPTY/BLACK/WHITE, row 0 at the top."""
        flat = np.frombuffer(self.cells, dtype=np.uint8)[self.g.loc_array]
        return flat.reshape(self.size, self.size).astype(np.int8)

    def liberty_array(self) -> np.ndarray:
        """Liberties of the chain through each point, ``int16[N, N]`` (0 where empty)."""
        cells, libs, head = self.cells, self.libs, self.head
        vals = [libs[head[loc]] if cells[loc] else 0 for loc in self.g.loc_of]
        return np.array(vals, dtype=np.int16).reshape(self.size, self.size)

    @property
    def ko_move(self) -> int | None:
        """The simple-ko point (move index) the side to move may not take, or None."""
        if self.ko and self.ko_color == self.to_move:
            return self.g.move_of[self.ko]
        return None

    # ------------------------------------------------------------------ legality
    def illegal_reason(self, move: int, color: int | None = None) -> str | None:
        """Why ``color`` (default: side to move) may not play ``move``; None when legal. Pass is legal."""
        if move == self.g.npoints:
            return None
        return self._reason(self._loc(move), self.to_move if color is None else color)

    def is_legal(self, move: int, color: int | None = None) -> bool:
        """Whether ``color`` (default: side to move) may play ``move`` now."""
        if move == self.g.npoints:
            return True
        if not 0 <= move < self.g.npoints:
            return False
        return self._reason(self.g.loc_of[move], self.to_move if color is None else color) is None

    def _reason(self, loc: int, color: int) -> str | None:
        cells = self.cells
        if cells[loc] != EMPTY:
            return "occupied"
        if loc == self.ko and color == self.ko_color:
            return "ko"
        head, libs = self.head, self.libs
        opp = 3 - color
        breathes = False
        captured: list[int] = []
        for q in self.g.nbrs[loc]:
            c = cells[q]
            if c == EMPTY:
                breathes = True
            elif c == color:
                if libs[head[q]] > 1:
                    breathes = True
            elif c == opp:
                h = head[q]
                if libs[h] == 1 and h not in captured:
                    captured.append(h)
        rules = self.rules
        if captured:
            if rules.superko:
                new_hash = self.hash ^ self.g.zobrist[color][loc]
                for h in captured:
                    new_hash ^= self.chash[h]
                if new_hash in self.history:
                    return "superko"
            return None
        if not breathes:
            if not rules.suicide:
                return "suicide"
            if rules.superko:
                after = self.copy()
                after._place(loc, color)
                if after.hash in self.history:
                    return "superko"
            return None
        if rules.superko and ((self.counts[color] + 1) * 4 + color) in self.seen_counts:
            if (self.hash ^ self.g.zobrist[color][loc]) in self.history:
                return "superko"
        return None

    def legal_mask(self, color: int | None = None) -> np.ndarray:
        """``bool[N*N + 1]``: which moves ``color`` (default: side to move) may play; pass is always legal.

        Vectorised: an empty point with an empty neighbour is legal unless it could repeat a position;
        only the points with no empty neighbour (suicide, capture or ko candidates) are examined one by
        one, and the superko test runs only when the mover's stone count after the move occurred before.
        """
        if color is None:
            color = self.to_move
        g = self.g
        w = g.stride
        n = g.ncells
        cells = np.frombuffer(self.cells, dtype=np.uint8)
        empty = cells == EMPTY
        inner = empty[w: n - w]
        breathing = empty[w - 1: n - w - 1] | empty[w + 1: n - w + 1] | empty[: n - 2 * w] | empty[2 * w:]
        easy = inner & breathing
        mask = np.empty(g.npoints + 1, dtype=bool)
        idx = g.loc_array - w
        mask[:-1] = easy[idx]
        mask[-1] = True
        move_of = g.move_of
        reason = self._reason
        for off in np.flatnonzero(inner & ~breathing).tolist():
            loc = off + w
            mask[move_of[loc]] = reason(loc, color) is None
        if self.rules.superko:
            # A repetition needs the mover's stone count after the move to have occurred before
            # (captures lower only the opponent's count, so this covers capturing moves too).
            if ((self.counts[color] + 1) * 4 + color) in self.seen_counts:
                for off in np.flatnonzero(easy).tolist():
                    loc = off + w
                    mask[move_of[loc]] = reason(loc, color) is None
        return mask

    def fills_own_eye(self, move: int, color: int) -> bool:
        """Whether ``move`` puts a ``color`` stone into its own eye: an empty point whose every
        neighbour on the board is a ``color`` stone and that is not a false eye (the opponent holds
        fewer than two of its diagonals, or none on the edge). Filling one never helps a group (it
        can only take a liberty and, repeated, the group's life), the rule every playout engine uses."""
        if move == self.pass_move:
            return False
        loc = self._loc(move)
        cells = self.cells
        if cells[loc] != EMPTY or any(cells[n] not in (color, WALL) for n in self.g.nbrs[loc]):
            return False
        w = self.g.stride
        diagonals = [cells[d] for d in (loc - w - 1, loc - w + 1, loc + w - 1, loc + w + 1)]
        hostile = sum(1 for c in diagonals if c == 3 - color)
        on_edge = WALL in diagonals
        return hostile < (1 if on_edge else 2)

    def legal_moves(self, color: int | None = None) -> list[int]:
        """The legal move indices (pass included, last)."""
        return np.flatnonzero(self.legal_mask(color)).tolist()

    # ------------------------------------------------------------------ playing
    def play(self, move: int, color: int | None = None) -> None:
        """Play ``move`` for ``color`` (default: side to move; out-of-turn play is allowed, as GTP does).

        Raises IllegalMove (occupied, suicide, ko, superko) or CoordinateError; the board is unchanged
        then. Afterwards the opponent of ``color`` is to move.
        """
        if color is None:
            color = self.to_move
        elif color != BLACK and color != WHITE:
            raise ValueError(f"colour must be BLACK or WHITE, got {color!r}")
        if move == self.g.npoints:
            self.passes += 1
            self.ko = 0
            self.to_move = 3 - color
            self.last_move = move
            return
        loc = self._loc(move)
        why = self._reason(loc, color)
        if why is not None:
            raise IllegalMove(why, move)
        self._place(loc, color)
        self.last_move = move

    def play_unchecked(self, move: int) -> None:
        """Play a move already known to be legal for the side to move (search hot path)."""
        if move == self.g.npoints:
            self.passes += 1
            self.ko = 0
            self.to_move = 3 - self.to_move
        else:
            self._place(self.g.loc_of[move], self.to_move)
        self.last_move = move

    def _place(self, loc: int, color: int) -> None:
        cells, head, nxt, libs, csize, chash = self.cells, self.head, self.nxt, self.libs, self.csize, self.chash
        z = self.g.zobrist[color][loc]
        cells[loc] = color
        head[loc] = loc
        nxt[loc] = loc
        csize[loc] = 1
        chash[loc] = z
        self.hash ^= z
        self.counts[color] += 1
        free = 0
        touched: list[int] = []
        for q in self.g.nbrs[loc]:
            c = cells[q]
            if c == EMPTY:
                free += 1
            elif c != WALL:
                h = head[q]
                if h not in touched:
                    touched.append(h)
                    libs[h] -= 1
        libs[loc] = free
        opp = 3 - color
        captured = 0
        ko_loc = 0
        friends: list[int] = []
        for h in touched:
            if cells[h] == opp:
                if libs[h] == 0:
                    captured += self._remove(h)
                    ko_loc = h
            else:
                friends.append(h)
        mine = loc
        if friends:
            best = 1
            for h in friends:
                if csize[h] > best:
                    mine, best = h, csize[h]
            if mine != loc:
                self._merge(mine, loc)
            for h in friends:
                if h != mine:
                    self._merge(mine, h)
        if libs[mine] == 0:  # suicide: only reachable when the rules allow it
            self._remove(mine)
            self.ko = 0
        elif captured == 1 and csize[mine] == 1 and libs[mine] == 1:
            self.ko = ko_loc
            self.ko_color = opp
        else:
            self.ko = 0
        self.passes = 0
        self.to_move = opp
        self.history.add(self.hash)
        counts = self.counts
        self.seen_counts.add(counts[BLACK] * 4 + BLACK)
        self.seen_counts.add(counts[WHITE] * 4 + WHITE)

    def _remove(self, h: int) -> int:
        """Take the chain with head ``h`` off the board; give its points back as liberties. Returns stones."""
        cells, head, nxt, libs, nbrs = self.cells, self.head, self.nxt, self.libs, self.g.nbrs
        color = cells[h]
        n = 0
        s = h
        while True:
            cells[s] = EMPTY
            n += 1
            s = nxt[s]
            if s == h:
                break
        while True:
            seen: list[int] = []
            for q in nbrs[s]:
                c = cells[q]
                if c == BLACK or c == WHITE:
                    hq = head[q]
                    if hq not in seen:
                        seen.append(hq)
                        libs[hq] += 1
            s = nxt[s]
            if s == h:
                break
        self.hash ^= self.chash[h]
        self.counts[color] -= n
        self.prisoners[3 - color] += n
        return n

    def _merge(self, keep: int, absorb: int) -> None:
        """Join chain ``absorb`` into chain ``keep`` (same colour, now adjacent), fixing liberties."""
        cells, head, nxt, nbrs = self.cells, self.head, self.nxt, self.g.nbrs
        color = cells[keep]
        gained = 0
        s = absorb
        while True:
            for q in nbrs[s]:
                if cells[q] == EMPTY:
                    for r in nbrs[q]:
                        if head[r] == keep and cells[r] == color:
                            break
                    else:
                        gained += 1
            head[s] = keep
            s = nxt[s]
            if s == absorb:
                break
        self.libs[keep] += gained
        nxt[keep], nxt[absorb] = nxt[absorb], nxt[keep]
        self.csize[keep] += self.csize[absorb]
        self.chash[keep] ^= self.chash[absorb]

    # ------------------------------------------------------------------ setup
    def setup(self, black=(), white=(), empty=(), to_move: int | None = None) -> None:
        """Add/remove setup stones (SGF AB/AW/AE, handicap) and restart the superko history here.

        Raises ValueError if the result has a chain without liberties (an impossible position).
        """
        g = self.g
        cells = bytearray(self.cells)
        for moves, color in ((black, BLACK), (white, WHITE), (empty, EMPTY)):
            for m in moves:
                if not 0 <= m < g.npoints:
                    raise CoordinateError(f"setup point {m} is off the {self.size}x{self.size} board")
                cells[g.loc_of[m]] = color
        self._rebuild(cells)
        if to_move is not None:
            self.to_move = to_move

    def _clear_chains(self, cells: bytearray) -> None:
        """Take ``cells`` as the stones and reset all chain data, the hash and the stone counts."""
        n = self.g.ncells
        self.cells = cells
        self.head = [0] * n
        self.nxt = [0] * n
        self.libs = [0] * n
        self.csize = [0] * n
        self.chash = [0] * n
        self.hash = 0
        self.counts = [0, 0, 0]  # stones on the board per colour

    def _rebuild(self, cells: bytearray) -> None:
        g = self.g
        self._clear_chains(cells)
        n = g.ncells
        head, nxt, nbrs, zob = self.head, self.nxt, g.nbrs, g.zobrist
        done = bytearray(n)
        for loc in g.loc_of:
            color = cells[loc]
            if color == EMPTY or done[loc]:
                continue
            stones, libset, stack = [], set(), [loc]
            done[loc] = 1
            while stack:
                s = stack.pop()
                stones.append(s)
                for q in nbrs[s]:
                    c = cells[q]
                    if c == EMPTY:
                        libset.add(q)
                    elif c == color and not done[q]:
                        done[q] = 1
                        stack.append(q)
            if not libset:
                from .coords import move_to_gtp
                where = move_to_gtp(g.move_of[loc], self.size)
                raise ValueError(f"setup leaves the chain at {where} without liberties")
            hz = 0
            for i, s in enumerate(stones):
                head[s] = loc
                nxt[s] = stones[(i + 1) % len(stones)]
                hz ^= zob[color][s]
            self.libs[loc] = len(libset)
            self.csize[loc] = len(stones)
            self.chash[loc] = hz
            self.hash ^= hz
            self.counts[color] += len(stones)
        self.ko = 0
        self.passes = 0
        self.history = {self.hash}
        self.seen_counts = {self.counts[BLACK] * 4 + BLACK, self.counts[WHITE] * 4 + WHITE}

    # ------------------------------------------------------------------ display
    def __str__(self) -> str:
        from .coords import GTP_COLUMNS
        n = self.size
        cols = " ".join(GTP_COLUMNS[:n])
        lines = ["   " + cols]
        chars = {EMPTY: ".", BLACK: "X", WHITE: "O"}
        for r in range(n):
            row = " ".join(chars[self.cells[self.g.loc_of[r * n + c]]] for c in range(n))
            lines.append(f"{n - r:2d} {row} {n - r:2d}")
        lines.append("   " + cols)
        return "\n".join(lines)
