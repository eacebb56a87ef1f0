"""benchmarks/komi_handicap.py --selfplay: the level of a network's score lead against how self-play games ended."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from azgo.nets.evaluator import Evaluation

SPEC = importlib.util.spec_from_file_location(
    "komi_handicap", Path(__file__).resolve().parent.parent / "benchmarks" / "komi_handicap.py")
K = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(K)

MOVES = ";B[ee];W[cc];B[gg];W[cg];B[gc]"


class FixedLead:
    """A stand-in network whose side to move always leads by 2 points."""

    def evaluate(self, planes, legal):
        b, n = len(planes), planes.shape[-1]
        return Evaluation(policy=np.full((b, n * n + 1), 1 / (n * n + 1), np.float32), value=np.zeros(b, np.float32),
                          ownership=None, score=np.full(b, 2.0, np.float32))


def test_lead_bias_counts_only_played_out_games_from_the_empty_board(tmp_path):
    games = {
        "scored": f"(;GM[1]FF[4]SZ[9]KM[7]RE[B+5]{MOVES})",
        "resigned": f"(;GM[1]FF[4]SZ[9]KM[7]RE[W+R]{MOVES})",
        "forked": f"(;GM[1]FF[4]SZ[9]KM[7]AZO[3]RE[W+30]{MOVES})",
        "handicap": "(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]AB[cg][gc]PL[W]RE[W+30];W[ee];B[cc])",
        "other_size": "(;GM[1]FF[4]SZ[7]KM[7]RE[W+30];B[dd];W[cc])",
        "draw": f"(;GM[1]FF[4]SZ[9]KM[7]RE[0]{MOVES})",
        "no_moves": "(;GM[1]FF[4]SZ[9]KM[7]RE[0])",
    }
    for name, text in games.items():
        (tmp_path / f"{name}.sgf").write_text(text)
    at0, over, used = K.lead_bias(FixedLead(), 9, str(tmp_path))
    assert used == 2  # the scored game and the draw
    # Black's view: +2 with Black to move (moves 0, 2, 4), -2 with White to move (move 1); finals +5 and 0
    assert at0 == pytest.approx(((2 - 5) + (2 - 0)) / 2)
    assert over == pytest.approx(np.mean([2 - 5, -2 - 5, 2 - 5, 2 - 5, 2, -2, 2, 2]))
    with pytest.raises(SystemExit, match="no played-out 13x13 game"):
        K.lead_bias(FixedLead(), 13, str(tmp_path))
