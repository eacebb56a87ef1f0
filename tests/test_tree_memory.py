"""The compact tree and the memory cap: a small cap and a long search, the tree checked; GTP answers
at the cap; threads share one tree; truncated nodes and roots come back whole."""

import threading
import time

import numpy as np
import pytest

from azgo.engine.game import Game
from azgo.engine.memory import release_memory, rss_mb
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.threads import parse_threads, plan_threads

from scripted_eval import ScriptedEvaluator

needs_proc = pytest.mark.skipif(rss_mb() is None, reason="resident memory is read from /proc/self/statm (Linux)")


def walk(root):
    stack, out = [root], []
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children.values())
    return out


@pytest.mark.slow
@needs_proc
def test_search_stops_growing_at_the_memory_cap():
    release_memory(collect=True)
    base = rss_mb()
    cap = base + 30
    s = Searcher(ScriptedEvaluator(tactic=1.0), SearchConfig(max_memory_mb=cap, batch_size=16), seed=1)
    g = Game(19)
    t = time.monotonic()
    r = s.search(g, Limits(visits=10 ** 7, seconds=120))
    took = time.monotonic() - t
    assert r.memory_capped and s.memory_capped
    assert took < 100, "the cap, not the time limit, ended the search"
    peak = rss_mb()
    assert peak < cap + 60, (base, cap, peak)
    nodes = s.tree_nodes()
    assert 2_000 < nodes < 200_000 and nodes <= r.visits + 1
    # the tree is usable: a move with visits, candidates and a principal variation
    assert r.candidates and r.candidates[0].visits > 10 and len(r.candidates[0].pv) >= 2
    # the next search on the same tree (over the cap) starts afresh instead of growing it
    r2 = s.search(g, Limits(visits=200))
    assert r2.visits >= 1


def test_tree_is_compact_on_19x19():
    import tracemalloc
    ev = ScriptedEvaluator(tactic=1.0)
    s = Searcher(ev, SearchConfig(board_cache_mb=1.0), seed=2)
    g = Game(19)
    s.search(g, Limits(visits=30))
    s.root = None
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        s.search(g, Limits(visits=4000), reuse=False)
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    nodes = walk(s.root)
    assert len(nodes) > 3000
    assert used / len(nodes) < 2048, f"{used / len(nodes):.0f} bytes per node"
    inner = [n for n in nodes if n is not s.root and n.expanded]
    assert all(len(n.moves) <= 32 or not n.truncated for n in inner)
    assert sum(n.board is not None for n in nodes) <= s._board_cap + 1
    assert s.root.ownership is not None and all(n.ownership is None for n in inner if n.move not in s.root.children)


def test_truncated_node_is_completed_when_its_moves_run_out():
    # A flat prior on 7x7 (49 moves) with few kept moves: a node searched long enough asks the
    # network again and then holds every legal move.
    s = Searcher(ScriptedEvaluator(tactic=1.0, scale=50.0), SearchConfig(inner_moves=4), seed=3)
    g = Game(7)
    s.search(g, Limits(visits=3000))
    grown = [n for n in walk(s.root) if n is not s.root and n.expanded and len(n.moves) > 4]
    assert grown and all(not n.truncated for n in grown)
    # the tree after a move: the new root holds every legal move again
    best = s.choose_move()
    g.play(best)
    reused = s.set_game(g)
    assert reused > 0
    r = s.search(g, Limits(visits=reused + 50))
    assert len(s.root.moves) == int(g.board.legal_mask().sum())
    assert s.root.N.sum() + 1 >= r.visits - 1


def test_threads_share_one_tree_and_agree_with_one_thread():
    g = Game(9)
    one = Searcher(ScriptedEvaluator(), SearchConfig(threads=1), seed=4).search(g, Limits(visits=600))
    s = Searcher(ScriptedEvaluator(), SearchConfig(threads=3), seed=4)
    three = s.search(g, Limits(visits=600))
    assert three.visits == 600  # the visit limit holds with batches in flight
    root = s.root
    assert root.VL.sum() == 0 and not s._in_flight  # every virtual loss was taken back
    assert root.N.sum() + 1 == root.visits
    for n in walk(root):  # every node's visits = its edges' visits + its own evaluation
        if n.expanded and n is not root:
            assert sum(n.visit_counts()) + 1 == n.visits
    assert {c.move for c in three.candidates[:3]} & {c.move for c in one.candidates[:3]}


def test_an_evaluator_error_in_a_helper_thread_reaches_the_caller():
    class Broken(ScriptedEvaluator):
        def evaluate(self, planes, legal, keys=None):
            if self.calls >= 3:
                raise RuntimeError("network went away")
            return super().evaluate(planes, legal, keys)

    s = Searcher(Broken(), SearchConfig(threads=2), seed=5)
    with pytest.raises(RuntimeError, match="network went away"):
        s.search(Game(9), Limits(visits=500))
    assert threading.active_count() < 20


def test_thread_plan():
    assert parse_threads("auto") is None and parse_threads(3) == 3 and parse_threads("2") == 2
    for bad in ("0", -1, "many", 1.5):
        with pytest.raises(ValueError):
            parse_threads(bad)
    assert (plan_threads("auto", cpu_count=2).search, plan_threads("auto", cpu_count=2).intra_op) == (2, 1)
    p = plan_threads(8)
    assert (p.search, p.intra_op, p.auto) == (4, 2, False)
    assert plan_threads(1).search == 1 and "2 search threads" in plan_threads(None, cpu_count=2).describe()


@pytest.mark.slow
@needs_proc
def test_gtp_genmove_answers_at_the_cap_and_says_so(capsys):
    from azgo.gtp.config import EngineConfig
    from azgo.gtp.engine import GtpEngine
    from azgo.gtp.protocol import parse as parse_command
    release_memory(collect=True)
    cap = rss_mb() + 15
    eng = GtpEngine(EngineConfig(visits=10 ** 7, max_memory=cap, threads=1, resign_threshold=0), ScriptedEvaluator(tactic=1.0))
    assert eng.execute(parse_command("boardsize 19")) == ""
    move = eng.execute(parse_command("genmove b"))
    assert move and move != "resign"
    err = capsys.readouterr().err
    assert "memory cap reached" in err and "1 search thread" in err
    assert rss_mb() < cap + 60
    assert np.isfinite(eng.searcher.root.q())


@pytest.mark.slow
@needs_proc
def test_pondering_uses_the_threads_and_stops_at_the_cap():
    release_memory(collect=True)
    cap = rss_mb() + 15
    s = Searcher(ScriptedEvaluator(tactic=1.0), SearchConfig(threads=2, max_memory_mb=cap), seed=6)
    g = Game(19)
    s.ponder(g, max_visits=10 ** 7)
    t = time.monotonic()
    while s.pondering and time.monotonic() - t < 90:
        time.sleep(0.2)
    assert not s.pondering and s.memory_capped  # the ponder search ended by itself at the cap
    assert rss_mb() < cap + 60
    s.stop_pondering()
    # a normal ponder is stopped at once
    s2 = Searcher(ScriptedEvaluator(), SearchConfig(threads=2), seed=7)
    s2.ponder(Game(9))
    time.sleep(0.3)
    t = time.monotonic()
    s2.stop_pondering()
    assert time.monotonic() - t < 0.5 and s2.root.visits > 20
