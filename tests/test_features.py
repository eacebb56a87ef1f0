"""Input planes: layout, perspective, history, liberties, ko, komi."""

import numpy as np

from azgo.engine import planes as P
from azgo.engine.coords import gtp_to_move
from azgo.engine.features import encode, encode_game
from azgo.engine.game import Game


def rc(v, n=9):
    return divmod(gtp_to_move(v, n), n)


def test_planes_for_a_short_game():
    g = Game(9, komi=7.5)
    for v in ("E5", "D5", "C3"):
        g.play(gtp_to_move(v, 9))
    x = encode_game(g)
    assert x.shape == (P.NUM_PLANES, 9, 9) and x.dtype == np.float32
    # White to move: own = white stones
    assert x[P.OWN_STONES][rc("D5")] == 1 and x[P.OWN_STONES].sum() == 1
    assert x[P.OPP_STONES].sum() == 2 and x[P.OPP_STONES][rc("C3")] == 1
    # one move back: C3 not there yet
    assert x[P.OPP_STONES + 1][rc("C3")] == 0 and x[P.OPP_STONES + 1].sum() == 1
    # history before the start is empty
    assert x[P.OWN_STONES + 3:P.OWN_STONES + 8].sum() == 0 and x[P.OPP_STONES + 3:P.OPP_STONES + 8].sum() == 0
    assert x[P.BLACK_TO_MOVE].sum() == 0
    assert x[P.ON_BOARD_PLANE].sum() == 81
    assert np.allclose(x[P.KOMI_PLANE], 7.5 / P.KOMI_SCALE)
    # liberties: D5 white has 3 (D6, C5, D4), E5 black has 3, C3 black has 4
    assert x[P.OWN_LIBERTIES + 2][rc("D5")] == 1
    assert x[P.OPP_LIBERTIES + 2][rc("C3")] == 1 and x[P.OPP_LIBERTIES + 2].sum() == 2
    g.play(gtp_to_move("pass", 9))
    y = encode_game(g)
    assert y[P.BLACK_TO_MOVE].sum() == 81
    assert np.allclose(y[P.KOMI_PLANE], -7.5 / P.KOMI_SCALE)
    assert y[P.OWN_STONES][rc("E5")] == 1


def test_atari_and_ko_planes():
    g = Game(5, komi=0)
    for v in ("B4", "C4", "A3", "D3", "B2", "C2", "pass", "B3", "C3"):
        g.play(gtp_to_move(v, 5))
    # Black C3 took White B3: a ko; White may not retake at B3 now.
    assert g.board.ko_move == gtp_to_move("B3", 5)
    x = encode_game(g)
    assert x[P.KO_PLANE].sum() == 1 and x[P.KO_PLANE][rc("B3", 5)] == 1
    assert x[P.OPP_LIBERTIES][rc("C3", 5)] == 1  # the ko stone is in atari
    assert encode([g.boards[-2]], 0)[P.KO_PLANE].sum() == 0
