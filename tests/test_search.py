"""Search: tactics with a scripted evaluator, tree reuse, exact terminals, self-play knobs, clocks,
resignation, passing, pondering."""

import math
import time

import numpy as np
import pytest

from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import gtp_to_move, move_to_gtp
from azgo.engine.game import Game
from azgo.engine.mcts import SearchConfig
from azgo.engine.resign import ResignConfig, ResignTracker, effective_threshold
from azgo.engine.player import Player, PlayerConfig
from azgo.engine.player import pass_is_safe
from azgo.engine.search import Limits, Searcher
from azgo.training.targets import policy_target
from azgo.engine.timecontrol import Clock, TimeSettings

from scripted_eval import FakeClock, ScriptedEvaluator


def game_with(black, white, size=9, komi=0.0, to_move=BLACK):
    g = Game(size, komi=komi)
    g.board.setup([gtp_to_move(v, size) for v in black], [gtp_to_move(v, size) for v in white], to_move=to_move)
    return g


# ------------------------------------------------------------------ tactics
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ladder_on_9x9(seed):
    # White D4 has two liberties. Atari at E4 starts a working ladder (verified by reading it out
    # below); atari at D3 lets White extend to three liberties. The prior cannot tell them apart.
    g = game_with(["C4", "D5", "C3"], ["D4"])
    s = Searcher(ScriptedEvaluator(), SearchConfig(), seed=seed)
    r = s.search(g, Limits(visits=1200))
    assert move_to_gtp(r.move, 9) == "E4", [(move_to_gtp(c.move, 9), c.visits) for c in r.candidates[:4]]
    # the prior treats both ataris alike
    prior = {move_to_gtp(c.move, 9): c.prior for c in r.candidates}
    assert prior["E4"] == pytest.approx(prior["D3"])


def test_capture_race_is_won_by_filling_a_liberty():
    # Bottom edge: Black B1-C1 (liberties A1, B2) races the adjacent White D1-E1 (liberties E2, F1);
    # both are walled in by safe walls of the other colour. Black to move wins only by filling one
    # of White's liberties (E2 or F1) first; capturing then frees Black's chain.
    black = ["B1", "C1", "D3", "E3", "F3", "G3", "D2", "F2", "G2", "G1"]
    white = ["D1", "E1", "A3", "B3", "C3", "A2", "C2"]
    g = game_with(black, white)
    assert g.board.liberties(gtp_to_move("B1", 9)) == 2 and g.board.liberties(gtp_to_move("D1", 9)) == 2
    searchers = {BLACK: Searcher(ScriptedEvaluator(), seed=5), WHITE: Searcher(ScriptedEvaluator(), seed=6)}
    first = searchers[BLACK].search(g, Limits(visits=1000)).move
    assert move_to_gtp(first, 9) in ("E2", "F1")
    g.play(first)
    for _ in range(4):  # both sides play on with the search: Black wins the race
        g.play(searchers[g.to_move].search(g, Limits(visits=600)).move)
    assert g.board.color_at(gtp_to_move("D1", 9)) != WHITE and g.board.color_at(gtp_to_move("E1", 9)) != WHITE
    assert g.board.color_at(gtp_to_move("B1", 9)) == BLACK


def test_terminal_pass_is_scored_exactly():
    # 3x3, Black owns everything with two eyes; White passed. Black's pass ends the game with a win
    # by 9 points (komi 0); filling an eye would let White capture everything.
    g = game_with(["B3", "A2", "B2", "C2", "B1", "C1", "A3"], [], size=3, komi=0.0, to_move=WHITE)
    g.play(g.board.pass_move)
    s = Searcher(ScriptedEvaluator(), seed=0)
    r = s.search(g, Limits(visits=200))
    assert r.move == g.board.pass_move
    root = s.root
    pass_child = root.children.get(g.board.pass_move)
    # values are from the side to move at the node: White, who lost by 9
    assert pass_child is not None and pass_child.terminal == -1.0 and pass_child.score == -9.0
    i = int(np.flatnonzero(root.moves == g.board.pass_move)[0])
    assert root.W[i] == root.N[i] > 0  # every visit backed up exactly +1 for Black


# ------------------------------------------------------------------ tree reuse
def test_tree_reuse_keeps_visits():
    g = Game(9, komi=7.0)
    s = Searcher(ScriptedEvaluator(), seed=0)
    r1 = s.search(g, Limits(visits=400))
    assert r1.reused_visits == 0
    g.play(r1.move)
    reply = r1.candidates[0].pv[1]
    expected = s.root.children[r1.move].children[reply].visits
    g.play(reply)
    r2 = s.search(g, Limits(visits=400))
    assert expected > 0 and r2.reused_visits == expected
    assert r2.visits == 400 and r2.playouts == 400 - expected
    # an unexplored reply starts fresh
    g.play(r2.move)
    unexplored = next(m for m in g.board.legal_moves() if m not in s.root.children[r2.move].children)
    g.play(unexplored)
    assert s.search(g, Limits(visits=50)).reused_visits == 0
    # undo back into the old tree also starts fresh (a different line)
    g.undo()
    g.undo()
    assert s.search(g, Limits(visits=10)).reused_visits == 0


def test_batching_uses_fewer_network_calls():
    ev = ScriptedEvaluator()
    Searcher(ev, SearchConfig(batch_size=8), seed=0).search(Game(9), Limits(visits=400))
    assert ev.positions <= 400 and ev.calls < 400 / 4


# ------------------------------------------------------------------ self-play knobs
def test_noise_forced_playouts_and_pruning():
    cfg = SearchConfig(noise_fraction=0.25, forced_playouts_k=2.0)
    s = Searcher(ScriptedEvaluator(), cfg, seed=3)
    g = game_with(["C4", "D5", "C3"], ["D4"])  # the ladder: one clearly best move
    s.search(g, Limits(visits=800), noise=True, reuse=False)
    root = s.root
    assert not np.allclose(root.prior, root.raw_prior)
    assert root.prior.sum() == pytest.approx(1.0)
    target = policy_target(s, prune=True)
    raw = policy_target(s, prune=False)
    assert raw.sum() == root.N.sum() and target.sum() < raw.sum()
    assert np.all(target <= raw) and np.all(target == np.round(target))
    assert target.argmax() == raw.argmax() and target.max() == raw.max()
    # every pruned child's PUCT value at its pruned count stays at or below the best child's
    total = root.N.sum()
    c = cfg.c_puct + math.log((1 + total + cfg.c_puct_base) / cfg.c_puct_base)
    q = np.where(root.N > 0, root.W / np.maximum(root.N, 1), -1)
    best = int(np.argmax(root.N))
    best_puct = q[best] + c * root.prior[best] * math.sqrt(total) / (1 + root.N[best])
    pruned = target[root.moves] < root.N
    kept = target[root.moves][pruned]
    assert pruned.sum() > 0
    puct = q[pruned] + c * root.prior[pruned] * math.sqrt(total) / (1 + np.maximum(kept, 1))
    assert np.all(puct <= best_puct + 1e-9)
    # forced playouts: every visited child got at least its forced share (up to rounding)
    forced = np.sqrt(2.0 * root.prior * root.N.sum())
    assert np.all(root.N[root.N > 0] >= np.floor(forced[root.N > 0]) - 1)


def test_temperature_sampling_follows_visits():
    s = Searcher(ScriptedEvaluator(), seed=0)
    g = Game(7)
    s.search(g, Limits(visits=200))
    picks = {s.choose_move(temperature=1.0) for _ in range(200)}
    assert len(picks) > 1
    assert all(s.root.N[np.flatnonzero(s.root.moves == m)[0]] > 0 for m in picks)


# ------------------------------------------------------------------ limits and clocks
def test_seconds_limit_and_stop_event():
    clock = FakeClock()
    s = Searcher(ScriptedEvaluator(cost=0.01, clock=clock), now=clock, seed=0)
    r = s.search(Game(9), Limits(seconds=1.0, early_stop=False))
    assert 0.99 <= r.seconds <= 1.02


def test_a_helper_thread_stops_at_the_budget_while_the_searching_thread_is_held_up():
    """Two threads: when the searching thread is held up (here: its network call waits, as a thread
    starved of the GIL or the CPU does), the helper thread must not go on searching past the budget."""
    import threading
    clock = FakeClock()
    ev = ScriptedEvaluator(cost=0.02, clock=clock)
    inner = ev.evaluate
    helper_calls = []

    def evaluate(planes, legal, keys=None):
        if threading.current_thread() is threading.main_thread():
            if clock() > 0.2:  # held up for up to 1 s of real time, or until the helper has made 50 calls
                t = time.monotonic()
                while len(helper_calls) < 50 and time.monotonic() - t < 1.0:
                    time.sleep(0.002)
        else:
            helper_calls.append(clock())
        return inner(planes, legal, keys)

    ev.evaluate = evaluate
    s = Searcher(ev, SearchConfig(threads=2), seed=0, now=clock)
    r = s.search(Game(9), Limits(visits=10 ** 6, early_stop=False), budget=0.5)
    assert helper_calls and max(helper_calls) < 0.5  # no helper call began after the budget
    assert r.seconds <= 0.5 + 2 * 0.02, r.seconds  # at most one call in flight on each thread


def play_game_on_clock(settings: TimeSettings, size=9, moves=120, cost=0.02, lag=1.0, threads=1):
    """Both sides play through ``Player`` (its clock budget, pass rules, resignation off) with
    ``threads`` search threads; the evaluator's cost moves a simulated clock (plus the process's CPU time)."""
    clock = FakeClock(real=True)
    ev = ScriptedEvaluator(cost=cost, clock=clock)
    game = Game(size, komi=7.0)
    clocks = Clock(settings)
    players = {c: Player(Searcher(ev, SearchConfig(threads=threads), seed=c, now=clock),
                         PlayerConfig(resign=ResignConfig(enabled=False), lag=lag)) for c in (BLACK, WHITE)}
    worst = 0.0
    for _ in range(moves):
        if game.over:
            break
        colour = game.to_move
        budget = players[colour].budget(clocks, game, colour)
        t = clock()
        d = players[colour].genmove(game, Limits(visits=10 ** 6), budget=budget)
        elapsed = clock() - t
        worst = max(worst, elapsed)
        clocks.spend(colour, elapsed)
        game.play(d.move)
    return clocks, worst, game


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
@pytest.mark.parametrize("settings", [
    TimeSettings("absolute", main=10.0),
    TimeSettings("byoyomi", main=0.0, period=1.0, periods=5),
    TimeSettings("byoyomi", main=5.0, period=1.0, periods=1),
    TimeSettings("canadian", main=0.0, period=5.0, stones=5),
    TimeSettings("fischer", main=10.0, increment=1.0),
], ids=["absolute10s", "byoyomi5x1s", "main5s+byoyomi1x1s", "canadian5in5s", "fischer10s+1s"])
@pytest.mark.slow
def test_simulated_clock_never_overruns(settings, threads):
    cost = 0.05 if settings.kind == "fischer" else 0.02  # simulated seconds a network call: 1 s budgets, or 0.5 s
    clocks, worst, game = play_game_on_clock(settings, threads=threads, cost=cost)
    assert game.move_number > 60
    for c in (BLACK, WHITE):
        cc = clocks.clocks[c]
        assert not cc.flagged and cc.periods_lost == 0, (c, cc, worst)


@pytest.mark.parametrize("size", [9, 19])
@pytest.mark.parametrize("settings", [
    TimeSettings("fischer", main=10.0, increment=1.0),
    TimeSettings("fischer", main=30.0, increment=2.0),
    TimeSettings("fischer", main=30.0, increment=2.0, main_limit=35.0, max_per_move=3.0),
], ids=["10s+1s", "30s+2s", "capped30s+2s"])
@pytest.mark.slow
def test_fischer_games_lose_no_time_and_use_the_clock(settings, size):
    """Fischer clocks as gtp2ogs sends them (kata-time_settings): a whole game of moves on 9x9 and 19x19 without a
    flag, spending most of each increment (not a fixed small budget) and never over the per-move cap."""
    moves = 120 if size == 9 else 100  # 19x19: far enough for 10 s + 1 s to run down to its increment
    # a network call costs 0.1 simulated seconds: budgets here are 1-3 s a move, so a search still makes
    # 10-30 calls a move and overruns by at most one call (the byo-yomi tests above use 0.02 for 0.5 s budgets)
    clocks, worst, game = play_game_on_clock(settings, size=size, moves=moves, cost=0.1, lag=0.5)
    assert game.move_number >= 60
    for c in (BLACK, WHITE):
        cc = clocks.clocks[c]
        assert not cc.flagged and 0 < cc.main_left, (c, cc, worst)
        if settings.main_limit >= 0:
            assert cc.main_left <= settings.main_limit
    if settings.max_per_move >= 0:
        assert worst <= settings.max_per_move
    assert worst >= 0.5 * settings.increment  # the increment is used, not thrown away


def test_fischer_budget():
    c = Clock(TimeSettings("fischer", main=30.0, increment=2.0))
    first = c.budget(BLACK, 0, 361, lag=1.0)
    assert 2.0 < first < 4.0  # the increment plus a share of the excess
    c.time_left(BLACK, 1.5, 0)  # less than the increment left: half of it (it comes back after the move)
    assert c.budget(BLACK, 200, 361, lag=1.0) == pytest.approx(0.75)
    c.spend(BLACK, 1.0)
    assert c.clocks[BLACK].main_left == pytest.approx(2.5) and not c.clocks[BLACK].flagged
    c.spend(BLACK, 3.0)
    assert c.clocks[BLACK].flagged
    with pytest.raises(ValueError):
        c.time_left(BLACK, 10, 1)


def test_clock_from_gtp_and_time_left():
    assert TimeSettings.from_gtp(600, 30, 0).kind == "none"
    assert TimeSettings.from_gtp(600, 0, 0).kind == "absolute"
    assert TimeSettings.from_gtp(600, 300, 25) == TimeSettings("canadian", 600, 300, 0, 25)
    c = Clock(TimeSettings("byoyomi", main=60, period=10, periods=3))
    c.time_left(BLACK, 30, 0)
    assert c.clocks[BLACK].main_left == 30 and not c.clocks[BLACK].in_overtime
    c.time_left(BLACK, 0, 0)  # main time just ran out
    assert c.clocks[BLACK].in_overtime and c.clocks[BLACK].periods_left == 3
    c.time_left(BLACK, 7, 2)
    assert c.clocks[BLACK].period_left == 7 and c.clocks[BLACK].periods_left == 2
    assert c.budget(BLACK, 10, 81, lag=1.0) == pytest.approx(9.0)
    assert math.isinf(Clock().budget(BLACK, 0, 81))
    with pytest.raises(ValueError):
        TimeSettings("byoyomi", main=10, period=0, periods=0)


# ------------------------------------------------------------------ resignation and passing
def test_resignation():
    area = 81
    t = ResignTracker(ResignConfig(threshold=0.1, consecutive=3))
    assert not any(t.observe(0.01, m, area) for m in (2, 4, 6))  # too early in the game
    t.reset()
    assert [t.observe(w, m, area) for w, m in ((0.05, 30), (0.04, 32), (0.03, 34))] == [False, False, True]
    t.reset()
    assert not any(t.observe(w, m, area) for w, m in ((0.05, 30), (0.5, 32), (0.03, 34), (0.03, 36)))
    assert t.observe(0.02, 38, area)
    off = ResignTracker(ResignConfig(enabled=False))
    assert not any(off.observe(0.0, m, area) for m in range(30, 60))
    # White in a 4-stone game: a much lower bar early on
    cfg = ResignConfig(threshold=0.1)
    assert effective_threshold(cfg, 4, area, 4, True) < 0.03
    assert effective_threshold(cfg, 20, area, 4, False) == 0.1
    assert effective_threshold(cfg, 60, area, 4, True) == pytest.approx(0.1)
    white_h, black = ResignTracker(cfg), ResignTracker(cfg)
    assert not any(white_h.observe(0.07, m, area, handicap=4, is_white=True) for m in (22, 24, 26, 28))
    assert any(black.observe(0.07, m, area, handicap=4, is_white=False) for m in (22, 24, 26, 28))


def test_black_receiving_a_handicap_does_not_resign_while_behind_by_less_than_the_stones_are_worth():
    from azgo.engine.resign import handicap_worth
    area, cfg = 361, ResignConfig(threshold=0.1, consecutive=3)
    assert handicap_worth(0) == 0 and handicap_worth(2) == 8 and handicap_worth(4) == 22 and handicap_worth(9) == 57
    inside, outside, even = ResignTracker(cfg), ResignTracker(cfg), ResignTracker(cfg)
    moves = range(100, 140, 2)
    assert not any(inside.observe(0.02, m, area, handicap=4, lead=-15.0) for m in moves)  # 15 < 22 points behind
    assert any(outside.observe(0.02, m, area, handicap=4, lead=-30.0) for m in moves)
    assert any(even.observe(0.02, m, area, handicap=0, lead=-15.0) for m in moves)  # no stones: the winrate rules
    white = ResignTracker(cfg)  # White giving the stones: the lead changes nothing
    assert any(white.observe(0.02, m, area, handicap=4, is_white=True, lead=-15.0) for m in moves)
    # the player hands the search's lead on: Black in a 4-stone game, 15 points behind, keeps playing
    game = Game(19, komi=0.5)
    game.place_fixed_handicap(4)
    player = Player(Searcher(ScriptedEvaluator(), seed=0), PlayerConfig(resign=cfg))
    for _ in range(100):  # past the first quarter of the game, where nobody resigns
        game.play(next(m for m in game.board.legal_moves() if m != game.board.pass_move))
    assert not any(player.should_resign(game, BLACK, 0.02, lead=-15.0) for _ in range(5))
    assert any(player.should_resign(game, BLACK, 0.02, lead=-30.0) for _ in range(5))


def test_search_resigns_in_a_lost_position():
    # White has nothing; Black owns the board: White's searches report a tiny winrate.
    g = game_with(["C3", "C4", "C5", "D3", "D5", "E3", "E4", "E5", "G7", "G6"], [], komi=0, to_move=WHITE)
    s = Searcher(ScriptedEvaluator(scale=2.0), seed=0)
    t = ResignTracker(ResignConfig())
    decisions = [t.observe(s.search(g, Limits(visits=100)).winrate, 40 + 2 * k, 81) for k in range(3)]
    assert decisions == [False, False, True]


def test_pass_rules():
    # Black leads on the board; White passed: Black answers with a pass.
    g = game_with(["E5"], [], komi=0.5)
    g.board.to_move = WHITE
    g.play(g.board.pass_move)
    s = Searcher(ScriptedEvaluator(), seed=0)
    player = Player(s)
    s.search(g, Limits(visits=30))
    assert player.choose(g) == g.board.pass_move
    # ...but self-play (answer_pass off) plays on, and an excluded pass is never answered
    assert player.choose(g, exclude={g.board.pass_move}) != g.board.pass_move
    # White would lose by passing now: never pass while the board says we lose, even when the
    # tree's best move is the pass.
    g2 = game_with(["E5"], [], komi=0.5, to_move=WHITE)
    s.search(g2, Limits(visits=30))
    root = s.root
    root.N[:] = 0
    root.N[np.flatnonzero(root.moves == g2.board.pass_move)[0]] = 25
    root.N[0] = 5
    assert s.choose_move() == g2.board.pass_move
    assert player.choose(g2) == int(root.moves[0])


def _two_groups(komi, c4_empty=False):
    """7x7: White lives on the A-B columns with eyes A2 and A5, Black on C-G with eyes E3 and E5
    (and C4 empty when asked: a point White may play that is no eye). White to move."""
    white = ["A1", "A3", "A4", "A6", "A7"] + [f"B{r}" for r in range(1, 8)]
    black = [f"{c}{r}" for c in "CDFG" for r in range(1, 8)] + ["E1", "E2", "E4", "E6", "E7"]
    if c4_empty:
        black.remove("C4")
    return game_with(black, white, size=7, komi=komi, to_move=WHITE)


def _prefer(s, g, visits: dict):
    """Make the searched root's visit counts ``visits`` (GTP move -> count), the rest 0."""
    root = s.root
    root.N[:] = 0
    for v, n in visits.items():
        m = g.board.pass_move if v == "pass" else gtp_to_move(v, g.size)
        root.N[np.flatnonzero(root.moves == m)[0]] = n


def test_eyes_are_never_filled_to_avoid_a_pass():
    """Pass safety (no pass while the count loses) must not make a player fill its own eyes: with only
    eyes left, the pass stands; with another move, that move is played, however the eye was visited."""
    g = _two_groups(komi=20.5)  # the count: Black by 0.5; White's search is far from hopeless
    b = g.board
    assert not pass_is_safe(b, g.komi, WHITE)
    assert b.fills_own_eye(gtp_to_move("A2", 7), WHITE) and b.fills_own_eye(gtp_to_move("A5", 7), WHITE)
    assert not b.fills_own_eye(gtp_to_move("E3", 7), WHITE) and b.fills_own_eye(gtp_to_move("E3", 7), BLACK)
    s = Searcher(ScriptedEvaluator(), seed=0)
    player = Player(s)
    s.search(g, Limits(visits=40))
    assert (s.root.q() + 1) / 2 > 0.1  # not hopeless (0.05)
    _prefer(s, g, {"pass": 25, "A2": 10, "A5": 5})
    assert player.choose(g) == b.pass_move
    g2 = _two_groups(komi=19.5, c4_empty=True)  # C4 is no one's: the count is again Black by 0.5
    assert not pass_is_safe(g2.board, g2.komi, WHITE)
    s.search(g2, Limits(visits=40))
    assert (s.root.q() + 1) / 2 > 0.1
    _prefer(s, g2, {"pass": 25, "A2": 10, "C4": 3})
    assert player.choose(g2) == gtp_to_move("C4", 7)
    _prefer(s, g2, {"pass": 25, "A2": 10})  # C4 not visited: still chosen over the eye
    assert player.choose(g2) == gtp_to_move("C4", 7)


def _set_q(s, g, values: dict):
    """Give the searched root's visited edges these mean values (GTP move -> value, root mover's view)."""
    root = s.root
    for v, q in values.items():
        m = g.board.pass_move if v == "pass" else gtp_to_move(v, g.size)
        i = np.flatnonzero(root.moves == m)[0]
        root.W[i] = q * root.N[i]


def test_no_pass_in_reply_to_a_move():
    """With --no-pass-after-move play passes only after the opponent's pass: after a move, a move about as
    good as the pass is played instead (a pass hands the opponent a free move; area scoring)."""
    g = game_with(["E5", "D5"], [], komi=0.5, to_move=WHITE)
    g.play(gtp_to_move("C7", 9))  # White's move: Black to move, the count wins for Black
    assert pass_is_safe(g.board, g.komi, BLACK)
    s = Searcher(ScriptedEvaluator(), SearchConfig(lcb=False), seed=0)  # the choice: most visits
    s.search(g, Limits(visits=40))
    _prefer(s, g, {"pass": 25, "C6": 10, "G3": 4})
    _set_q(s, g, {"pass": 0.9, "C6": 0.85, "G3": 0.9})
    assert s.choose_move() == g.board.pass_move
    assert Player(s).choose(g) == g.board.pass_move  # the default (and self-play's) rule: the pass
    strict = PlayerConfig(pass_replies_pass=True)  # azgo gtp --no-pass-after-move
    assert Player(s, strict).choose(g) == gtp_to_move("C6", 9)  # most visited within the margin of the pass
    _set_q(s, g, {"pass": 0.9, "C6": 0.7, "G3": 0.9})
    assert Player(s, strict).choose(g) == gtp_to_move("G3", 9)  # C6 is clearly worse than the pass
    _set_q(s, g, {"pass": 0.9, "C6": 0.7, "G3": 0.6})
    assert Player(s, strict).choose(g) == g.board.pass_move  # every move is clearly worse: the pass stands
    _set_q(s, g, {"pass": 0.9, "C6": 0.85, "G3": 0.9})
    assert Player(s, strict).choose(g, exclude={gtp_to_move("C6", 9)}) == gtp_to_move("G3", 9)
    # after the opponent's pass, the pass is answered as before
    g2 = game_with(["E5", "D5"], [], komi=0.5, to_move=WHITE)
    g2.play(g2.board.pass_move)
    s.search(g2, Limits(visits=40))
    assert Player(s, strict).choose(g2) == g2.board.pass_move
    # only one's own eyes left besides the pass: the pass stands
    g3 = _two_groups(komi=30.5)  # White to move (no move played yet) and White wins the count
    s.search(g3, Limits(visits=40))
    assert pass_is_safe(g3.board, g3.komi, WHITE)
    _prefer(s, g3, {"pass": 25, "A2": 10, "A5": 5})
    _set_q(s, g3, {"pass": 0.5, "A2": 0.5, "A5": 0.5})
    assert Player(s, strict).choose(g3) == g3.board.pass_move


def test_a_hopeless_player_may_pass_though_the_count_loses():
    g = _two_groups(komi=0.5, c4_empty=True)  # White is lost by 19 points...
    s = Searcher(ScriptedEvaluator(scale=2.0), seed=0)
    s.search(g, Limits(visits=40))
    s.root.value_sum = -0.95 * s.root.visits  # ...and its search knows it (winrate 2.5%)
    _prefer(s, g, {"pass": 25, "C4": 10})
    assert Player(s).choose(g) == g.board.pass_move
    assert Player(s, PlayerConfig(hopeless=0.0)).choose(g) == gtp_to_move("C4", 7)  # the old rule


def test_player_resigns_per_colour_and_samples_early_moves():
    g = game_with(["C3", "C4", "C5", "D3", "D5", "E3", "E4", "E5", "G7", "G6"], [], komi=0, to_move=WHITE)
    s = Searcher(ScriptedEvaluator(scale=2.0), seed=0)
    player = Player(s, PlayerConfig(resign=ResignConfig(min_move_fraction=0.0)))
    d = [player.genmove(g, Limits(visits=60)) for _ in range(3)]
    assert [x.resigned for x in d] == [False, False, True]
    assert player.trackers[BLACK].history == []  # Black's record is its own
    # temperature: the first moves are sampled by visits, later ones are the search's choice
    g9 = Game(9)
    sampler = Player(Searcher(ScriptedEvaluator(), seed=1), PlayerConfig(temperature_moves=100))
    sampler.searcher.search(g9, Limits(visits=200))
    picks = {sampler.choose(g9) for _ in range(40)}
    assert len(picks) > 1
    greedy = Player(sampler.searcher)
    assert len({greedy.choose(g9) for _ in range(10)}) == 1


# ------------------------------------------------------------------ pondering
def test_ponder_stops_promptly_and_tree_is_reused():
    from azgo.nets.evaluator import OnnxEvaluator
    from azgo.nets.registry import default_net_path
    ev = OnnxEvaluator(default_net_path())
    s = Searcher(ev, seed=0)
    g = Game(19, komi=7.5)
    g.play(gtp_to_move("Q16", 19))
    s.ponder(g)
    time.sleep(0.5)
    assert s.pondering
    t = time.perf_counter()
    s.stop_pondering()
    stop_ms = (time.perf_counter() - t) * 1000
    assert stop_ms < 250, stop_ms  # typically under 10 ms; generous for a loaded CI machine
    kept = s.root.visits
    assert kept > 1
    r = s.search(g, Limits(visits=kept + 8))
    assert r.reused_visits == kept


# ------------------------------------------------------------------ score utility
class SaturatedEvaluator(ScriptedEvaluator):
    """The scripted evaluator with a constant value (-0.95 for every side to move): like a network sure
    of the game's result, it tells no move from another. The score (material) still moves."""

    def evaluate(self, planes, legal, keys=None):
        out = super().evaluate(planes, legal, keys)
        out.value = np.full_like(out.value, -0.95)
        return out


def _root_visits(g, lam, visits=400):
    s = Searcher(SaturatedEvaluator(tactic=1.0), SearchConfig(score_utility=lam, lcb=False), seed=1)
    r = s.search(g, Limits(visits=visits))
    return {move_to_gtp(c.move, 9): c.visits for c in r.candidates}, r


def test_score_utility_separates_moves_a_saturated_value_cannot():
    # White E5-E6 has one liberty, E7: capturing there gains two stones. The value cannot tell any
    # move from another and the prior is uniform; only the score term prefers the capture.
    g = game_with(["D5", "D6", "F5", "F6", "E4"], ["E5", "E6"])
    plain, r0 = _root_visits(g, 0.0)
    scored, r1 = _root_visits(g, 0.5)
    assert move_to_gtp(r1.move, 9) == "E7", sorted(scored.items(), key=lambda kv: -kv[1])[:4]
    assert scored["E7"] > 4 * plain.get("E7", 0), (scored["E7"], plain.get("E7"))
    # winrates still read the value alone: every move alike, with and without the score term
    assert all(c.winrate == pytest.approx(0.5, abs=0.02) for c in r0.candidates[:5] + r1.candidates[:5])
    # the score lead the search reports is the capture's (material +6 for Black after it)
    assert next(c for c in r1.candidates if move_to_gtp(c.move, 9) == "E7").score_lead > 5


def test_score_utility_is_checked():
    with pytest.raises(ValueError, match="score_utility"):
        SearchConfig(score_utility=-0.1)
