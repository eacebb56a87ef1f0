"""``benchmarks/selfplay_opponent.py``: a network's self-play games against the outside opponent, counted."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = importlib.util.spec_from_file_location("selfplay_opponent", ROOT / "benchmarks" / "selfplay_opponent.py")
S = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(S)


def _sgf(folder: Path, name: str, pb: str, pw: str, result: str, forked: bool = False) -> None:
    azo = "AZO[12]" if forked else ""
    (folder / name).write_text(f"(;FF[4]GM[1]SZ[9]KM[7]{azo}PB[{pb}]PW[{pw}]RE[{result}];B[ee];W[cc])")


def test_games_against_the_opponent_are_counted_for_the_network_by_start_and_colour(tmp_path, capsys):
    net = "net9.int8-abc"
    _sgf(tmp_path, "a.sgf", net, "pachi-5000", "B+R")          # won as Black, from the empty board
    _sgf(tmp_path, "b.sgf", "Pachi", net, "B+3.5")             # lost as White
    _sgf(tmp_path, "c.sgf", net, "pachi", "0")                  # a draw: half a point
    _sgf(tmp_path, "d.sgf", "pachi", net, "W+R", forked=True)  # won from a forked start: not in the headline
    _sgf(tmp_path, "e.sgf", net, net, "B+R")                    # self-play proper: not read
    _sgf(tmp_path, "f.sgf", net, "pachi", "Void")               # no result: not read
    games = [S.read_game(str(tmp_path / f"{c}.sgf"), "pachi") for c in "abcdef"]
    assert games[4] is None and games[5] is None
    assert [g["points"] for g in games[:4]] == [1.0, 0.0, 0.5, 1.0]
    assert [g["colour"] for g in games[:4]] == ["b", "w", "b", "w"]
    assert S.empty_board(games[:4]) == (1.5, 3)
    assert S.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "RESULT games 4" in out and "RESULT empty_board_games 3" in out
    assert "RESULT last_net_empty_board_score 0.500" in out
