"""Rules engine: captures, ko, superko, snapback, suicide, handicap, scoring, coordinates, invariants."""

import random

import numpy as np
import pytest

from azgo.engine.board import BLACK, EMPTY, WHITE, Board, IllegalMove, Rules
from azgo.engine.coords import (
    CoordinateError, gtp_to_move, move_to_gtp, move_to_sgf, sgf_to_move, check_size,
)
from azgo.engine.game import Game
from azgo.engine.handicap import HandicapError, fixed_handicap, max_fixed_handicap
from azgo.engine.scoring import area_ownership, area_score, result_string


def position(diagram: str, to_move: int = BLACK, rules: Rules = Rules()) -> Board:
    """A board from rows of ``. X O`` (top row first)."""
    rows = [r.split() for r in diagram.strip().splitlines()]
    n = len(rows)
    b = Board(n, rules)
    black = [r * n + c for r in range(n) for c in range(n) if rows[r][c] == "X"]
    white = [r * n + c for r in range(n) for c in range(n) if rows[r][c] == "O"]
    b.setup(black, white, to_move=to_move)
    return b


def mv(board: Board, vertex: str) -> int:
    return gtp_to_move(vertex, board.size)


def play(board: Board, *vertices: str) -> None:
    for v in vertices:
        board.play(mv(board, v))


def check_invariants(b: Board) -> None:
    """Incremental chain/liberty/hash state equals a from-scratch rebuild of the same stones."""
    ref = Board(b.size, b.rules)
    ref.setup(b.stones(BLACK), b.stones(WHITE))
    assert ref.hash == b.hash
    assert ref.counts == b.counts
    for m in range(b.size * b.size):
        assert b.liberties(m) == ref.liberties(m), move_to_gtp(m, b.size)
        assert b.chain(m) == ref.chain(m)


# ----------------------------------------------------------------- coordinates
@pytest.mark.parametrize("size", [2, 9, 19, 25])
def test_gtp_and_sgf_round_trip(size):
    for m in range(size * size + 1):
        assert gtp_to_move(move_to_gtp(m, size), size) == m
        assert gtp_to_move(move_to_gtp(m, size).lower(), size) == m
        assert sgf_to_move(move_to_sgf(m, size), size) == m


def test_gtp_vertices():
    assert gtp_to_move("A1", 19) == 18 * 19
    assert gtp_to_move("a19", 19) == 0
    assert gtp_to_move("T19", 19) == 18
    assert gtp_to_move("J1", 9) == 80  # no I column: J is the 9th
    assert move_to_gtp(0, 25) == "A25" and move_to_gtp(24, 25) == "Z25"
    assert gtp_to_move("PASS", 9) == 81 and move_to_gtp(81, 9) == "pass"
    assert sgf_to_move("tt", 19) == 361 and sgf_to_move("", 9) == 81
    assert sgf_to_move("aa", 9) == 0 and move_to_sgf(80, 9) == "ii"


@pytest.mark.parametrize("bad", ["I5", "A0", "A10", "K1", "Z", "", "5A", "A-1", "A١", "@3", "A1.5", "A001"])
def test_bad_gtp_vertices(bad):
    with pytest.raises(CoordinateError):
        gtp_to_move(bad, 9)


def test_bad_sgf_points_and_sizes():
    for bad in ("jj", "a", "abc", "A1", "a1"):
        with pytest.raises(CoordinateError):
            sgf_to_move(bad, 9)
    assert sgf_to_move("tt", 21) == 19 * 21 + 19  # beyond 19x19, tt is a real point
    with pytest.raises(CoordinateError):
        sgf_to_move("vv", 21)
    for size in (1, 26, 0, -3, 9.0, True):
        with pytest.raises(ValueError):
            check_size(size)


# ----------------------------------------------------------------- captures
def test_corner_and_edge_captures():
    b = Board(9)
    play(b, "A1", "B1", "pass", "A2")
    assert b.color_at(mv(b, "A1")) == EMPTY and b.prisoners[WHITE] == 1
    b = Board(9)
    play(b, "E1", "D1", "pass", "F1", "pass", "E2")
    assert b.color_at(mv(b, "E1")) == EMPTY
    b = position("""
        . X O .
        X O . .
        O . . .
        . . . .""", to_move=WHITE)
    b.play(mv(b, "A4"))  # captures the two separate black stones B4? no: A4 takes A3's and B4's last liberty
    assert b.color_at(mv(b, "B4")) == EMPTY and b.color_at(mv(b, "A3")) == EMPTY
    assert b.prisoners[WHITE] == 2
    check_invariants(b)


def test_merge_three_chains():
    b = position("""
        . . X . .
        . X . X .
        . . . . .
        . . . . .
        . . . . .""")
    b.play(mv(b, "C4"))
    assert b.liberties(mv(b, "C5")) == 7  # B5 D5 A4 E4 B3 C3 D3
    assert len(b.chain(mv(b, "B4"))) == 4
    check_invariants(b)


def test_one_move_captures_two_chains():
    b = position("""
        X . X O .
        O O O . .
        . . . . .
        . . . . .
        . . . . .""", to_move=WHITE)
    b.play(mv(b, "B5"))
    assert b.color_at(mv(b, "A5")) == EMPTY and b.color_at(mv(b, "C5")) == EMPTY
    assert b.prisoners[WHITE] == 2 and b.ko_move is None
    assert b.liberties(mv(b, "B5")) == 6  # A5 C5 A3 B3 C3 D4
    check_invariants(b)


def test_capture_restores_liberties():
    b = position("""
        . O X .
        O X . .
        . O . .
        . . . .""", to_move=WHITE)
    assert b.liberties(mv(b, "B3")) == 1
    assert b.liberties(mv(b, "B4")) == 1
    b.play(mv(b, "C3"))
    assert b.color_at(mv(b, "B3")) == EMPTY
    assert b.liberties(mv(b, "B4")) == 2  # A4 and the freed B3
    check_invariants(b)


# ----------------------------------------------------------------- ko
KO = """
    . . . . .
    . X O . .
    X O . O .
    . X O . .
    . . . . ."""


def test_simple_ko():
    b = position(KO, to_move=BLACK)
    b.play(mv(b, "C3"))  # takes the ko: captures B3
    assert b.color_at(mv(b, "B3")) == EMPTY
    assert b.ko_move == mv(b, "B3")
    assert b.illegal_reason(mv(b, "B3")) == "ko"
    assert not b.legal_mask()[mv(b, "B3")]
    with pytest.raises(IllegalMove) as e:
        b.play(mv(b, "B3"))
    assert e.value.reason == "ko"
    play(b, "E1", "E2")  # ko threat and answer
    b.play(mv(b, "B3"))  # white may retake now
    assert b.color_at(mv(b, "C3")) == EMPTY
    check_invariants(b)


def test_ko_without_superko_uses_simple_ko():
    b = position(KO, to_move=BLACK, rules=Rules(superko=False))
    b.play(mv(b, "C3"))
    assert b.illegal_reason(mv(b, "B3")) == "ko"


def test_capturing_two_is_not_ko():
    b = position("""
        . X O . .
        X O . O .
        X O . O .
        . X O . .
        . . . . .""", to_move=BLACK)
    b.play(mv(b, "C4"))
    b.play(mv(b, "C3"))
    assert b.ko_move is None


def test_snapback():
    b = position("""
        . . . . .
        . . . . .
        O O O . .
        X X O . .
        . O X . .""", to_move=BLACK)
    # Black A1 takes the white stone at B1 (its last liberty) but is left in atari itself ...
    b.play(mv(b, "A1"))
    assert b.color_at(mv(b, "B1")) == EMPTY
    assert b.liberties(mv(b, "A1")) == 1
    # ... and White plays back at B1, capturing three: a snapback, not a ko.
    assert b.ko_move is None
    b.play(mv(b, "B1"))
    for v in ("A1", "A2", "B2"):
        assert b.color_at(mv(b, v)) == EMPTY
    assert b.prisoners[WHITE] == 3
    check_invariants(b)


def _ko_shape(black, white, r, c, capturer):
    """A ko on a 9x9 board: the victim at (r, c), the capturing point at (r, c + 1)."""
    mine, theirs = (black, white) if capturer == BLACK else (white, black)
    mine += [(r - 1) * 9 + c, r * 9 + c - 1, (r + 1) * 9 + c]
    theirs += [r * 9 + c, (r - 1) * 9 + c + 1, r * 9 + c + 2, (r + 1) * 9 + c + 1]


@pytest.mark.parametrize("superko", [True, False])
def test_triple_ko_cycle(superko):
    black, white = [], []
    _ko_shape(black, white, 1, 1, BLACK)
    _ko_shape(black, white, 1, 5, WHITE)
    _ko_shape(black, white, 5, 1, BLACK)
    b = Board(9, Rules(superko=superko))
    b.setup(black, white, to_move=BLACK)
    start = b.hash
    # B takes ko 1, W takes ko 2, B takes ko 3, W retakes ko 1, B retakes ko 2 ...
    for point in (1 * 9 + 2, 1 * 9 + 6, 5 * 9 + 2, 1 * 9 + 1, 1 * 9 + 5):
        before = sum(b.prisoners)
        b.play(point)
        assert sum(b.prisoners) == before + 1
    # ... and W's retake of ko 3 would recreate the start position: only superko forbids it.
    retake = 5 * 9 + 1
    if superko:
        assert b.illegal_reason(retake) == "superko"
        assert not b.legal_mask()[retake]
        with pytest.raises(IllegalMove):
            b.play(retake)
    else:
        b.play(retake)
        assert b.hash == start


def test_ko_retake_after_two_passes_repeats_position():
    b = position(KO, to_move=BLACK)
    play(b, "C3", "pass", "pass")
    assert b.illegal_reason(mv(b, "B3")) == "superko"
    b2 = position(KO, to_move=BLACK, rules=Rules(superko=False))
    start = b2.hash
    play(b2, "C3", "pass", "pass", "B3")
    assert b2.hash == start


# ----------------------------------------------------------------- suicide
def test_single_stone_suicide_illegal():
    b = position("""
        . O . .
        O . . .
        . . . .
        . . . .""")
    assert b.illegal_reason(mv(b, "A4")) == "suicide"
    assert not b.legal_mask()[mv(b, "A4")]
    with pytest.raises(IllegalMove):
        b.play(mv(b, "A4"))
    assert b.color_at(mv(b, "A4")) == EMPTY


def test_multi_stone_suicide():
    diagram = """
        X O . .
        . O . .
        O O . .
        . . . ."""
    b = position(diagram)
    assert b.illegal_reason(mv(b, "A3")) == "suicide"
    tt = position(diagram, rules=Rules(suicide=True))
    assert tt.is_legal(mv(tt, "A3"))
    tt.play(mv(tt, "A3"))
    assert tt.color_at(mv(tt, "A4")) == EMPTY and tt.color_at(mv(tt, "A3")) == EMPTY
    assert tt.prisoners[WHITE] == 2 and tt.to_move == WHITE
    check_invariants(tt)


def test_single_stone_suicide_under_tromp_taylor_repeats_position():
    b = position("""
        . O . .
        O . . .
        . . . .
        . . . .""", rules=Rules(suicide=True, superko=True))
    assert b.illegal_reason(mv(b, "A4")) == "superko"
    b2 = position("""
        . O . .
        O . . .
        . . . .
        . . . .""", rules=Rules(suicide=True, superko=False))
    b2.play(mv(b2, "A4"))
    assert b2.color_at(mv(b2, "A4")) == EMPTY


def test_capture_beats_suicide():
    b = position("""
        . O X .
        O X . .
        X . . .
        . . . .""", to_move=BLACK)
    assert b.is_legal(mv(b, "A4"))  # no liberty of its own, but it takes B4 and A3
    b.play(mv(b, "A4"))
    assert b.color_at(mv(b, "B4")) == EMPTY and b.color_at(mv(b, "A3")) == EMPTY
    assert b.prisoners[BLACK] == 2
    check_invariants(b)


# ----------------------------------------------------------------- game, undo, passes
def test_two_passes_end_game_and_undo_to_start():
    g = Game(9, komi=7.5)
    for v in ("E5", "C3", "pass", "pass"):
        g.play(gtp_to_move(v, 9))
    assert g.over
    while g.moves:
        g.undo()
    assert g.board.hash == 0 and g.to_move == BLACK
    with pytest.raises(IndexError):
        g.undo()


def test_play_out_of_turn_and_occupied():
    b = Board(9)
    b.play(mv(b, "E5"), BLACK)
    b.play(mv(b, "D5"), BLACK)
    assert b.to_move == WHITE
    with pytest.raises(IllegalMove):
        b.play(mv(b, "E5"), WHITE)


# ----------------------------------------------------------------- handicap
def test_fixed_handicap_19():
    names = lambda n: [move_to_gtp(m, 19) for m in fixed_handicap(19, n)]
    assert names(2) == ["D4", "Q16"]
    assert names(3) == ["D4", "Q16", "D16"]
    assert names(4) == ["D4", "Q16", "D16", "Q4"]
    assert sorted(names(5)) == sorted(["D4", "Q16", "D16", "Q4", "K10"])
    assert sorted(names(8)) == sorted(["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16"])
    assert len(set(names(9))) == 9


def test_handicap_limits_and_game():
    assert max_fixed_handicap(9) == 9 and max_fixed_handicap(8) == 4 and max_fixed_handicap(6) == 0
    with pytest.raises(HandicapError):
        fixed_handicap(19, 10)
    with pytest.raises(HandicapError):
        fixed_handicap(10, 5)
    g = Game(9)
    pts = g.place_fixed_handicap(4)
    assert sorted(move_to_gtp(p, 9) for p in pts) == ["C3", "C7", "G3", "G7"]
    assert g.to_move == WHITE and g.handicap == 4
    with pytest.raises(ValueError):
        g.place_fixed_handicap(2)


# ----------------------------------------------------------------- scoring
def test_area_score():
    b = position("""
        . X O . .
        X X O . .
        . X O O O
        X X O . .
        . X O . .""")
    own = area_ownership(b)
    assert own.sum() == 10 - 15
    assert area_score(b, 7.5) == -12.5
    assert result_string(area_score(b, 7.5)) == "W+12.5"
    assert result_string(area_score(b, -5)) == "0"


def test_dame_and_seki_points_count_for_nobody():
    b = position("""
        X . O
        X . O
        X . O""")
    assert area_ownership(b).sum() == 0
    assert (area_ownership(b)[:, 1] == 0).all()


# ----------------------------------------------------------------- randomised invariants
@pytest.mark.parametrize("size", [5, 9, 13])
def test_random_games_keep_invariants_and_mask_matches(size):
    rng = random.Random(size)
    for game_no in range(6 if size < 13 else 2):
        b = Board(size, Rules(suicide=game_no % 2 == 1))
        for step in range(size * size * 3):
            mask = b.legal_mask()
            for m in range(size * size + 1):
                assert mask[m] == b.is_legal(m), (move_to_gtp(m, size), b.illegal_reason(m))
            legal = np.flatnonzero(mask[:-1]).tolist()
            if not legal or b.game_over:
                break
            copy = b.copy()
            b.play(rng.choice(legal) if rng.random() > 0.03 else size * size)
            assert copy.hash != b.hash or b.last_move == size * size
            if step % 7 == 0:
                check_invariants(b)
        check_invariants(b)
