"""Ladder reading (numpy-free, pure functions over a ``Board``): which escapes from atari run into a
ladder that the runner loses.

A ladder is the chase in which the attacker keeps the defending chain at two liberties, ataris it, and
the defender extends at its last liberty, until the chain reaches three liberties (escaped) or cannot
get more than one (captured). The network of a young run does not see far enough along a ladder and the
search does not read it to its end within one move's playouts, so azgo's games against GNU Go kept
losing groups that ran out of atari into a ladder GNU Go had read. ``losing_escapes`` names those moves
so the search can lower their prior (``SearchConfig.ladder_prior``), and ``ladder_attacks`` names the ataris
that win the chase so it can raise theirs (``SearchConfig.ladder_capture_prior``).

The reader is deliberately narrow: the attacker tries both liberties of a two-liberty chain; the
defender only extends at its one liberty, or escapes at once if it can capture an attacking chain that
touches it (a counter-atari elsewhere is not read). So "captured" can be wrong when the defender has
such a resource, which is why the search lowers the prior rather than forbidding the move.
"""

from __future__ import annotations

from .board import BLACK, EMPTY, WHITE, Board

MAX_LADDER_PLIES = 120  # longer than any ladder on a 19x19 board (about 2 x 19 moves plus turns)
MAX_READS = 200  # attacking moves tried in one read: a ladder needs one per ply; branching reads stop here


def _liberties(board: Board, move: int) -> set[int]:
    """Liberty points (move indices) of the chain at ``move``."""
    g = board.g
    cells = board.cells
    nbrs = g.nbrs
    move_of = g.move_of
    loc = g.loc_of[move]
    out: set[int] = set()
    s = loc
    nxt = board.nxt
    while True:
        for nb in nbrs[s]:
            if cells[nb] == EMPTY:
                out.add(move_of[nb])
        s = nxt[s]
        if s == loc:
            return out


def _touches_capturable(board: Board, move: int, attacker: int) -> bool:
    """Whether an ``attacker`` chain touching the chain at ``move`` is in atari (the defender takes it)."""
    g = board.g
    cells = board.cells
    nbrs = g.nbrs
    loc = g.loc_of[move]
    libs, head, nxt = board.libs, board.head, board.nxt
    s = loc
    while True:
        for nb in nbrs[s]:
            if cells[nb] == attacker and libs[head[nb]] == 1:
                return True
        s = nxt[s]
        if s == loc:
            return False


def ladder_captures(board: Board, move: int, max_reads: int = MAX_READS) -> bool:
    """Whether the chain at ``move``, with exactly two liberties and its opponent to move, is captured
    in a ladder. ``board`` is not changed. False for a chain without exactly two liberties, and False
    (not proven) when the read needs more than ``max_reads`` attacking moves."""
    return _captured(board, move, 0, [max_reads])


def _captured(board: Board, move: int, plies: int, budget: list[int]) -> bool:
    if board.color_at(move) not in (BLACK, WHITE) or board.liberties(move) != 2 or plies > MAX_LADDER_PLIES:
        return False
    return any(_atari_works(board, move, atari, plies, budget) for atari in sorted(_liberties(board, move)))


def _atari_works(board: Board, move: int, atari: int, plies: int, budget: list[int]) -> bool:
    """Whether the attacker's atari at ``atari`` on the two-liberty chain at ``move`` wins the ladder."""
    if budget[0] <= 0:
        return False
    budget[0] -= 1
    defender = board.color_at(move)
    attacker = 3 - defender
    if not board.is_legal(atari, attacker):
        return False
    b = board.copy()
    b.play(atari, attacker)
    if b.liberties(move) != 1 or _touches_capturable(b, move, attacker):
        return False  # the atari failed (it gave no atari, or the defender captures the attacker)
    (run,) = _liberties(b, move)
    if not b.is_legal(run, defender):
        return True
    b.play(run, defender)
    libs = b.liberties(move)
    if libs <= 1:
        return True
    return libs == 2 and _captured(b, move, plies + 2, budget)


def ladder_attacks(board: Board) -> list[int]:
    """Ataris of the side to move that win a ladder against the opponent's chain at ``board.last_move``
    (the chain the opponent's last move made or joined) when it has exactly two liberties: the answer
    to a losing escape, and to a stone played where it can be chased. In move order."""
    m = board.last_move
    if m is None or m >= board.g.npoints or board.color_at(m) != 3 - board.to_move or board.liberties(m) != 2:
        return []
    budget = [MAX_READS]
    return sorted(a for a in _liberties(board, m) if _atari_works(board, m, a, 0, budget))


def losing_escapes(board: Board) -> list[int]:
    """Moves of the side to move that extend one of its chains out of atari to exactly two liberties
    where the opponent then captures the chain in a ladder (see ``ladder_captures``), in move order."""
    me = board.to_move
    g = board.g
    cells, libs, head = board.cells, board.libs, board.head
    seen: set[int] = set()
    out: list[int] = []
    for loc in g.loc_of:
        if cells[loc] != me or libs[head[loc]] != 1 or head[loc] in seen:
            continue
        seen.add(head[loc])
        (lib,) = _liberties(board, g.move_of[loc])
        if lib in out or not board.is_legal(lib, me):
            continue
        b = board.copy()
        b.play(lib, me)
        if b.liberties(lib) == 2 and not _touches_capturable(b, lib, 3 - me) and ladder_captures(b, lib):
            out.append(lib)
    return sorted(out)
