"""benchmarks/lost_leads.py --referee: GNU Go's estimate of a position, with the record's handicap stones."""

import importlib.util
from pathlib import Path

import pytest

from azgo.engine.board import BLACK, WHITE

SPEC = importlib.util.spec_from_file_location(
    "lost_leads", Path(__file__).resolve().parent.parent / "benchmarks" / "lost_leads.py")
L = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(L)


def test_parse_estimate_gives_blacks_lead():
    assert L.parse_estimate("= W+16.3 (upper bound: 16.3, lower: 16.3)") == -16.3
    assert L.parse_estimate("= B+0.5 (upper bound: 2.4, lower: -3.5)") == 0.5
    assert L.parse_estimate("= 0") == 0.0
    assert L.parse_estimate("? cannot score") is None


def test_referee_counts_setup_stones_and_takes_the_players_side(tmp_path, gnugo_path):
    # Black's setup stones wall off columns a-e of a 9x9 board; one White move in the other half. A referee that
    # ignored the setup (AB) would see one White stone and put White ahead.
    wall = "".join(f"[e{c}]" for c in "abcdefghi")
    sgf = tmp_path / "setup.sgf"
    sgf.write_text(f"(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]RU[Chinese]AB{wall}PL[W];W[gg];B[cc])")
    black = L.referee_lead(str(sgf), 1, BLACK, gnugo_path)
    white = L.referee_lead(str(sgf), 1, WHITE, gnugo_path)
    assert black is not None and black > 5, black
    assert white == pytest.approx(-black)


def test_life_and_death_referee_replays_setup_stones(tmp_path, gnugo_path):
    # benchmarks/life_and_death.py asks GNU Go for dead stones: a lone White stone inside the area Black's setup
    # wall closes is dead only if the wall (AB) is on GNU Go's board.
    spec = importlib.util.spec_from_file_location(
        "life_and_death", Path(__file__).resolve().parent.parent / "benchmarks" / "life_and_death.py")
    ld = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ld)
    from azgo.engine.coords import gtp_to_move
    from azgo.engine.sgf import load_sgf
    wall = "".join(f"[e{c}]" for c in "abcdefghi")
    sgf = tmp_path / "setup.sgf"
    sgf.write_text(f"(;GM[1]FF[4]SZ[9]KM[0.5]RU[Chinese]AB{wall}PL[W];W[bb];B[gg])")
    dead = ld.gnugo_dead(load_sgf(str(sgf)), 2)
    assert gtp_to_move("B8", 9) in dead, dead
