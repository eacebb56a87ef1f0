"""Forked starts around the position where a lost game's loser led most (azgo.training.fork_peaks)."""

from pathlib import Path

import os
import shutil

import pytest

from azgo.engine.board import BLACK, WHITE
from azgo.engine.game import Game
from azgo.engine.sgf import load_sgf, record_from_game, write_sgf
from azgo.training.fork_peaks import lead_peak, lead_peaks, loser_colour, peak_openings
from azgo.training.selfplay import SelfPlayConfig, SelfPlayRunner
from azgo.training.workers import archive_games

from scripted_eval import ScriptedEvaluator

ROOT = Path(__file__).resolve().parent.parent
# 7x7, White (azgo) loses: White captures Black's corner stone with its 4th move (move 4 of the game), so from
# the position after move 5 White is a stone up by material (the scripted evaluator's score); Black takes the
# stone back with move 9 (B at 0 captures W at 7). Positions with White to move: after moves 1, 3 (a stone
# down), 5, 7 (even: the peak, first at 5), 9, 11 (a stone down again).
MOVES = [0, 1, 24, 7, 14, 40, 8, 41, 0, 42, 22, 43]


def _game_file(path: Path, moves=MOVES, black="GNU Go", white="azgo", result="B+R", size=7) -> str:
    game = Game(size, 7.0)
    for m in moves:
        game.play(m)
    path.write_bytes(write_sgf(record_from_game(game, black=black, white=white, result=result)))
    return str(path)


def _fork_recipe(tmp_path: Path, games: Path, forks: str, opponent: str = "", name: str = "forks.toml") -> Path:
    """The smoke recipe with forked starts from the games lost by azgo in ``games`` (``forks``: the
    around_peak / around_ko line) and, with ``opponent`` (its fraction lines), a scripted opponent engine."""
    smoke = (ROOT / "recipes" / "smoke.toml").read_text()
    section = (f'[selfplay.openings]\nsources = ["{games}"]\nfraction = 0.5\nmin_moves = 1\nmax_moves = 30\n'
               f'lost_by = "azgo"\n{forks}\n\n'
               + (f'[selfplay.opponent]\nengine = "python3 engine.py"\n{opponent}\n\n' if opponent else "")
               + "[selfplay.komi]")
    path = tmp_path / name
    path.write_text(smoke.replace("[selfplay.komi]", section).replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    return path


def test_the_peak_is_where_the_loser_counted_itself_furthest_ahead(tmp_path):
    rec = load_sgf(_game_file(tmp_path / "g.sgf"))
    assert loser_colour(rec, "azgo") == WHITE and loser_colour(rec, "gnu go") is None
    assert loser_colour(load_sgf(_game_file(tmp_path / "w.sgf", result="W+3.5")), "gnu") == BLACK
    ev = ScriptedEvaluator()
    assert lead_peak(rec, WHITE, ev) == 5
    assert lead_peak(rec, WHITE, ScriptedEvaluator(score=False)) == 5  # no score head: the value decides
    assert lead_peak(rec, WHITE, ev, max_moves=4) == 1  # only moves 1 and 3 looked at: a tie, the first
    # Black's view: even at the start, a stone down after moves 4-8, even again after move 10: the first, 0
    assert lead_peak(rec, BLACK, ev) == 0


def test_lead_peaks_keeps_the_lost_games_and_caches_its_answers(tmp_path):
    files = [_game_file(tmp_path / "lost.sgf"), _game_file(tmp_path / "won.sgf", result="W+R")]
    cache = str(tmp_path / "peaks" / "7.json")
    ev = ScriptedEvaluator()
    lines = []
    assert lead_peaks(files, "azgo", ev, cache=cache, key="net-a", log=lines.append) == {files[0]: 5}
    assert ev.calls > 0 and "1 games lost by azgo" in lines[0]
    again = ScriptedEvaluator()
    assert lead_peaks(files, "azgo", again, cache=cache, key="net-a") == {files[0]: 5}
    assert again.calls == 0  # from the cache
    assert lead_peaks(files, "azgo", again, cache=cache, key="net-b") == {files[0]: 5} and again.calls > 0
    # named relative to a root, the cache holds in another clone of the same files
    lead_peaks(files, "azgo", ScriptedEvaluator(), cache=cache, key="net-c", root=str(tmp_path))
    clone = tmp_path / "clone"
    clone.mkdir()
    moved = []
    for f in files:
        moved.append(str(clone / os.path.basename(f)))
        shutil.copy(f, moved[-1])
    shutil.copytree(tmp_path / "peaks", clone / "peaks")
    there = ScriptedEvaluator()
    assert lead_peaks(moved, "azgo", there, cache=str(clone / "peaks" / "7.json"), key="net-c",
                      root=str(clone)) == {moved[0]: 5}
    assert there.calls == 0


def test_peak_openings_span_the_moves_around_each_peak():
    moves = tuple(range(10, 30))
    openings, lows, winners = peak_openings([(moves, 8, 2), (moves[:6], 5), (moves, 1, 1), (moves, 8, 1)],
                                            before=3, after=4, min_moves=2)
    assert openings == (moves[:12], moves[:6], moves[:5])  # the repeated (moves, 8) kept once
    assert lows == (5, 2, 2)  # 8 - 3; 5 - 3 = 2; 1 - 3 raised to min_moves
    assert winners == (2, 0, 1)  # the first of the repeated pair's; 0 where none was given
    assert peak_openings([(moves[:4], 9)], before=1, after=0)[1] == (4,)  # a low past the end: the whole opening


def test_self_play_forks_no_shorter_than_each_openings_low(tmp_path):
    openings = ((24, 16, 32, 18, 10, 40), (16, 24, 10))
    with pytest.raises(ValueError, match="opening_lows"):
        SelfPlayConfig(size=7, openings=openings, opening_fraction=1.0, opening_lows=(5,))
    with pytest.raises(ValueError, match="opening_lows"):
        SelfPlayConfig(size=7, openings=openings, opening_fraction=1.0, opening_lows=(5, 4))
    cfg = SelfPlayConfig(size=7, komi=7.0, full_visits=8, cheap_visits=4, concurrent_games=4, max_moves=30,
                         openings=openings, opening_fraction=1.0, opening_lows=(5, 3))
    SelfPlayRunner(ScriptedEvaluator(), cfg, seed=2, net_id="scripted", out_dir=str(tmp_path)).play(8)
    seen = set()
    for path in archive_games(str(tmp_path)):
        rec = load_sgf(path)
        k = int(rec.root_props["AZO"])
        moves = tuple(node.move for node in rec.nodes[:k])
        assert (k in (5, 6) and moves == openings[0][:k]) or (k == 3 and moves == openings[1]), (k, moves)
        seen.add(k)
    assert len(seen) >= 2  # both openings (or both lengths of the first) drawn


def test_a_recipe_forks_around_the_peaks_of_the_best_network(tmp_path, monkeypatch):
    """``[selfplay.openings] around_peak``: the selfplay config's openings end ``after`` moves past each lost
    game's peak and begin ``before`` moves before it; a second config reads the peaks from the cache in the lineage folder."""
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    from azgo.training.recipe import RecipeError, load_recipe
    from azgo.training.recipe_run import RecipeRun
    games = tmp_path / "games"
    games.mkdir()
    _game_file(games / "lost.sgf")
    _game_file(games / "won.sgf", result="W+R")
    _game_file(games / "nine.sgf", moves=[40, 30, 20], size=9)
    path = _fork_recipe(tmp_path, games, "around_peak = [2, 3]", name="peaks.toml")
    recipe = load_recipe(path)
    assert recipe.selfplay.openings.around_peak == (2, 3)
    run = RecipeRun(recipe, str(tmp_path / "run"))
    monkeypatch.setattr(RecipeRun, "best_net", lambda self, size: str(ROOT / "nets" / "default.onnx"))
    assert run.opening_files(7) == [str(games / "lost.sgf")]  # lost by azgo, 7x7: neither won.sgf nor nine.sgf
    cfg = run.selfplay_config(7)
    peak = lead_peak(load_sgf(str(games / "lost.sgf")), WHITE,
                     OnnxEvaluator(ROOT / "nets" / "default.onnx", EvalConfig(precision="int8")))
    assert cfg.openings == (tuple(MOVES[:peak + 3]),) and cfg.opening_lows == (max(1, peak - 2),)
    assert cfg.opening_winners == (BLACK,)  # lost.sgf: azgo (White) lost it
    assert (tmp_path / "run" / "lineage" / "peaks" / "7.json").exists()  # published with the lineage
    monkeypatch.setattr(OnnxEvaluator, "evaluate", lambda *a, **k: pytest.fail("peaks not read from the cache"))
    assert run.selfplay_config(7).openings == cfg.openings
    assert run.selfplay_config(7, net=str(ROOT / "nets" / "default.onnx")).opening_lows == cfg.opening_lows
    for bad, field in (("[2]", "expected \\[before, after\\]"), ("[2, -1]", "expected"), ("[2, 1.5]", "expected")):
        path.write_text(path.read_text().replace("around_peak = [2, 3]", f"around_peak = {bad}"))
        with pytest.raises(RecipeError, match=f"selfplay.openings.around_peak: {field}"):
            load_recipe(path)
        path.write_text(path.read_text().replace(f"around_peak = {bad}", "around_peak = [2, 3]"))
    path.write_text(path.read_text().replace('lost_by = "azgo"\n', ""))
    with pytest.raises(RecipeError, match="around_peak: needs lost_by"):
        load_recipe(path)


def test_a_recipe_puts_its_opponent_on_the_winning_side_of_forked_games(tmp_path, monkeypatch):
    """``[selfplay.opponent] fork_fraction`` and ``fork_side = "winner"`` reach the self-play config, with the
    colour that won each forked game; ``winner`` without forks around lost games' peaks is refused."""
    from azgo.training.recipe import RecipeError, load_recipe
    from azgo.training.recipe_run import RecipeRun
    games = tmp_path / "games"
    games.mkdir()
    _game_file(games / "lost.sgf")  # azgo White lost: Black won
    path = _fork_recipe(tmp_path, games, "around_peak = [2, 3]",
                        'fraction = 0.1\nfork_fraction = 0.5\nfork_side = "winner"', name="winner.toml")
    run = RecipeRun(load_recipe(path), str(tmp_path / "run"))
    monkeypatch.setattr(RecipeRun, "best_net", lambda self, size: str(ROOT / "nets" / "default.onnx"))
    cfg = run.selfplay_config(7)
    assert (cfg.opponent, cfg.opponent_fraction, cfg.opponent_fork_fraction) == ("python3 engine.py", 0.1, 0.5)
    assert cfg.opponent_fork_side == "winner" and cfg.opening_winners == (BLACK,) and len(cfg.openings) == 1
    path.write_text(path.read_text().replace("fork_fraction = 0.5\n", ""))
    assert RecipeRun(load_recipe(path), str(tmp_path / "r2")).selfplay_config(7).opponent_fork_fraction is None
    path.write_text(path.read_text().replace("around_peak = [2, 3]\n", ""))
    with pytest.raises(RecipeError, match="fork_side: winner needs forked starts around the peaks or kos"):
        load_recipe(path)
    path.write_text(path.read_text().replace('fork_side = "winner"', 'fork_side = "loser"'))
    with pytest.raises(RecipeError, match="fork_side: any or winner"):
        load_recipe(path)


# 7x7, a ko in the top-left corner: White takes at B6 with the game's 8th move (7 moves played before it), Black
# answers elsewhere, White elsewhere, Black takes back at C6; azgo (White) loses.
KO_GTP = ["B7", "C7", "A6", "D6", "C6", "C5", "B5", "B6", "F2", "F3", "C6", "E2", "E3"]


def test_a_recipe_forks_around_the_first_ko_of_lost_games(tmp_path):
    """``[selfplay.openings] around_ko``: each lost game with a ko forks from ``before`` moves before to ``after``
    moves after its first ko capture, with the colour that won it; games won, or without a ko, are left out."""
    from azgo.engine.coords import gtp_to_move
    from azgo.training.fork_peaks import first_ko, ko_captures
    from azgo.training.recipe import RecipeError, load_recipe
    from azgo.training.recipe_run import RecipeRun
    ko = [gtp_to_move(v, 7) for v in KO_GTP]
    games = tmp_path / "games"
    games.mkdir()
    rec = load_sgf(_game_file(games / "ko_lost.sgf", moves=ko))
    assert ko_captures(rec, WHITE) == (7, 1, 1) and first_ko(rec) == 7
    assert first_ko(rec, max_moves=7) is None  # the capture is the 8th move
    _game_file(games / "ko_won.sgf", moves=ko, result="W+R")
    assert first_ko(load_sgf(_game_file(games / "quiet_lost.sgf", moves=[24, 8, 16, 40]))) is None  # no capture
    path = _fork_recipe(tmp_path, games, "around_ko = [2, 1]",
                        'fraction = 0.1\nfork_fraction = 1\nfork_side = "winner"', name="ko.toml")
    recipe = load_recipe(path)
    assert recipe.selfplay.openings.around_ko == (2, 1)
    run = RecipeRun(recipe, str(tmp_path / "run"))
    cfg = run.selfplay_config(7)
    assert cfg.openings == (tuple(ko[:8]),) and cfg.opening_lows == (5,)  # moves 6-8 of ko_lost.sgf
    assert cfg.opening_winners == (BLACK,) and cfg.opponent_fork_side == "winner"
    assert "2 moves before to 1 after the first ko capture" in run.plan()
    text = path.read_text()
    for old, bad, message in (
            ("around_ko = [2, 1]", "around_ko = [2, 1]\naround_peak = [2, 1]", "around_ko: forks around a peak or a ko"),
            ("around_ko = [2, 1]", "around_ko = [2]", "around_ko: expected \\[before, after\\]"),
            ('lost_by = "azgo"\n', "", "around_ko: needs lost_by")):
        path.write_text(text.replace(old, bad))
        with pytest.raises(RecipeError, match=message):
            load_recipe(path)
