"""The chat line of ``azgo gtp --ogs-chat`` (azgo.gtp.ogs_chat) for results a search can give."""

from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import gtp_to_move
from azgo.engine.search_types import MoveInfo, SearchResult
from azgo.gtp.ogs_chat import chat_line


def _result(size, winrate, lead, pv):
    moves = [gtp_to_move(v, size) for v in pv]
    cand = MoveInfo(move=moves[0], visits=90, winrate=winrate, prior=0.3, lcb=winrate - 0.02, pv=moves, score_lead=lead)
    other = MoveInfo(move=gtp_to_move("A1", size), visits=10, winrate=0.2, prior=0.1, lcb=0.1,
                     pv=[gtp_to_move("A1", size)], score_lead=-9.0)
    return SearchResult(move=moves[0], winrate=winrate, score_lead=lead, visits=100, playouts=80, reused_visits=20,
                        seconds=0.5, nn_seconds=0.4, candidates=[other, cand]), moves[0]


def test_chat_line_names_move_side_values_and_pv():
    result, move = _result(19, 0.5534, -2.04, ["Q16", "D4", "C16", "Q4", "R3"])
    assert chat_line(result, move, WHITE, 19) == (
        "MALKOVICH:azgo (White) Q16: winrate 55.3%, score lead -2.0, 100 visits, PV Q16 D4 C16 Q4 R3")


def test_chat_line_caps_the_pv_and_leaves_out_a_missing_score():
    result, move = _result(9, 0.9, None, ["E5", "C3", "G7", "C7", "G3"])
    assert chat_line(result, move, BLACK, 9, pv_moves=2) == (
        "MALKOVICH:azgo (Black) E5: winrate 90.0%, 100 visits, PV E5 C3")


def test_chat_line_for_a_resignation_has_no_pv():
    result, _ = _result(13, 0.02, -35.5, ["K10"])
    assert chat_line(result, None, BLACK, 13) == "MALKOVICH:azgo (Black) resigns: winrate 2.0%, score lead -35.5, 100 visits"
