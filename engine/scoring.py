"""Area scoring (Chinese / Tromp-Taylor) and the final-ownership map it implies.

A point counts for a colour if it holds that colour's stone, or if it is empty and every path of
empty points from it reaches stones of that colour only. ``area_ownership``/``area_score`` score the
board as it stands (Tromp-Taylor: games played out to two passes with every dead stone captured);
``dead_stones`` finds the stones to take off first when a finished game still holds dead stones, as
GNU Go's ``final_status_list dead`` does.
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


# ------------------------------------------------------------------------ dead stones
# A played-out position (both sides passed; no move left that changes the area score once dead stones
# are taken off) still holds the stones nobody bothered to capture. GNU Go's `final_status_list dead`
# calls them dead; the rules below find the same stones without a search: a group is alive when it has
# two eyes (or one big one), an eye being a region it encloses in which the enemy stones cannot live
# themselves (a recursion on strictly smaller regions); enemy stones inside a living group's eyes are
# dead; when every remaining group is eyeless (a capturing race), the weakest one dies first.

BIG_EYE = 4  # an eye region with this many points (empty, dead, or enemy stones in atari) is two eyes
RACE_LIBERTIES = 2  # an eyeless group dies in a race only with a chain this short of liberties


class _Position:
    """The stones of a Board by move index (EMPTY/BLACK/WHITE) with neighbour and diagonal tables."""

    def __init__(self, board: Board):
        n = board.size
        self.size = n
        self.cells = board.to_array().reshape(-1).tolist()
        self.nbrs = [tuple(q for q in (m - n if m >= n else -1, m + n if m < n * (n - 1) else -1,
                                       m - 1 if m % n else -1, m + 1 if m % n < n - 1 else -1) if q >= 0)
                     for m in range(n * n)]
        self.diags = [tuple((r + dr) * n + c + dc for dr in (-1, 1) for dc in (-1, 1)
                            if 0 <= r + dr < n and 0 <= c + dc < n)
                      for r, c in (divmod(m, n) for m in range(n * n))]


def _live(pos: _Position, dead: set, q: int, color: int) -> bool:
    """A stone of ``color`` at ``q`` that is not (yet) marked dead."""
    return pos.cells[q] == color and q not in dead


def _flood(pos: _Position, start: int, inside) -> list[int]:
    """The points connected to ``start`` through points where ``inside(point)`` holds (start included)."""
    seen, stack = {start}, [start]
    while stack:
        p = stack.pop()
        for q in pos.nbrs[p]:
            if q not in seen and inside(q):
                seen.add(q)
                stack.append(q)
    return list(seen)


def _chain(pos: _Position, dead: set, q: int) -> list[int]:
    color = pos.cells[q]
    return _flood(pos, q, lambda r: _live(pos, dead, r, color))


def _liberties(pos: _Position, dead: set, stones) -> set[int]:
    """Empty points (dead stones count as taken off) next to ``stones``."""
    cells, nbrs = pos.cells, pos.nbrs
    return {r for q in stones for r in nbrs[q] if cells[r] == EMPTY or r in dead}


def _region(pos: _Position, dead: set, start: int, wall: int) -> list[int]:
    """The region containing ``start`` bounded by the live stones of colour ``wall``."""
    return _flood(pos, start, lambda q: not _live(pos, dead, q, wall))


def _eyes(pos: _Position, dead: set, color: int, region: list[int]) -> list[tuple[list[int], int]]:
    """The eyes of the live ``color`` stones inside ``region`` (a region bounded by the opponent): each
    sub-region they enclose, smaller than ``region``, in which the opponent's stones cannot live and have
    fewer liberties than the enclosing stones; worth 2 when big (see BIG_EYE), 0 when a false
    single-point eye (dropped), else 1. Returns (eye region, worth) pairs."""
    opp = 3 - color
    inside = set(region)
    seen: set[int] = set()
    out = []
    for p in region:
        if p in seen or _live(pos, dead, p, color):
            continue
        eye = _region(pos, dead, p, color)
        seen.update(eye)
        enemies = [q for q in eye if _live(pos, dead, q, opp)]
        points = len(eye) - len(enemies)
        if len(eye) >= len(region) or not points or _lives(pos, dead, opp, eye):
            continue
        owners: set[int] = set()
        for q in {r for e in eye for r in pos.nbrs[e] if r in inside and _live(pos, dead, r, color)}:
            if q not in owners:
                owners.update(_chain(pos, dead, q))
        if enemies and len(_liberties(pos, dead, owners)) < len(_liberties(pos, dead, enemies)):
            continue  # a capturing race the enclosing stones lose: not their eye
        in_atari = [q for q in enemies if len(_liberties(pos, dead, _chain(pos, dead, q))) == 1]
        if points + len(in_atari) >= BIG_EYE:
            out.append((eye, 2))
        elif len(eye) > 1 or not _false_eye(pos, dead, eye[0], opp):
            out.append((eye, 1))
    return out


def _false_eye(pos: _Position, dead: set, p: int, opp: int) -> bool:
    """A single-point eye with too many enemy stones on its diagonals (any at the edge, two inside)."""
    diagonals = pos.diags[p]
    bad = sum(1 for q in diagonals if _live(pos, dead, q, opp))
    return bad > 0 if len(diagonals) < 4 else bad > 1


def _lives(pos: _Position, dead: set, color: int, region: list[int]) -> bool:
    """Whether the live ``color`` stones in ``region`` have two eyes there (see ``_eyes``)."""
    if not any(_live(pos, dead, q, color) for q in region):
        return False
    return sum(worth for _, worth in _eyes(pos, dead, color, region)) >= 2


def _seki(pos: _Position, dead: set, color: int, stones: list[int]) -> list[int] | None:
    """Whether ``stones`` (eyeless or one-eyed) are in seki with a neighbouring enemy chain: none of their
    chains is in atari, their liberties are shared with that chain or are their own eye points, the chain's
    liberties are shared or at most one eye point of its own, and filling any shared liberty would leave the
    enemy in atari.
    Returns that enemy chain (None: no seki)."""
    opp = 3 - color
    libs = _liberties(pos, dead, stones)
    if len(libs) < 2:
        return None
    for q in stones:  # a chain in atari is no seki: the enemy takes it (in a ko, then connects) and the rest
        if len(_liberties(pos, dead, _chain(pos, dead, q))) < 2:  # falls, as GNU Go reads it
            return None
    own_eyes = {q for q in libs if all(_live(pos, dead, r, color) for r in pos.nbrs[q])}
    seen: set[int] = set()
    for start in {r for q in stones for r in pos.nbrs[q] if _live(pos, dead, r, opp)}:
        if start in seen:
            continue
        chain = _chain(pos, dead, start)
        seen.update(chain)
        chain_libs = _liberties(pos, dead, chain)
        shared = chain_libs & libs
        eyes = {q for q in chain_libs if all(_live(pos, dead, r, opp) for r in pos.nbrs[q])}
        if not shared or len(chain_libs) < 2 or len(eyes) > 1 or not chain_libs <= shared | eyes \
                or not libs <= shared | own_eyes:
            continue
        if all(len(_liberties_after(pos, dead, chain, q, opp)) <= 1 for q in shared):
            return chain
    return None


def _fill_kills(pos: _Position, dead: set, color: int, stones: list[int], partner: list[int]) -> bool:
    """Whether ``color`` can break a seki shape by filling a shared liberty itself: its stones there go into
    atari, the partner takes them, and the points it gains make a killable eye space (`_killable_space`),
    so the eyeless partner dies (GNU Go reads such a partner dead and ``stones`` alive)."""
    partner_libs = _liberties(pos, dead, partner)
    if any(all(_live(pos, dead, r, 3 - color) for r in pos.nbrs[q]) for q in partner_libs):
        return False  # the partner has an eye point of its own: the fill does not kill it
    shared = _liberties(pos, dead, stones) & partner_libs
    for q in shared:
        group = _group_after(pos, dead, stones, q, color)
        if _killable_space(pos, group) and len(_liberties(pos, dead, group) - {q}) == 1 \
                and len(partner_libs - {q}) >= 1:
            return True
    return False


def _killable_space(pos: _Position, points: set[int]) -> bool:
    """Whether an eye space of these points is one eye only when the opponent plays first (nakade): three
    points or fewer, the square and the pyramid (T) four, the bulky and the cross five."""
    k = len(points)
    if k <= 3:
        return True
    if k > 5:
        return False
    degree = [sum(1 for r in pos.nbrs[p] if r in points) for p in points]
    edges = sum(degree) // 2
    if k == 4:
        return edges == 4 or max(degree) == 3  # the square (a cycle) or the pyramid
    return edges >= 5 or max(degree) == 4  # the bulky five (a square and one) or the cross


def _group_after(pos: _Position, dead: set, chain: list[int], point: int, color: int) -> set[int]:
    """The stones of ``chain`` and ``point`` after ``color`` plays ``point`` (joining the chains next to it)."""
    group = set(chain) | {point}
    for q in pos.nbrs[point]:
        if _live(pos, dead, q, color) and q not in group:
            group.update(_chain(pos, dead, q))
    return group


def _liberties_after(pos: _Position, dead: set, chain: list[int], point: int, color: int) -> set[int]:
    """Liberties of ``chain`` after ``color`` plays ``point`` (joining the chains next to it)."""
    return _liberties(pos, dead, _group_after(pos, dead, chain, point, color)) - {point}


def dead_stones(board: Board) -> list[int]:
    """The stones (move indices, sorted) that are dead on a played-out board, for either colour.

    Perspective: colour-neutral and independent of the side to move. A stone listed is dead for its own
    colour: its point, and the empty points its removal opens, count for the opponent in the area score
    (``area_ownership`` of the board with these stones taken off). Its opponent could capture it by
    force, even where a rule stops the capture at once (a recapture that positional superko forbids).
    Meant for finished games; on an unsettled position the answer is only a guess.
    """
    return final_status(board)[0]


def final_status(board: Board) -> tuple[list[int], list[int]]:
    """(dead stones, stones in seki) of a played-out board, move indices sorted (see `dead_stones`). A seki is
    an eyeless or one-eyed group and the enemy chain it shares its liberties with, neither able to fill them
    without being captured: both stay on the board and neither side scores the shared points' owner."""
    pos = _Position(board)
    dead: set[int] = set()
    alive: set[int] = set()
    seki: set[int] = set()
    while _settle_one(pos, dead, alive, seki):
        pass
    _revive_unsurrounded(pos, dead)
    return sorted(dead), sorted(seki - dead)


def _revive_unsurrounded(pos: _Position, dead: set) -> None:
    """Dead stones whose every neighbouring enemy stone (around the empty points and own stones they reach
    without crossing an enemy stone) is dead too are alive again: what surrounded them died after them."""
    changed = True
    while changed:
        changed = False
        for q in sorted(dead):
            if q not in dead:
                continue
            enemy = 3 - pos.cells[q]
            area = _flood(pos, q, lambda p: pos.cells[p] != enemy)
            if all(r in dead for p in area for r in pos.nbrs[p] if pos.cells[r] == enemy):
                dead.difference_update(area)
                changed = True


def _settle_one(pos: _Position, dead: set, alive: set, seki: set) -> bool:
    """Decide one more group (largest region first): alive with two eyes (then the enemy stones in its
    eyes are dead unless in seki), or else, when no group can live, the weakest eyeless group (inner
    ones, those not touching a living enemy, first; then fewest liberties of any chain) dies unless in
    seki (only a group with a chain of at most RACE_LIBERTIES liberties: open positions stay as they
    are). Updates ``dead``/``alive``; False when nothing is left to decide."""
    undecided = []
    for wall in (BLACK, WHITE):
        color = 3 - wall
        seen: set[int] = set()
        for p in range(len(pos.cells)):
            if p in seen or _live(pos, dead, p, wall):
                continue
            region = _region(pos, dead, p, wall)
            seen.update(region)
            stones = [q for q in region if _live(pos, dead, q, color) and q not in alive]
            if stones:
                undecided.append((-len(region), min(stones), color, region, stones))
    weak = []
    for _, first, color, region, stones in sorted(undecided):
        eyes = _eyes(pos, dead, color, region)
        border = {q for p in region for q in pos.nbrs[p] if _live(pos, dead, q, 3 - color)}
        if sum(worth for _, worth in eyes) >= 2 or not border:
            alive.update(stones)
            for eye, _ in eyes:
                _kill(pos, dead, alive, seki, 3 - color,
                      [q for q in eye if _live(pos, dead, q, 3 - color) and q not in alive])
            return True
        least = min(len(_liberties(pos, dead, _chain(pos, dead, q))) for q in stones)
        weak.append((bool(border & alive), least, len(_liberties(pos, dead, stones)), len(stones), first,
                     color, stones))
    weak = [w for w in weak if w[1] <= RACE_LIBERTIES]
    if not weak:
        return False
    *_, color, stones = min(weak)
    _kill(pos, dead, alive, seki, color, stones)
    return True


def _kill(pos: _Position, dead: set, alive: set, seki: set, color: int, stones: list[int]) -> None:
    """Mark ``stones`` dead, or alive (and in ``seki`` with their partner chain) when they are in seki, or
    alive with the partner dead when filling a shared liberty kills the partner (`_fill_kills`)."""
    if stones:
        partner = _seki(pos, dead, color, stones)
        if partner is None:
            dead.update(stones)
        elif _fill_kills(pos, dead, color, stones, partner):
            alive.update(stones)
            dead.update(partner)
        else:
            alive.update(stones)
            seki.update(stones)
            seki.update(partner)
