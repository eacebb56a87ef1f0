"""The versioned input-plane specification shared by play (numpy) and training (torch).

A network declares the FEATURE_VERSION it was trained on; the evaluator refuses a network whose
version differs. Planes are float32, shape ``[NUM_PLANES, N, N]`` for one position, indexed
``[plane, row, col]`` with row 0 the top row of the board (SGF row ``a``, GTP row ``N``).

Everything is from the perspective of the side to move ("own" = the player about to move).

=====  ==========================================================
plane  meaning
=====  ==========================================================
0-7    own stones, in the current position (0) and the 7 before it (1..7)
8-15   opponent stones, same history order
16     1.0 everywhere on the board if Black is to move, else 0.0
17-19  own chains with exactly 1, exactly 2, 3 or more liberties
20-22  opponent chains with exactly 1, exactly 2, 3 or more liberties
23     the simple-ko point the side to move may not take back (one point or none)
24     on-board mask: 1.0 on every point of the board
25     komi from the side to move's view, divided by 15 (+komi/15 for White, -komi/15 for Black)
=====  ==========================================================

History positions before the start of the game are all-zero planes.
"""

FEATURE_VERSION = 1
HISTORY = 8
NUM_PLANES = 26
OWN_STONES = 0
OPP_STONES = 8
BLACK_TO_MOVE = 16
OWN_LIBERTIES = 17
OPP_LIBERTIES = 20
KO_PLANE = 23
ON_BOARD_PLANE = 24
KOMI_PLANE = 25
KOMI_SCALE = 15.0
