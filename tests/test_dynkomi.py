"""Dynamic komi (``--dynamic-komi linear``): White giving handicap searches with a raised komi that falls to the
real one; what it reports, resigns on and counts with is the real komi."""

import numpy as np
import pytest

from azgo.engine import planes as P
from azgo.engine.board import BLACK, WHITE
from azgo.engine.dynkomi import DynamicKomi, ahead_offset, komi_offset
from azgo.engine.game import Game
from azgo.engine.mcts import SearchConfig
from azgo.engine.player import AHEAD_LOG_CAP, Player, PlayerConfig
from azgo.engine.search import Limits, Searcher
from scripted_eval import ScriptedEvaluator

LINEAR = DynamicKomi("linear")


def test_the_offset_is_the_stones_worth_less_the_komi_falling_to_zero_in_whole_points():
    # 2 stones at komi 0.5: an even game at komi 8.5 (handicap_worth(2) = 8), so White searches with +8
    assert komi_offset(LINEAR, WHITE, 2, 0.5, 0, 19) == 8.0
    assert komi_offset(LINEAR, WHITE, 2, 0.5, 100, 19) == 4.0  # 8 x (1 - 100 / 198.55) = 3.97
    assert komi_offset(LINEAR, WHITE, 2, 0.5, 199, 19) == 0.0  # 0.55 x 361 moves: the real komi from here
    assert komi_offset(LINEAR, WHITE, 2, 0.5, 300, 19) == 0.0
    assert komi_offset(LINEAR, WHITE, 4, 0.5, 0, 19) == 22.0
    assert komi_offset(LINEAR, WHITE, 9, 0.5, 0, 19) == 57.0
    assert komi_offset(LINEAR, WHITE, 2, 6.5, 0, 19) == 2.0  # part of the stones' worth is paid by komi
    assert komi_offset(LINEAR, WHITE, 2, 12.5, 0, 19) == 0.0  # komi beyond the stones' worth: nothing to add
    assert komi_offset(LINEAR, WHITE, 3, 0.5, 50, 9) == 0.0  # 9x9 ends at move 44.55
    assert komi_offset(LINEAR, WHITE, 3, 0.5, 20, 9) == 8.0  # 15 x (1 - 20 / 44.55) = 8.27
    # only White, only with a handicap of 2+, only when on
    assert komi_offset(LINEAR, BLACK, 4, 0.5, 0, 19) == 0.0
    assert komi_offset(LINEAR, WHITE, 0, 7.5, 0, 19) == 0.0
    assert komi_offset(DynamicKomi(), WHITE, 4, 0.5, 0, 19) == 0.0
    with pytest.raises(ValueError, match="dynamic komi must be one of off, linear, ahead"):
        DynamicKomi("quadratic")


class KomiSeen(ScriptedEvaluator):
    """The scripted evaluator, remembering the side to move's komi of every position it was asked about."""

    def __init__(self):
        super().__init__(scale=8.0)
        self.komis = set()

    def evaluate(self, planes, legal, keys=None):
        self.komis.update(np.round(planes[:, P.KOMI_PLANE, 0, 0] * P.KOMI_SCALE, 3).tolist())
        return super().evaluate(planes, legal, keys)


def play_white(mode: str, stones: int = 2, komi: float = 0.5, size: int = 9, moves: int = 0):
    game = Game(size, komi)
    game.place_fixed_handicap(stones)
    rng = np.random.default_rng(1)
    for _ in range(moves):  # moves of both colours, White's turn again at the end
        legal = [m for m in game.board.legal_moves() if m != game.board.pass_move]
        game.play(int(rng.choice(legal)))
    ev = KomiSeen()
    player = Player(Searcher(ev, SearchConfig(batch_size=4), seed=3),
                    PlayerConfig(dynamic_komi=DynamicKomi(mode)))
    decision = player.genmove(game, Limits(visits=64))
    return ev, decision, player, game


def test_white_giving_stones_searches_with_the_raised_komi_and_reports_the_real_lead():
    ev_off, off, _, _ = play_white("off")
    assert ev_off.komis <= {0.5, -0.5}  # the real komi, from White's side (+) and Black's (-)
    ev_on, on, _, _ = play_white("linear")
    # 2 stones are worth 8 points: at move 0 (the handicap is no move) White searches at komi 8.5
    assert 8.5 in ev_on.komis and -8.5 in ev_on.komis and 0.5 not in ev_on.komis
    # the scripted score is material + komi: the reported lead is the real komi's (within the search's spread)
    assert on.result.score_lead == pytest.approx(off.result.score_lead, abs=1.5)
    assert on.result.score_lead < 0  # White is behind 2 stones - 0.5 komi, whatever the search pretended
    assert on.winrate > off.winrate  # ... and compared its moves near an even game
    assert on.komi_offset == 8.0 and off.komi_offset == 0.0


def test_the_offset_falls_with_the_moves_and_black_never_uses_it():
    ev, _, _, game = play_white("linear", moves=30)  # move 30 of a 2-stone 9x9 game: 8 x (1 - 30 / 44.55) = 2.6
    assert game.move_number == 30 and 3.5 in ev.komis and 8.5 not in ev.komis
    game = Game(9, 0.5)
    game.place_fixed_handicap(2)
    game.play(game.board.legal_moves()[0])  # White's move: Black to play
    ev = KomiSeen()
    Player(Searcher(ev, SearchConfig(batch_size=4), seed=3), PlayerConfig(dynamic_komi=LINEAR)).genmove(
        game, Limits(visits=32))
    assert ev.komis <= {0.5, -0.5}


def test_gtp_dynamic_komi_option_and_a_bad_value(capsys):
    from azgo.gtp.config import EngineConfig
    from azgo.gtp.engine import GtpEngine
    from azgo.gtp.protocol import parse
    eng = GtpEngine(EngineConfig(visits=32, dynamic_komi="linear", threads=1), evaluator=KomiSeen(), size=9)
    assert eng.player.config.dynamic_komi == LINEAR
    for cmd in ("boardsize 9", "komi 0.5", "fixed_handicap 2"):
        eng.execute(parse(cmd))
    assert eng.execute(parse("genmove w")) not in ("pass", "resign")
    assert 8.5 in eng.evaluator.komis
    out = capsys.readouterr().err
    assert "(searched at komi 8.5: dynamic komi)" in out, out
    with pytest.raises(ValueError, match="dynamic komi must be one of off, linear, ahead, not 'on'"):
        EngineConfig(dynamic_komi="on")


def test_pondering_after_whites_move_searches_at_the_komi_of_whites_next_search():
    import time
    from azgo.gtp.config import EngineConfig
    from azgo.gtp.engine import GtpEngine
    from azgo.gtp.protocol import parse
    ev = KomiSeen()
    eng = GtpEngine(EngineConfig(visits=32, dynamic_komi="linear", ponder=True, threads=1), evaluator=ev, size=9)
    for cmd in ("boardsize 9", "komi 0.5", "fixed_handicap 2", "genmove w"):
        eng.execute(parse(cmd))
    ev.komis.clear()
    eng.after_response()  # pondering on Black's turn, move 1: 8 x (1 - 1 / 44.55) = 7.8 -> White's komi 8.5
    deadline = time.monotonic() + 10
    while eng.searcher.root is None or eng.searcher.root.visits < 50:
        assert time.monotonic() < deadline, "pondering did not search"
        time.sleep(0.02)
    eng.stop()
    assert ev.komis and ev.komis <= {8.5, -8.5}, ev.komis


AHEAD = DynamicKomi("ahead")


def test_ahead_offset_is_the_lead_beyond_the_margin_in_steps_and_capped():
    # 19x19: margin 3% of 361 points = 10.83, cap 15% = 54, step 4
    assert ahead_offset(AHEAD, 30.0, 0.0, 19) == 19.0
    assert ahead_offset(AHEAD, 31.0, 19.0, 19) == 19.0  # 20 is within a step of 19: the offset (and tree) stand
    assert ahead_offset(AHEAD, 40.0, 19.0, 19) == 29.0
    assert ahead_offset(AHEAD, 13.0, 0.0, 19) == 0.0  # 2 beyond the margin: less than a step
    assert ahead_offset(AHEAD, 10.0, 19.0, 19) == 0.0  # back within the margin: the real komi at once
    assert ahead_offset(AHEAD, -20.0, 5.0, 19) == 0.0  # behind: never
    assert ahead_offset(AHEAD, 100.0, 0.0, 19) == 54.0
    assert ahead_offset(AHEAD, None, 7.0, 19) == 7.0  # no lead known: as it was
    assert ahead_offset(AHEAD, 30.0, 0.0, 9) == 12.0  # 9x9: margin 2.43, cap 12
    assert ahead_offset(LINEAR, 30.0, 0.0, 19) == 0.0 and ahead_offset(DynamicKomi(), 30.0, 0.0, 19) == 0.0
    with pytest.raises(ValueError, match="margin, step and cap"):
        DynamicKomi("ahead", margin=-1)


@pytest.mark.parametrize("colour", [BLACK, WHITE])
def test_a_side_far_ahead_searches_at_a_komi_worse_by_its_lead_and_reports_the_real_lead(colour):
    # 9x9, the side to move given 30 points by the komi; the scripted score is material + komi
    komi = -30.5 if colour == BLACK else 30.5
    game = Game(9, komi)
    if colour == WHITE:
        game.play(game.board.legal_moves()[0])
    ev = KomiSeen()
    player = Player(Searcher(ev, SearchConfig(batch_size=4), seed=3), PlayerConfig(dynamic_komi=AHEAD))
    first = player.genmove(game, Limits(visits=64))
    assert first.komi_offset == 0.0 and ev.komis <= {30.5, -30.5}  # no lead known yet: the real komi
    assert first.result.score_lead > 20
    assert player.ahead[colour] == 12.0 and player.ahead[3 - colour] == 0.0  # the cap on 9x9
    ev.komis.clear()
    second = player.genmove(game, Limits(visits=64))  # the same position again: now with the offset
    searched = komi + (12.0 if colour == BLACK else -12.0)  # White's komi raised against Black, lowered for White
    assert second.komi_offset == searched - komi
    assert ev.komis <= {searched, -searched} and ev.komis
    assert second.result.score_lead == pytest.approx(first.result.score_lead, abs=2.0)  # the real lead
    assert second.winrate < first.winrate  # searched as a smaller lead
    player.reset()
    assert player.ahead == {BLACK: 0.0, WHITE: 0.0}


def test_an_undo_takes_back_the_ahead_offsets_of_the_searches_after_it():
    player = Player(Searcher(KomiSeen(), SearchConfig(batch_size=4), seed=3), PlayerConfig(dynamic_komi=AHEAD))
    player._record_ahead(BLACK, 10, 20.0)
    player._record_ahead(BLACK, 12, 30.0)
    player._record_ahead(WHITE, 11, 8.0)
    assert player.ahead_in_force(BLACK, 13) == 30.0 and player.ahead_in_force(BLACK, 12) == 30.0
    assert player.ahead == {BLACK: 30.0, WHITE: 8.0}
    assert player.ahead_in_force(BLACK, 11) == 20.0  # move 12 taken back: the search at move 10 stands
    assert player.ahead_in_force(BLACK, 12) == 20.0  # and move 12 played again starts from it
    assert player.ahead_in_force(WHITE, 11) == 8.0 and player.ahead_in_force(BLACK, 9) == 0.0
    player._record_ahead(WHITE, 11, 12.0)  # the same position searched again replaces its offset
    assert player._ahead_log[WHITE] == [(11, 12.0)]
    for n in range(3000):  # a long game's log stays capped
        player._record_ahead(WHITE, 100 + n, 4.0)
    assert len(player._ahead_log[WHITE]) == AHEAD_LOG_CAP


def test_searches_without_ahead_leave_no_offsets():
    player = Player(Searcher(KomiSeen(), SearchConfig(batch_size=4), seed=3), PlayerConfig())
    player.genmove(Game(9, 7.5), Limits(visits=16))
    assert player._ahead_log == {BLACK: [], WHITE: []} and player.ahead == {BLACK: 0.0, WHITE: 0.0}
