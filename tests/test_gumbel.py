"""Gumbel root search with sequential halving (engine.gumbel) and its use in self-play."""

from __future__ import annotations

import numpy as np
import pytest

from azgo.engine.game import Game
from azgo.engine.gumbel import GumbelRoot, completed_q, improved_policy
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.sgf import decode_visits
from azgo.training.selfplay import SelfPlayConfig, SelfPlayRunner

from scripted_eval import ScriptedEvaluator


def test_improved_policy_without_visits_is_the_prior():
    prior = np.array([0.5, 0.3, 0.15, 0.05])
    zeros = np.zeros(4)
    pi = improved_policy(np.log(prior), zeros, zeros, prior, 0.2, 50.0, 1.0)
    assert np.allclose(pi, prior)


def test_completed_q_mixes_unvisited_moves_and_rescales():
    prior = np.array([0.4, 0.4, 0.2])
    N = np.array([4.0, 0.0, 2.0])
    W = np.array([2.0, 0.0, -2.0])  # means 0.5 and -1.0
    q = completed_q(N, W, prior, root_value=0.0)
    # v_mix = (0 + 6 * (0.4 * 0.5 + 0.2 * -1) / 0.6) / 7 = 0; rescaled over [-1, 0.5]
    assert q[0] == pytest.approx(1.0) and q[2] == pytest.approx(0.0)
    assert q[1] == pytest.approx((0.0 + 1.0) / 1.5)


def test_improved_policy_moves_mass_to_the_better_visited_move():
    prior = np.array([0.5, 0.5])
    N = np.array([8.0, 8.0])
    W = np.array([6.0, -6.0])
    pi = improved_policy(np.log(prior), N, W, prior, 0.0, 50.0, 1.0)
    assert pi[0] > 0.99


def test_sequential_halving_spends_the_budget_on_m_moves():
    ev = ScriptedEvaluator()
    game = Game(9, 7.5)
    s = Searcher(ev, SearchConfig(batch_size=4), seed=3)
    result = s.search(game, Limits(visits=64), reuse=False, gumbel=8)
    root = s.root
    assert isinstance(s.gumbel, GumbelRoot)
    visited = np.flatnonzero(root.N > 0)
    assert len(visited) == 8  # the root spends visits on the sampled moves only
    # three phases (8 -> 4 -> 2 -> 1): the moves that survived longer have more visits
    counts = sorted(root.N[visited].tolist(), reverse=True)
    assert counts[0] >= counts[2] >= counts[4] and counts[0] > counts[-1]
    assert result.move == s.choose_move() and result.move in root.moves[s.gumbel.remaining]
    pi = s.gumbel.policy_target(root)
    assert pi.sum() == pytest.approx(1.0) and (pi > 0).all()


def test_gumbel_finds_a_capture_the_prior_does_not_favour():
    """A White stone in atari (capturing wins material for the scripted value); with a flat prior among
    moves next to it, 48 visits over 16 sampled moves pick the capture, under every seed."""
    game = Game(9, 7.5)
    for move in ("E5", "D5", "A1", "E4", "A2", "F5", "A3"):  # White E5's last liberty is E6
        from azgo.engine.coords import gtp_to_move
        game.play(gtp_to_move(move, 9))
    from azgo.engine.coords import gtp_to_move, move_to_gtp
    assert game.board.liberties(gtp_to_move("E5", 9)) == 1
    picks = []
    for seed in range(4):
        ev = ScriptedEvaluator()
        s = Searcher(ev, SearchConfig(batch_size=4), seed=seed)
        picks.append(move_to_gtp(s.search(game, Limits(visits=48), reuse=False, gumbel=16).move, 9))
    assert picks == ["E6"] * 4, picks


def test_selfplay_records_the_gumbel_target(tmp_path):
    cfg = SelfPlayConfig(size=7, full_visits=24, cheap_visits=8, full_prob=1.0, gumbel_m=8, concurrent_games=2,
                         leaves_per_game=4, max_moves=30, no_resign_fraction=1.0)
    runner = SelfPlayRunner(ScriptedEvaluator(), cfg, seed=2, net_id="scripted", out_dir=str(tmp_path))
    runner.play(2)
    assert len(runner.finished) == 2
    for _, rec in runner.finished:
        targets = [n.props["AZX"] for n in rec.nodes if n.move is not None and "AZX" in n.props]
        assert targets, "every full search records its improved policy"
        for text in targets:
            total = sum(decode_visits(text, 7).values())
            assert total == 1000  # thousandths of a distribution
