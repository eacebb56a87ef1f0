"""Speed of azgo's Board against a deliberately naive flood-fill board, on 9x9 and 19x19.

Three figures per board and size (one core, pure Python):

(a) play + legality: random games as a Monte-Carlo player plays them: scan the points from a random
    offset, skip occupied points and own single-point eyes, try ``play`` (which checks legality and
    raises on an illegal move; retry with the next point), pass when nothing is left; a game ends on
    two passes or at 3*N*N moves, then a new one starts. Moves (passes included) per second.
(b) copy + play: copy a board, then play one legal move on the copy (a tree search's expansion), over
    positions taken from random games. Per second.
(c) legal masks: the legal-move mask of the side to move (azgo: ``legal_mask``; naive: ``is_legal``
    on every point), over positions taken from random games. Masks per second.

The naive board (below, in this file) is a 2D list of lists; every legality check and capture finds
chains and liberties by flood fill; simple ko only; nothing is incremental. It is cross-checked
against azgo (with superko off) before timing, so the comparison is between two correct boards.

Trials are interleaved (every board/size/figure once per round, rounds repeated) and medians
reported. ``--quick`` takes well under a minute; the default run a few minutes.

    python benchmarks/board_speed.py [--quick] [--profile]

Ends with ``RESULT board_moves_per_s_9x9 <n>`` and ``RESULT board_speedup_vs_naive <x>`` (9x9,
play + legality, azgo / naive).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from azgo.engine.board import BLACK, EMPTY, WALL, WHITE, Board, IllegalMove, Rules


# ============================================================================ the naive baseline
class NaiveIllegal(ValueError):
    pass


class NaiveBoard:
    """A deliberately naive Go board: 2D list, flood fill for every liberty question, simple ko."""

    def __init__(self, size: int):
        self.size = size
        self.grid = [[EMPTY] * size for _ in range(size)]
        self.to_move = BLACK
        self.ko = None  # (row, col) the side to move may not play, or None
        self.passes = 0

    def copy(self) -> "NaiveBoard":
        b = NaiveBoard.__new__(NaiveBoard)
        b.size = self.size
        b.grid = [row[:] for row in self.grid]
        b.to_move = self.to_move
        b.ko = self.ko
        b.passes = self.passes
        return b

    def neighbours(self, r: int, c: int) -> list[tuple[int, int]]:
        n = self.size
        out = []
        if r > 0:
            out.append((r - 1, c))
        if r < n - 1:
            out.append((r + 1, c))
        if c > 0:
            out.append((r, c - 1))
        if c < n - 1:
            out.append((r, c + 1))
        return out

    def group(self, r: int, c: int) -> tuple[set, set]:
        """(stones, liberties) of the chain at (r, c), by flood fill."""
        grid = self.grid
        color = grid[r][c]
        stones = {(r, c)}
        libs = set()
        stack = [(r, c)]
        while stack:
            p = stack.pop()
            for q in self.neighbours(*p):
                v = grid[q[0]][q[1]]
                if v == EMPTY:
                    libs.add(q)
                elif v == color and q not in stones:
                    stones.add(q)
                    stack.append(q)
        return stones, libs

    def is_legal(self, move: int, color: int | None = None) -> bool:
        n = self.size
        if move == n * n:
            return True
        color = self.to_move if color is None else color
        r, c = divmod(move, n)
        if self.grid[r][c] != EMPTY:
            return False
        if color == self.to_move and self.ko == (r, c):
            return False
        self.grid[r][c] = color
        try:
            for q in self.neighbours(r, c):
                if self.grid[q[0]][q[1]] == 3 - color and not self.group(*q)[1]:
                    return True  # captures
            return bool(self.group(r, c)[1])
        finally:
            self.grid[r][c] = EMPTY

    def play(self, move: int) -> None:
        n = self.size
        color = self.to_move
        if move == n * n:
            self.passes += 1
            self.ko = None
            self.to_move = 3 - color
            return
        if not self.is_legal(move):
            raise NaiveIllegal(move)
        r, c = divmod(move, n)
        grid = self.grid
        grid[r][c] = color
        captured = []
        for q in self.neighbours(r, c):
            if grid[q[0]][q[1]] == 3 - color:
                stones, libs = self.group(*q)
                if not libs:
                    for s in stones:
                        grid[s[0]][s[1]] = EMPTY
                    captured.extend(stones)
        self.ko = None
        if len(captured) == 1:
            stones, libs = self.group(r, c)
            if len(stones) == 1 and len(libs) == 1:
                self.ko = captured[0]
        self.passes = 0
        self.to_move = 3 - color

    def own_eye(self, move: int, color: int) -> bool:
        r, c = divmod(move, self.size)
        grid = self.grid
        if grid[r][c] != EMPTY:
            return False
        return all(grid[q[0]][q[1]] == color for q in self.neighbours(r, c))

    def is_empty(self, move: int) -> bool:
        r, c = divmod(move, self.size)
        return self.grid[r][c] == EMPTY

    def legal_mask(self) -> list[bool]:
        n2 = self.size * self.size
        return [self.is_legal(m) for m in range(n2)] + [True]

    def stones(self, color: int) -> list[int]:
        n = self.size
        return [r * n + c for r in range(n) for c in range(n) if self.grid[r][c] == color]


# ============================================================================ azgo adapters
def azgo_new(size: int) -> Board:
    return Board(size, Rules())


def naive_new(size: int) -> NaiveBoard:
    return NaiveBoard(size)


def azgo_own_eye(b: Board, move: int, color: int) -> bool:
    loc = b.g.loc_of[move]
    cells = b.cells
    if cells[loc] != EMPTY:
        return False
    for q in b.g.nbrs[loc]:
        c = cells[q]
        if c != color and c != WALL:
            return False
    return True


def azgo_is_empty(b: Board, move: int) -> bool:
    return b.cells[b.g.loc_of[move]] == EMPTY


IMPLS = {
    "azgo": (azgo_new, azgo_own_eye, azgo_is_empty, IllegalMove),
    "naive": (naive_new, NaiveBoard.own_eye, NaiveBoard.is_empty, NaiveIllegal),
}


# ============================================================================ workloads
# Rates are per second of this process's CPU time: the figures are for one core, and stay meaningful
# when other processes share the machine (wall time is printed for the whole run).
clock = time.process_time

def random_move(board, rng: random.Random, npts: int, own_eye, is_empty, illegal) -> int:
    """The Monte-Carlo player's move, *played*: random-offset scan, skip own eyes, retry on illegal."""
    color = board.to_move
    start = rng.randrange(npts)
    for i in range(npts):
        m = start + i
        if m >= npts:
            m -= npts
        if not is_empty(board, m) or own_eye(board, m, color):
            continue
        try:
            board.play(m)
            return m
        except illegal:
            continue
    board.play(npts)
    return npts


def random_games(impl: str, size: int, seed: int):
    """An endless stream of random-game moves (a new game after two passes or 3*N*N moves).

    A generator, so a timed measurement can stop mid-game and the next one goes on from there: every
    stage of the game is timed in proportion, however slow the board (a naive 19x19 game can take
    longer than one measurement)."""
    new, own_eye, is_empty, illegal = IMPLS[impl]
    rng = random.Random(seed)
    npts = size * size
    cap = 3 * npts
    while True:
        b = new(size)
        passes = 0
        for _ in range(cap):
            m = random_move(b, rng, npts, own_eye, is_empty, illegal)
            yield
            if m == npts:
                passes += 1
                if passes >= 2:
                    break
            else:
                passes = 0


def play_rate(stream, seconds: float) -> float:
    """(a) play + legality: moves per second, pulled from a ``random_games`` stream."""
    moves = 0
    t0 = clock()
    deadline = t0 + seconds
    while True:
        for _ in range(16):
            next(stream)
        moves += 16
        if clock() >= deadline:
            break
    return moves / (clock() - t0)


def sample_positions(size: int, count: int, seed: int) -> dict[str, list]:
    """The same positions for every board: {impl: [(board, a legal move for the side to move)]}.

    Positions are taken at every stage of random games played by azgo, then rebuilt on each board by
    replaying the same moves (legal under superko, so legal under simple ko too).
    """
    rng = random.Random(seed)
    npts = size * size
    picks = []  # (moves so far, next move)
    while len(picks) < count:
        b = Board(size, Rules())
        moves: list[int] = []
        passes = 0
        for _ in range(3 * npts):
            if rng.random() < 0.1:
                probe = b.copy()
                nxt = random_move(probe, rng, npts, azgo_own_eye, azgo_is_empty, IllegalMove)
                picks.append((moves[:], nxt))
            m = random_move(b, rng, npts, azgo_own_eye, azgo_is_empty, IllegalMove)
            moves.append(m)
            if m == npts:
                passes += 1
                if passes >= 2:
                    break
            else:
                passes = 0
    out = {}
    for impl, (new, *_rest) in IMPLS.items():
        boards = []
        for moves, nxt in picks[:count]:
            b = new(size)
            for m in moves:
                b.play(m)
            boards.append((b, nxt))
        out[impl] = boards
    return out


def _rate(op, positions: list, seconds: float) -> float:
    """Calls of ``op(board, move)`` per second over ``positions``, repeated for ``seconds``."""
    done = 0
    t0 = clock()
    deadline = t0 + seconds
    while True:
        for b, m in positions:
            op(b, m)
        done += len(positions)
        if clock() >= deadline:
            break
    return done / (clock() - t0)


def _copy_play(b, m) -> None:
    b.copy().play(m)


def copy_play_rate(positions: list, seconds: float) -> float:
    """(b) copy + play: per second."""
    return _rate(_copy_play, positions, seconds)


def mask_rate(positions: list, seconds: float) -> float:
    """(c) legal masks of the side to move: per second."""
    return _rate(lambda b, _m: b.legal_mask(), positions, seconds)


# ============================================================================ cross-check
def cross_check(size: int, games: int, seed: int) -> int:
    """Play random games on both boards in lockstep (azgo with superko off); stones and legality must
    agree. Returns the number of moves checked."""
    rng = random.Random(seed)
    npts = size * size
    checked = 0
    for _ in range(games):
        a = Board(size, Rules(superko=False))
        n = NaiveBoard(size)
        passes = 0
        for _ in range(3 * npts):
            mask_a = a.legal_mask().tolist()
            mask_n = n.legal_mask()
            if mask_a != mask_n:
                raise AssertionError(f"naive board disagrees with azgo on legality:\n{a}")
            m = random_move(a, rng, npts, azgo_own_eye, azgo_is_empty, IllegalMove)
            n.play(m)
            checked += 1
            if a.stones(BLACK) != n.stones(BLACK) or a.stones(WHITE) != n.stones(WHITE):
                raise AssertionError(f"naive board disagrees with azgo on stones:\n{a}")
            if m == npts:
                passes += 1
                if passes >= 2:
                    break
            else:
                passes = 0
    return checked


# ============================================================================ main
def fmt(x: float) -> str:
    return f"{x:,.0f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run (< 1 minute)")
    ap.add_argument("--trials", type=int, help="interleaved rounds (default 3 quick, 5 full)")
    ap.add_argument("--seconds", type=float, help="seconds per measurement (default 0.4 quick, 1.5 full)")
    ap.add_argument("--profile", action="store_true", help="cProfile azgo's 9x9 play + legality loop")
    args = ap.parse_args(argv)
    trials = args.trials or (3 if args.quick else 5)
    secs = args.seconds or (0.4 if args.quick else 1.5)
    sizes = (9, 19)

    t_start = time.perf_counter()
    checked = sum(cross_check(s, 2 if args.quick else 6, 17 + s) for s in sizes)
    print(f"naive board cross-checked against azgo (superko off): {checked} moves, stones and "
          f"legal masks equal")
    print(f"python {sys.version.split()[0]}; {trials} interleaved rounds x {secs:g} s per measurement; "
          f"azgo with default Rules() (suicide illegal, positional superko)")

    npos = 60 if args.quick else 150
    positions = {}
    for s in sizes:
        for impl, boards in sample_positions(s, npos, 1000 + s).items():
            positions[impl, s] = boards
    streams = {(impl, s): random_games(impl, s, seed=31 + s) for impl in IMPLS for s in sizes}
    results: dict[tuple[str, str, int], list[float]] = {}
    for t in range(trials):
        for s in sizes:
            for impl in IMPLS:
                results.setdefault(("play", impl, s), []).append(play_rate(streams[impl, s], secs))
                results.setdefault(("copy", impl, s), []).append(copy_play_rate(positions[impl, s], secs))
                results.setdefault(("mask", impl, s), []).append(mask_rate(positions[impl, s], secs))

    med = {k: statistics.median(v) for k, v in results.items()}
    labels = {"play": "play + legality (moves/s)", "copy": "copy + play (per s)",
              "mask": "legal mask (masks/s)"}
    print()
    print(f"{'figure':28s} {'size':>5s} {'azgo':>12s} {'naive':>12s} {'azgo/naive':>11s}   azgo spread")
    for what in ("play", "copy", "mask"):
        for s in sizes:
            a, n = med[what, "azgo", s], med[what, "naive", s]
            lo, hi = min(results[what, "azgo", s]), max(results[what, "azgo", s])
            print(f"{labels[what]:28s} {s:>3d}x{s:<1d} {fmt(a):>12s} {fmt(n):>12s} {a / n:>10.1f}x"
                  f"   {fmt(lo)}..{fmt(hi)}")
    print(f"\n(medians of {trials} interleaved trials, rates per CPU-second of this process; wall time {time.perf_counter() - t_start:.0f} s)")

    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        play_rate(random_games("azgo", 9, seed=5), 3.0)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)

    print(f"RESULT board_moves_per_s_9x9 {med['play', 'azgo', 9]:.0f}")
    print(f"RESULT board_speedup_vs_naive {med['play', 'azgo', 9] / med['play', 'naive', 9]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
