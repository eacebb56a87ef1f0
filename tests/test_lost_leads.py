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


def test_from_log_matches_each_game_to_its_run_of_logged_moves(tmp_path):
    # two 9x9 games azgo played as White; the log also holds a crashed game's partial run and the opponent's lines
    (tmp_path / "engines.stderr.log").write_text(
        "azgo: network large9.int8.onnx\n"
        "azgo: C3 winrate 50.0%, lead +1.0 (searched ...), 10 visits\n"   # a crashed game's only move
        "gnugo: something\n"
        "azgo: C3 winrate 55.0%, lead +2.5, 10 visits\n"
        "azgo: D4 winrate 80.0%, lead +17.0 (searched at komi -3.5: dynamic komi), 10 visits\n"
        "azgo: E5 winrate 60.0%, lead -3.0, 10 visits\n"
        "azgo: pass winrate 20.0%, lead -12.0, 10 visits\n")
    from azgo.engine.sgf import load_sgf
    (tmp_path / "game0000.sgf").write_text("(;GM[1]FF[4]SZ[9]KM[7]PB[GNU Go]PW[azgo]RE[B+R];B[ee];W[cg];B[ff];W[df])")
    (tmp_path / "game0001.sgf").write_text("(;GM[1]FF[4]SZ[9]KM[7]PB[GNU Go]PW[azgo]RE[B+1];B[cc];W[ee];B[dd];W[])")
    lines = L.logged_leads(str(tmp_path))
    assert len(lines) == 5
    first, at = L.logged_curve(load_sgf(str(tmp_path / "game0000.sgf")), WHITE, lines, 0)
    assert first == [(1, 2.5), (3, 17.0)] and at == 3  # the partial run (C3 alone) is skipped
    second, at = L.logged_curve(load_sgf(str(tmp_path / "game0001.sgf")), WHITE, lines, at)
    assert second == [(1, -3.0), (3, -12.0)] and at == 5
    missing, at2 = L.logged_curve(load_sgf(str(tmp_path / "game0000.sgf")), WHITE, lines, at)
    assert missing == [] and at2 == at  # not in the rest of the log
    winrates, _ = L.logged_curve(load_sgf(str(tmp_path / "game0000.sgf")), WHITE, lines, 0, 2)
    assert winrates == [(1, 0.55), (3, 0.80)]  # the same run, its reported winrates


def test_calibration_bins_reported_winrates_by_colour_against_the_games_ends():
    samples = [(WHITE, 0.75, False, "g1"), (WHITE, 0.85, False, "g1"), (WHITE, 0.72, True, "g2"),
               (WHITE, 1.0, True, "g2"), (WHITE, 0.3, False, "g1"), (BLACK, 0.95, True, "g3")]
    table = L.calibration(samples)
    assert table[WHITE][7] == (2, 1, 2)     # 70-80%: two positions, one in a won game, from two games
    assert table[WHITE][8] == (1, 0, 1)
    assert table[WHITE][9] == (1, 1, 1)     # a winrate of exactly 1 falls in the last bin
    assert table[WHITE][3] == (1, 0, 1) and table[BLACK][9] == (1, 1, 1)
    assert L.won_from(table[WHITE], 7) == (4, 0.5)
    assert L.won_from(table[BLACK], 7) == (1, 1.0)
    assert L.won_from([(0, 0, 0)] * 10, 7) == (0, 0.0)


# ------------------------------------------------------------------ benchmarks/point_flow.py
PF_SPEC = importlib.util.spec_from_file_location(
    "point_flow", Path(__file__).resolve().parent.parent / "benchmarks" / "point_flow.py")
PF = importlib.util.module_from_spec(PF_SPEC)
PF_SPEC.loader.exec_module(PF)


def test_point_flow_phases_are_shares_of_the_board():
    assert [PF.phase_of(k, 19) for k in (0, 54, 55, 126, 127, 198, 199, 270, 271, 400)] == \
        [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert [PF.phase_of(k, 9) for k in (0, 12, 13, 60, 61)] == [0, 0, 1, 3, 4]


def test_point_flow_credits_each_change_to_the_phase_it_happened_in():
    # 9x9: phases begin at moves 13, 29, 45, 61; the lead goes +2 -> +10 in the opening, down 15 in the middle
    curve = [(0, 2.0), (10, 10.0), (40, -5.0), (50, -4.0)]
    assert PF.flow(curve, 9) == [8.0, None, -15.0, 1.0, None]
    assert sum(x for x in PF.flow(curve, 9) if x is not None) == curve[-1][1] - curve[0][1]
    # azgo's own lead beside GNU Go's, at the same move or the next (its move after the opponent's)
    over = PF.overestimates(curve, [(1, 3.0), (41, 20.0), (52, 0.0)], 9)
    assert over == [[1.0], [], [25.0], [], []]


def test_point_flow_referee_reads_every_sample_from_one_process(tmp_path, gnugo_path):
    # the same wall as above: Black ahead by about the wall's side, and it grows by one stone's worth
    wall = "".join(f"[e{c}]" for c in "abcdefghi")
    sgf = tmp_path / "setup.sgf"
    sgf.write_text(f"(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]RU[Chinese]AB{wall}PL[W];W[gg];B[cc];W[hh];B[gc])")
    black = L.referee_curve(str(sgf), [0, 2, 4], BLACK, gnugo_path)
    white = L.referee_curve(str(sgf), [0, 2, 4], WHITE, gnugo_path)
    assert [k for k, _ in black] == [0, 2, 4]
    assert all(v > 5 for _, v in black), black
    assert white == [(k, -v) for k, v in black]


def test_collapse_point_is_the_last_big_lead_before_the_referee_turns():
    # GNU Go's leads for azgo: +30, +12, +4 (still ahead), -8 (behind): the collapse falls from move 12
    assert L.collapse_point([(0, 30.0), (12, 12.0), (24, 4.0), (36, -8.0), (48, 15.0)]) == 12
    # a lead that is regained and lost again: the first fall counts
    assert L.collapse_point([(0, 11.0), (6, -1.0), (12, 20.0), (18, -30.0)]) == 0
    # never behind, or never far enough ahead: no collapse
    assert L.collapse_point([(0, 30.0), (6, 2.0)]) is None
    assert L.collapse_point([(0, 9.0), (6, -20.0)]) is None
    assert L.collapse_point([(0, 9.0), (6, -20.0)], high=5.0) == 0
    assert L.median([3.0, -1.0, 10.0]) == 3.0 and L.median([1.0, 2.0]) == 1.5 and L.median([]) == 0.0


# ------------------------------------------------------------------ benchmarks/ko_fights.py
KO_SPEC = importlib.util.spec_from_file_location(
    "ko_fights", Path(__file__).resolve().parent.parent / "benchmarks" / "ko_fights.py")
KO = importlib.util.module_from_spec(KO_SPEC)
KO_SPEC.loader.exec_module(KO)

# A ko in the top-left corner of a 9x9 board: White takes at b8 (bb), Black makes a threat at g3 (gg), White answers
# at g2 (gh), Black takes back at c8 (cb).
KO_MOVES = "B[ba];W[ca];B[ab];W[db];B[cb];W[cc];B[bc];W[bb];B[gg];W[gh];B[cb]"


def test_ko_captures_counts_each_sides_takes_from_the_first():
    from azgo.engine.sgf import parse_sgf
    rec = parse_sgf(f"(;GM[1]FF[4]SZ[9]KM[7]PB[pachi]PW[azgo]RE[B+R];{KO_MOVES})")
    assert KO.ko_captures(rec, WHITE) == (7, 1, 1)   # White's take is the 8th move, then Black's retake
    assert KO.ko_captures(rec, BLACK) == (7, 1, 1)
    quiet = parse_sgf("(;GM[1]FF[4]SZ[9]KM[7]PB[pachi]PW[azgo]RE[W+R];B[ee];W[cc];B[gg])")
    assert KO.ko_captures(quiet, WHITE) == (None, 0, 0)
    # setup stones are on the board before the moves: the same ko with the shape given as AB/AW
    setup = parse_sgf("(;GM[1]FF[4]SZ[9]KM[0.5]HA[0]PB[pachi]PW[azgo]RE[B+R]AB[ba][ab][cb][bc]AW[ca][db][cc]PL[W]"
                      ";W[bb];B[gg];W[gh];B[cb])")
    assert KO.ko_captures(setup, WHITE) == (0, 1, 1)


def test_ko_fights_splits_the_line_by_games_with_and_without_a_ko(tmp_path):
    import subprocess
    import sys
    games = [(f"{KO_MOVES}", "B+R"),                       # azgo (White) loses a game with a ko
             (f"{KO_MOVES}", "W+3"),                       # and wins one
             ("B[ee];W[cc];B[gg];W[cg]", "W+R"),           # wins two without one
             ("B[ee];W[cc];B[gg];W[cf]", "W+1"),
             ("B[ee];W[cc];B[gg];W[ce]", "0")]             # a draw: not counted
    for i, (moves, result) in enumerate(games):
        (tmp_path / f"game{i:04d}.sgf").write_text(
            f"(;GM[1]FF[4]SZ[9]KM[7]PB[Pachi]PW[azgo]RE[{result}];{moves})")
    out = subprocess.run([sys.executable, str(Path(KO_SPEC.origin)), str(tmp_path), "--player", "azgo", "--fight", "2"],
                         capture_output=True, text=True, check=True).stdout
    results = dict(line.split()[1:] for line in out.splitlines() if line.startswith("RESULT"))
    assert results["games"] == "4"
    assert float(results["ko_games_share"]) == 0.5
    assert float(results["won_share_without_ko"]) == 1.0 and float(results["won_share_with_ko"]) == 0.5
    assert float(results["won_share_ko_fight"]) == 0.5    # both ko games have two captures
    assert float(results["lost_with_ko_share"]) == 1.0
    assert float(results["ko_captures_opponent_share"]) == 0.5
    assert "game0000.sgf: lost" in out and "game0002.sgf" not in out


# ------------------------------------------------------------------ benchmarks/turning_points.py
TP_SPEC = importlib.util.spec_from_file_location(
    "turning_points", Path(__file__).resolve().parent.parent / "benchmarks" / "turning_points.py")
TP = importlib.util.module_from_spec(TP_SPEC)
TP_SPEC.loader.exec_module(TP)


def test_turning_point_is_the_largest_fall_between_two_own_moves():
    assert TP.turning_point([(1, 0.6), (3, 0.55), (5, 0.2), (7, 0.18)]) == (3, 0.55, 0.2)
    assert TP.turning_point([(0, 0.3), (2, 0.5), (4, 0.9)]) is None     # it only rose
    assert TP.turning_point([(0, 0.5)]) is None


def test_turning_points_reads_the_log_and_searches_the_turn(tmp_path):
    import subprocess
    import sys
    # azgo is White: its moves C3, G7, C7, G3 logged at 60%, 55%, 20%, 18%: the turn is G7 (move 4), answered by
    # Black's E3 (move 5). A won game beside it is not counted.
    (tmp_path / "game0000.sgf").write_text(
        "(;GM[1]FF[4]SZ[9]KM[7]PB[Pachi]PW[azgo]RE[B+R];B[ee];W[cg];B[ec];W[gc];B[eg];W[cc];B[ce];W[gg])")
    (tmp_path / "game0001.sgf").write_text(
        "(;GM[1]FF[4]SZ[9]KM[7]PB[Pachi]PW[azgo]RE[W+R];B[ee];W[cg])")
    log = ["azgo: C3 winrate 60.0%, lead +1.0", "azgo: G7 winrate 55.0%, lead +0.5",
           "azgo: C7 winrate 20.0%, lead -6.0", "azgo: G3 winrate 18.0%, lead -7.0",
           "azgo: C3 winrate 50.0%, lead +0.0"]
    (tmp_path / "engines.stderr.log").write_text("\n".join(log) + "\n")
    out = subprocess.run([sys.executable, str(Path(TP_SPEC.origin)), str(tmp_path), "--visits", "8,16"],
                         capture_output=True, text=True, check=True).stdout
    results = dict(line.split()[1:] for line in out.splitlines() if line.startswith("RESULT"))
    assert results["turns"] == "1"
    assert float(results["turn_drop_median"]) == pytest.approx(0.35)
    assert "game0000.sgf: move 4 G7 at 55%, answer E3, then 20%" in out and "game0001" not in out
    assert "8 visits:" in out and "16 visits:" in out
    prior = float(results["reply_prior_median"])
    assert 0.0 < prior < 1.0
