"""azgo match: a whole game against GNU Go over GTP, SGF output, adjudication, statistics."""

import shutil
import subprocess
import sys

import pytest

from azgo.engine.scoring import area_score, result_string
from azgo.engine.sgf import load_sgf
from azgo.gtp.match import MatchSummary, elo, parse_time_control, wilson

import fake_gtp

GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if shutil.os.path.exists("/usr/games/gnugo") else None)
needs_gnugo = pytest.mark.skipif(GNUGO is None, reason="GNU Go not installed (apt-get install gnugo)")


def test_statistics():
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.404, abs=0.002) and hi == pytest.approx(0.596, abs=0.002)
    assert elo(0.5) == 0 and elo(0.76) == pytest.approx(200, abs=1)
    assert wilson(0, 10)[0] == 0 and wilson(10, 10)[1] == 1
    assert parse_time_control("byoyomi 10 1 5").periods == 5
    with pytest.raises(ValueError):
        parse_time_control("sudden 10 1")
    assert parse_time_control("fischer 10 1").increment == 1
    # a clean sweep has no finite Elo: printed as -inf/+inf, not as the clamped number
    swept = MatchSummary(4, 0, 4, 0, "azgo", "GNU Go").lines()[2]
    assert swept == "Elo difference: -inf (95% interval -inf .. -7)"
    assert MatchSummary(10, 6, 4, 0, "a", "b").lines()[2].startswith("Elo difference: +70 (95% interval -137 .. ")


def test_summary_merge_keeps_the_colour_split():
    # a line played in parallel parts is summed part by part: the split by colour and the clock too
    parts = []
    for results in ([(True, True), (False, False)], [(True, False), (None, True)]):
        s = MatchSummary(0, 0, 0, 0, "gen1", "gen0")
        for black_won, a_black in results:
            s.add(black_won, a_black)
        s.add_time("a", 2.0, 4)
        parts.append(s)
    total = MatchSummary(0, 0, 0, 0, "gen1", "gen0")
    for s in parts:
        total.merge(s)
    assert (total.games, total.a_wins, total.b_wins, total.draws) == (4, 2, 1, 1)
    assert total.by_colour == {"black": [1.5, 2.0], "white": [1.0, 2.0]}
    assert total.per_move("a") == 0.5 and total.scores == [1.0, 1.0, 0.0, 0.5]
    assert "gen1 as Black 1.5-0.5, as White 1-1" in total.lines()


@pytest.mark.slow
@needs_gnugo
def test_whole_9x9_game_against_gnugo(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", f"{sys.executable} -m azgo.gtp.cli gtp --visits 8",
         "-b", f"{GNUGO} --mode gtp --level 0", "-n", "2", "--size", "9", "--komi", "7",
         "--sgf-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "2 games" in out.stdout and "Elo difference" in out.stdout and "95% interval" in out.stdout
    for i in range(2):
        rec = load_sgf(str(tmp_path / f"game{i:04d}.sgf"))
        assert rec.size == 9 and rec.komi == 7
        assert {rec.black, rec.white} == {"azgo", "GNU Go"}
        game = rec.to_game()
        assert game.move_number >= 2
        if rec.result[2:] not in ("R", "F", "T"):
            assert game.over or game.move_number >= 3 * 81
            assert rec.result == result_string(area_score(game.board, 7))
    progress = [line for line in out.stderr.splitlines() if line.startswith("game ")]
    assert len(progress) == 2


@pytest.mark.slow
def test_games_of_one_match_differ():
    """A new game forgets the last one's cache and tree, so random symmetries give new games."""
    from azgo.gtp.match import GtpClient, play_game
    cmd = f"{sys.executable} -m azgo.gtp.cli gtp --visits 8"
    a, b = GtpClient(cmd, "a"), GtpClient(cmd, "b")
    try:
        games = [tuple(play_game(a, b, 7, 7.0, max_moves=30).moves) for _ in range(3)]
    finally:
        a.close()
        b.close()
    assert len(set(games)) > 1


@pytest.mark.slow
@needs_gnugo
def test_match_resume_plays_only_missing_games(tmp_path):
    """A killed match goes on: --resume counts the SGFs already written and plays only the gaps."""
    cmd = [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", f"{GNUGO} --mode gtp --level 0",
           "-b", f"{GNUGO} --mode gtp --level 0 --seed 5", "-n", "3", "--size", "7", "--sgf-dir", str(tmp_path)]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    kept = (tmp_path / "game0002.sgf").read_bytes()
    (tmp_path / "game0001.sgf").unlink()
    again = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("already played") == 2
    assert "game 2/3: already played" not in again.stderr
    assert (tmp_path / "game0001.sgf").exists() and (tmp_path / "game0002.sgf").read_bytes() == kept
    assert "3 games" in again.stdout
    # the summary counts all three games: the same first line as the uninterrupted run when game 2 repeats
    wins = [load_sgf(str(tmp_path / f"game{i:04d}.sgf")).result[:1] for i in range(3)]
    a_wins = sum((w == "B") == (i % 2 == 0) for i, w in enumerate(wins) if w in "BW")
    assert f"won {a_wins}," in again.stdout.splitlines()[0]




@pytest.mark.parametrize("replay", ["b", "a", None])
def test_an_engine_that_dies_is_restarted_and_its_game_void_when_asked(tmp_path, replay):
    """An engine that dies mid-game loses it (+F) unless --replay-crashes names it: then the game is void
    (kept under void/ with RE[Void]) and played again; either way the engine is started again and the
    match goes on to the end."""
    script = fake_gtp.PATH
    marker = tmp_path / "died"
    cmd = [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", f"{sys.executable} {script} {marker} pass",
           "-b", f"{sys.executable} {script} {marker} crash", "-n", "2", "--size", "7", "--komi", "7",
           "--sgf-dir", str(tmp_path / "games")]
    if replay:
        cmd += ["--replay-crashes", replay]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert marker.exists() and "crasher had exited" in res.stderr  # restarted before the next game
    first = load_sgf(str(tmp_path / "games" / "game0000.sgf"))  # A Black passes, B White dies at move 2
    second = load_sgf(str(tmp_path / "games" / "game0001.sgf"))
    assert second.result == "W+7"  # B (Black) passes, A passes: White wins by komi
    voids = sorted((tmp_path / "games" / "void").glob("*.sgf")) if (tmp_path / "games" / "void").exists() else []
    if replay == "b":
        assert first.result == "W+7" and [v.name for v in voids] == ["game0000-1.sgf"]
        assert load_sgf(str(voids[0])).result == "Void" and "void, crasher died at move 2" in res.stderr
        assert "passer won 1, crasher won 1, draws 0" in res.stdout
    else:  # not asked, or asked for the other engine: the engine that died loses
        assert first.result == "B+F" and not voids
        assert "passer won 2, crasher won 0" in res.stdout


@pytest.mark.parametrize("replay", [True, False])
def test_a_game_lost_on_time_is_void_and_played_again_when_asked(tmp_path, replay):
    """Under a clock, an engine that overruns it loses on time (+T) unless --replay-time-losses: then the game
    is void (kept under void/ with RE[Void] and the seconds the move took) and played again."""
    fake = fake_gtp.PATH
    marker = tmp_path / "overran"
    cmd = [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", f"{sys.executable} {fake} {tmp_path / 'x'} pass",
           "-b", f"{sys.executable} {fake} {marker} slow", "-n", "1", "--size", "7", "--komi", "7",
           "--time", "byoyomi 0 0.5 1", "--sgf-dir", str(tmp_path / "games")] + (["--replay-time-losses"] * replay)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert marker.exists()
    game = load_sgf(str(tmp_path / "games" / "game0000.sgf"))  # A Black passes, B White overruns at move 2
    voids = sorted((tmp_path / "games" / "void").glob("*.sgf")) if (tmp_path / "games" / "void").exists() else []
    if replay:
        assert game.result == "W+7" and [v.name for v in voids] == ["game0000-1.sgf"]
        void = load_sgf(str(voids[0]))
        assert void.result == "Void" and "slowpoke took 1." in voids[0].read_text()
        assert "void, slowpoke ran out of time at move 2" in res.stderr and "slowpoke won 1" in res.stdout
    else:
        assert game.result == "B+T" and not voids and "passer won 1" in res.stdout


@pytest.mark.slow
@needs_gnugo
def test_handicap_match_records_stones_and_each_engines_seconds(tmp_path):
    """--handicap N: both engines place the GTP stones, White moves first; every game's SGF has the stones
    and each engine's thinking time (AZC), which --resume reads back into the seconds-per-move line."""
    cmd = [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", f"{sys.executable} -m azgo.gtp.cli gtp --visits 8",
           "-b", f"{GNUGO} --mode gtp --level 0", "-n", "2", "--size", "9", "--komi", "0.5", "--handicap", "2",
           "--sgf-dir", str(tmp_path), "--max-moves", "40"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = [x for x in out.stdout.splitlines() if x.startswith("seconds per move:")]
    assert line and "azgo" in line[0] and "GNU Go" in line[0]
    for i in range(2):
        rec = load_sgf(str(tmp_path / f"game{i:04d}.sgf"))
        assert rec.handicap == 2 and len(rec.setup[0]) == 2 and rec.komi == 0.5
        assert rec.nodes[0].color == 2  # White first
        b, w = rec.root_props["AZC"].split()
        assert b.startswith("B:") and w.startswith("W:") and int(w.split(":")[2]) >= 1
    again = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and again.stderr.count("already played") == 2
    assert [x for x in again.stdout.splitlines() if x.startswith("seconds per move:")] == line
    bad = subprocess.run(cmd[:-2] + ["--handicap", "1"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "2 to 9" in bad.stderr


def test_a_colour_white_gives_handicap_every_game(tmp_path):
    """--a-colour white: A is White in every game (a handicap line, A giving the stones), and the summary's
    colour split says so; the same SGFs count on --resume."""
    cmd = [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", f"{sys.executable} -m azgo.gtp.cli gtp --visits 8",
           "-b", f"{GNUGO} --mode gtp --level 0", "-n", "3", "--size", "9", "--komi", "0.5", "--handicap", "2",
           "--a-colour", "white", "--name-a", "azgo", "--name-b", "gnugo", "--sgf-dir", str(tmp_path),
           "--max-moves", "30"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for i in range(3):
        rec = load_sgf(str(tmp_path / f"game{i:04d}.sgf"))
        assert rec.white == "azgo" and rec.black == "gnugo" and rec.handicap == 2
    assert "as Black 0-0" in out.stdout, out.stdout


def test_parallel_parts_share_the_games_resume_and_stop_together(tmp_path):
    """--parallel K: the games are shared out over K sub-lines (their SGFs in part<k>, colours alternating
    in each), the summary adds them up, --resume finds each part's games, and a sequential stop seen on all
    parts together ends every part."""
    from azgo.gtp.match import run_match_parts, split_games

    def logs_sink(msg):
        pass
    assert split_games(5, 2) == [3, 2] and split_games(40, 2) == [20, 20] and split_games(1, 3) == [1, 0, 0]
    script = fake_gtp.PATH
    marker = tmp_path / "unused"
    passer = f"{sys.executable} {script} {marker} pass"
    games = tmp_path / "games"
    cmd = [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", passer, "-b", passer, "-n", "5", "--size", "7",
           "--komi", "7", "--sgf-dir", str(games), "--name-a", "A", "--name-b", "B", "--parallel", "2"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    # both pass at once: White wins by komi, so A wins exactly its games as White. Colours alternate over
    # the line: part0 plays games 1-3 (A Black, White, Black), part1 games 4-5 (A White, Black)
    assert sorted(p.name for p in (games / "part0").glob("*.sgf")) == ["game0000.sgf", "game0001.sgf", "game0002.sgf"]
    assert sorted(p.name for p in (games / "part1").glob("*.sgf")) == ["game0000.sgf", "game0001.sgf"]
    assert not list(games.glob("*.sgf"))
    assert "5 games, A won 2, B won 3, draws 0" in res.stdout and "A as Black 0-3, as White 2-0" in res.stdout
    assert load_sgf(str(games / "part1" / "game0000.sgf")).white == "A"
    assert "[part 1] game 2/2" in res.stderr
    again = subprocess.run(cmd[:cmd.index("-n") + 1] + ["6"] + cmd[cmd.index("-n") + 2:] + ["--resume"],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("already played") == 5 and (games / "part1" / "game0002.sgf").exists()
    assert "6 games, A won 3, B won 3" in again.stdout and "A as Black 0-3, as White 3-0" in again.stdout
    # a resumed game counts in the colours its record names, whatever the colour rule of the run resuming it
    from azgo.gtp.match import run_match
    first = run_match(passer, passer, 2, size=7, komi=7.0, sgf_dir=str(tmp_path / "flip"), log=logs_sink,
                      name_a="A", name_b="B", colour_offset=1)
    resumed = run_match(passer, passer, 2, size=7, komi=7.0, sgf_dir=str(tmp_path / "flip"), log=logs_sink,
                        name_a="A", name_b="B", resume=True)
    assert first.by_colour == resumed.by_colour == {"black": [0.0, 1.0], "white": [1.0, 1.0]}
    assert resumed.scores == first.scores == [1.0, 0.0]
    # a sequential test over all parts: once it holds, each part ends after the game it is playing
    logs: list[str] = []
    s = run_match_parts(passer, passer, 20, 2, sgf_dir=str(tmp_path / "stop"), log=logs.append,
                        should_stop=lambda summary: summary.games >= 3, size=7, komi=7.0)
    assert 3 <= s.games <= 4 and sum("decided" in m for m in logs) == 2
    assert s.games == sum(len(list((tmp_path / "stop" / f"part{k}").glob("*.sgf"))) for k in range(2))


def test_a_resumed_line_counts_every_game_on_disk_before_it_stops(tmp_path):
    """A line stopped by its sequential test and resumed counts all of its recorded games, in every part and
    past a gap left by a game killed in flight, before the test is asked again: the record does not depend on
    the order the parts read their games in."""
    from azgo.gtp.match import run_match, run_match_parts

    passer = f"{sys.executable} {fake_gtp.PATH} {tmp_path / 'unused'} pass"
    kw = dict(size=7, komi=7.0, name_a="A", name_b="B")
    first = run_match_parts(passer, passer, 6, 2, sgf_dir=str(tmp_path / "line"), log=lambda m: None, **kw)
    assert first.games == 6
    logs: list[str] = []
    again = run_match_parts(passer, passer, 20, 2, sgf_dir=str(tmp_path / "line"), log=logs.append, resume=True,
                            should_stop=lambda summary: summary.games >= 2, **kw)
    assert again.games == 6 and (again.a_wins, again.b_wins) == (first.a_wins, first.b_wins)
    assert sum("already played" in m for m in logs) == 6 and sum("decided" in m for m in logs) == 2
    assert len(list((tmp_path / "line").rglob("*.sgf"))) == 6  # decided on the recorded games: none played
    # one part: a gap (game 1 killed in flight) does not hide the recorded game after it
    (tmp_path / "line" / "part0" / "game0001.sgf").unlink()
    gap = run_match(passer, passer, 3, sgf_dir=str(tmp_path / "line" / "part0"), log=lambda m: None, resume=True,
                    should_stop=lambda summary: summary.games >= 1, **kw)
    assert gap.games == 2 and not (tmp_path / "line" / "part0" / "game0001.sgf").exists()


@pytest.mark.slow
def test_a_game_goes_on_from_its_opening():
    """play_game's opening moves are on both engines' boards before the first genmove: the side to move follows
    them and no engine replies to a point they took."""
    from azgo.engine.board import BLACK, WHITE
    from azgo.engine.coords import gtp_to_move
    from azgo.gtp.match import GtpClient, play_game
    cmd = f"{sys.executable} -m azgo.gtp.cli gtp --visits 8"
    a, b = GtpClient(cmd, "a"), GtpClient(cmd, "b")
    opening = [(BLACK, gtp_to_move("D4", 7)), (WHITE, gtp_to_move("C3", 7)), (BLACK, gtp_to_move("E5", 7))]
    try:
        out = play_game(a, b, 7, 7.0, max_moves=12, opening=opening)
        board = a.send("showboard")
    finally:
        a.close()
        b.close()
    assert out.moves[:3] == opening
    assert out.moves[3][0] == WHITE
    assert all(m not in {mv for _, mv in opening} for _, m in out.moves[3:] if m >= 0)
    assert "+F" not in out.result, out.reason
    assert board.count("X") + board.count("O") >= 3
