"""Ladder reading (engine/ladder.py) and the search's lowered prior for escapes into lost ladders."""

from __future__ import annotations

import numpy as np
import pytest

from azgo.engine.board import BLACK, WHITE, Board
from azgo.engine.coords import gtp_to_move, move_to_gtp
from azgo.engine.game import Game
from azgo.engine.ladder import ladder_attacks, ladder_captures, losing_escapes
from azgo.engine.mcts import LADDERS_OFF, SearchConfig
from azgo.engine.search import Limits, Searcher

from scripted_eval import ScriptedEvaluator

# White E5 is in atari (Black D5, E6, F5, and F4 below F5); extending at E4 gives White two liberties
# (D4, E3) and Black chases it down-left: B E3, W D4, B C4, W D3, B D2, W C3, ... to the edge.
ATARI_BLACK = ["E6", "D5", "F4", "F5"]
ATARI_WHITE = ["E5"]


def board_with(black, white, size=9, to_move=WHITE) -> Board:
    b = Board(size)
    b.setup([gtp_to_move(v, size) for v in black], [gtp_to_move(v, size) for v in white], to_move=to_move)
    return b


def names(moves, size=9):
    return [move_to_gtp(m, size) for m in moves]


def test_escape_into_a_ladder_is_found():
    b = board_with(ATARI_BLACK, ATARI_WHITE)
    before = bytes(b.cells)
    assert names(losing_escapes(b)) == ["E4"]
    assert bytes(b.cells) == before  # reading does not change the board


def test_ladder_read_out_by_hand_ends_in_capture():
    # The chase the reader finds, played move by move: White never gets a third liberty.
    b = board_with(ATARI_BLACK, ATARI_WHITE)
    for v in ["E4", "E3", "D4", "C4", "D3", "D2", "C3", "B3", "C2", "C1", "B2", "A2", "B1"]:
        b.play(gtp_to_move(v, 9))
        if b.color_at(gtp_to_move("E5", 9)) == WHITE:
            assert b.liberties(gtp_to_move("E5", 9)) <= 2
    b.play(gtp_to_move("A1", 9))  # Black's last atari takes the whole chain
    assert b.color_at(gtp_to_move("E5", 9)) == 0


@pytest.mark.parametrize("breaker", ["C3", "D3", "C4", "B2", "D2"])
def test_a_ladder_breaker_on_the_path_saves_the_runner(breaker):
    b = board_with(ATARI_BLACK, ATARI_WHITE + [breaker])
    assert losing_escapes(b) == []


def test_a_stone_off_the_path_does_not_break_the_ladder():
    b = board_with(ATARI_BLACK, ATARI_WHITE + ["G7"])
    assert names(losing_escapes(b)) == ["E4"]


def test_extension_to_three_liberties_is_not_a_ladder():
    b = board_with(["E6", "D5", "F5"], ["E5"])  # E4 then has D4, F4, E3
    assert losing_escapes(b) == []


def test_defender_that_can_capture_an_attacker_escapes():
    # Black E6, one of the stones giving atari, is itself in atari (White E7 and D6; its last liberty
    # is F6): White can take it rather than be chased, so the reader must not call White captured.
    b = board_with(ATARI_BLACK, ATARI_WHITE + ["E7", "D6"])
    assert b.liberties(gtp_to_move("E6", 9)) == 1
    assert losing_escapes(b) == []


def test_only_the_side_to_move_is_read():
    b = board_with(ATARI_BLACK, ATARI_WHITE, to_move=BLACK)
    assert losing_escapes(b) == []


def test_ladder_captures_needs_two_liberties():
    b = board_with(ATARI_BLACK, ATARI_WHITE)
    assert not ladder_captures(b, gtp_to_move("E5", 9))  # one liberty: not a ladder question
    b.play(gtp_to_move("E4", 9))
    assert ladder_captures(b, gtp_to_move("E5", 9))  # Black to move, White at two liberties


def test_long_ladder_across_19x19_to_the_edge():
    b = board_with(["K11", "J10", "L9", "L10"], ["K10"], size=19)
    assert names(losing_escapes(b), 19) == ["K9"]
    b.play(gtp_to_move("K9", 19))
    assert ladder_captures(b, gtp_to_move("K10", 19))
    assert not ladder_captures(b, gtp_to_move("K10", 19), max_reads=5)  # too long to prove in 5 ataris
    b = board_with(["K11", "J10", "L9", "L10"], ["K10", "C3"], size=19)  # a breaker on the diagonal
    assert losing_escapes(b) == []


def test_ladder_attack_answers_the_escape():
    b = board_with(ATARI_BLACK, ATARI_WHITE)
    b.play(gtp_to_move("E4", 9))  # White runs; Black to move
    assert names(ladder_attacks(b)) == ["E3"]  # D4 would let White out at E3 with three liberties
    b = board_with(ATARI_BLACK, ATARI_WHITE + ["C3"])
    b.play(gtp_to_move("E4", 9))
    assert ladder_attacks(b) == []  # the breaker: no atari wins


def test_ladder_attack_only_looks_at_the_last_move():
    b = board_with(ATARI_BLACK, ATARI_WHITE + ["E4"], to_move=BLACK)  # same stones, no last move
    assert ladder_attacks(b) == []
    b.play(gtp_to_move("A9", 9))  # Black's own stone is not a target for White
    b.play(gtp_to_move("G7", 9))  # White's last stone has four liberties
    assert ladder_attacks(b) == []
    b = board_with(["B8", "C9"], [], to_move=WHITE)
    b.play(gtp_to_move("A9", 9))  # a corner stone with two liberties: either atari takes it
    assert sorted(names(ladder_attacks(b))) == ["A8", "B9"]


def root_priors(game, ladder_prior, capture_prior=0.0):
    s = Searcher(ScriptedEvaluator(), SearchConfig(ladder_prior=ladder_prior, ladder_capture_prior=capture_prior),
                 seed=1)
    s.search(game, Limits(visits=1))
    root = s.root
    return {int(m): float(p) for m, p in zip(root.moves, root.raw_prior)}


@pytest.mark.parametrize("factor", [0.1, 0.0])
def test_search_lowers_the_prior_of_a_losing_escape(factor):
    g = Game(9, komi=0.0)
    g.board.setup([gtp_to_move(v, 9) for v in ATARI_BLACK], [gtp_to_move(v, 9) for v in ATARI_WHITE],
                  to_move=WHITE)
    off = root_priors(g, 1.0)
    on = root_priors(g, factor)
    e4, other = gtp_to_move("E4", 9), gtp_to_move("C7", 9)
    assert off[e4] > off[other] > 0  # the scripted policy likes the point next to the atari
    assert on[e4] / on[other] == pytest.approx(factor * off[e4] / off[other], abs=1e-6)
    assert sum(on.values()) == pytest.approx(1.0, abs=1e-5)


def test_search_raises_the_prior_of_a_winning_ladder_atari():
    g = Game(9, komi=0.0)
    g.board.setup([gtp_to_move(v, 9) for v in ATARI_BLACK], [gtp_to_move(v, 9) for v in ATARI_WHITE],
                  to_move=WHITE)
    g.play(gtp_to_move("E4", 9))
    off = root_priors(g, 1.0, 0.0)
    on = root_priors(g, 1.0, 0.5)
    e3, d4 = gtp_to_move("E3", 9), gtp_to_move("D4", 9)
    assert off[e3] == pytest.approx(off[d4]) and off[e3] < 0.5  # the scripted policy cannot tell them apart
    assert on[e3] == pytest.approx(0.5 / (1 + 0.5 - off[e3]), rel=1e-4) and on[e3] > 2 * on[d4]
    assert sum(on.values()) == pytest.approx(1.0, abs=1e-5)
    assert SearchConfig(**LADDERS_OFF).ladder_prior == 1.0 and SearchConfig(**LADDERS_OFF).ladder_capture_prior == 0


def test_ladder_prior_is_checked():
    with pytest.raises(ValueError, match="ladder_prior"):
        SearchConfig(ladder_prior=1.5)
    with pytest.raises(ValueError, match="ladder_capture_prior"):
        SearchConfig(ladder_capture_prior=-0.1)


def test_reader_is_cheap_on_a_busy_board():
    # Guard against a reader that explodes: many chains in atari on a random 13x13 position.
    rng = np.random.default_rng(3)
    b = Board(13)
    for _ in range(120):
        legal = b.legal_moves()
        b.play(int(rng.choice(legal)))
    for colour in (BLACK, WHITE):
        b.to_move = colour
        for m in losing_escapes(b):
            assert b.color_at(m) == 0


def test_engine_switch_turns_both_off():
    from azgo.gtp.config import EngineConfig
    from azgo.gtp.engine import GtpEngine
    on = GtpEngine(EngineConfig(visits=8), evaluator=ScriptedEvaluator()).search_config
    off = GtpEngine(EngineConfig(visits=8, ladders=False), evaluator=ScriptedEvaluator()).search_config
    assert (on.ladder_prior, on.ladder_capture_prior) == (SearchConfig().ladder_prior, SearchConfig().ladder_capture_prior)
    assert on.ladder_prior < 1 and on.ladder_capture_prior > 0
    assert (off.ladder_prior, off.ladder_capture_prior) == (1.0, 0.0)


def test_ladder_escapes_script_counts_per_player(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    # White runs at E4 (a lost ladder), Black answers with the winning atari E3; then White plays elsewhere.
    sgf = ("(;FF[4]GM[1]SZ[9]KM[0]PB[runner-up]PW[runner]RE[B+R]AB[ed][de][fe][ff]AW[ee]PL[W]"
           ";W[ef];B[eg];W[cc])")
    (tmp_path / "g.sgf").write_text(sgf)
    script = Path(__file__).resolve().parent.parent / "scripts" / "ladder_escapes.py"
    out = subprocess.run([sys.executable, str(script), str(tmp_path), "--list"], capture_output=True, text=True,
                         check=True).stdout
    assert "move 1 runner E4" in out
    assert "runner: 1 games, 0 won, 1 losing ladder escapes played (in 1 games)" in out
    assert "runner-up: 1 games, 1 won, 0 losing ladder escapes played (in 0 games)" in out
