"""Self-play: archive format, playout cap randomization, resignation, kill safety, several processes."""

import glob
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from azgo.engine.atomic import atomic_copy
from azgo.engine.board import BLACK
from azgo.engine.scoring import area_score, result_string
from azgo.engine.sgf import decode_visits, load_sgf
from azgo.engine.game import Game
from azgo.engine.sgf import record_from_game, write_sgf
from azgo.training.dataset import decode_record
from azgo.training.selfplay import SelfPlayConfig, SelfPlayRunner, false_resignations, load_openings
from azgo.training.workers import archive_games, net_id

import fake_gtp
from scripted_eval import ScriptedEvaluator

AZGO = [sys.executable, "-m", "azgo.gtp.cli"]


def small_cfg(**kw):
    base = dict(size=7, komi=7.0, full_visits=24, cheap_visits=6, full_prob=0.4, concurrent_games=4,
                leaves_per_game=4, max_moves=60)
    base.update(kw)
    return SelfPlayConfig(**base)


def test_archive_games_carry_the_documented_properties(tmp_path):
    runner = SelfPlayRunner(ScriptedEvaluator(), small_cfg(), seed=3, net_id="scripted", out_dir=str(tmp_path))
    stats = runner.play(5)
    files = archive_games(str(tmp_path))
    assert stats.games == 5 and len(files) == 5
    assert not glob.glob(str(tmp_path / ".*.tmp"))
    full = cheap = pruned = 0
    for path in files:
        rec = load_sgf(path)
        assert rec.size == 7 and rec.komi == 7.0
        assert rec.root_props["AZF"] == "1" and rec.root_props["AZM"] == "scripted"
        assert rec.root_props["AZR"] in ("0.05", "off") and rec.root_props["AZS"].isdigit()
        game = rec.to_game()
        for node in rec.nodes:
            p = node.props
            assert p["AZT"] in ("0", "1")
            visits = decode_visits(p["AZP"], 7)
            assert sum(visits.values()) == int(p["AZN"]) > 0
            assert -1 <= float(p["AZQ"]) <= 1 and -1 <= float(p["AZV"]) <= 1
            if p["AZT"] == "1":
                full += 1
                assert int(p["AZN"]) >= 24 - 1  # the root's own evaluation is not a child visit
                if "AZX" in p:
                    pruned += 1
                    x = decode_visits(p["AZX"], 7)
                    assert all(x[m] <= visits[m] for m in x) and sum(x.values()) < sum(visits.values())
            else:
                cheap += 1
        if rec.result.endswith("R"):
            continue
        assert game.over or game.move_number >= 60
        assert rec.result == result_string(area_score(game.board, 7.0))
    assert full > 0 and cheap > full  # ~40% full searches
    assert pruned > 0


def test_full_searches_record_their_policy_surprise(tmp_path):
    """AZK on every full search and on no cheap one: the KL of the recorded target (AZX, else AZP) from
    the network's prior, recomputed here from the scripted evaluator (symmetry-free, so exact)."""
    import numpy as np

    from azgo.engine import planes as P
    from azgo.engine.features import encode
    from azgo.training.selfplay import policy_surprise
    ev = ScriptedEvaluator()
    SelfPlayRunner(ev, small_cfg(no_resign_fraction=1.0), seed=5, net_id="scripted", out_dir=str(tmp_path)).play(3)
    checked = high = 0
    for path in archive_games(str(tmp_path)):
        rec = load_sgf(path)
        game = rec.to_game()
        moves = [node for node in rec.nodes if node.move is not None]
        for i, node in enumerate(moves):
            p = node.props
            if p["AZT"] == "0":
                assert "AZK" not in p
                continue
            board = game.boards[i]
            planes = encode(game.boards[i::-1][:P.HISTORY], rec.komi)[None]
            legal = board.legal_mask().astype(np.float32)[None]
            prior = ev.evaluate(planes, legal).policy[0]
            target = decode_visits(p.get("AZX") or p["AZP"], 7)
            counts = np.zeros(len(prior))
            for k, c in target.items():
                counts[k] = c
            want = policy_surprise(counts, prior)
            assert float(p["AZK"]) == pytest.approx(want, abs=0.01), (path, i)
            checked += 1
            high += want > 0.5
    assert checked > 20 and high > 0


def test_policy_surprise_values():
    import math

    from azgo.training.selfplay import policy_surprise
    assert policy_surprise([2, 2], [0.5, 0.5]) == pytest.approx(0.0)
    assert policy_surprise([10, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]) == pytest.approx(math.log(4))
    assert policy_surprise([3, 1], [0.25, 0.75]) == pytest.approx(0.75 * math.log(3) + 0.25 * math.log(1 / 3))
    assert policy_surprise([0, 0], [0.5, 0.5]) == 0.0
    assert 10 < policy_surprise([1, 0], [0.0, 1.0]) < 30  # a move the network ruled out: large but finite


def test_resignation_and_no_resign_games(tmp_path):
    # komi 60 on 7x7: Black is hopeless from the start and resigns after 3 bad moves
    cfg = small_cfg(komi=60.0, resign_threshold=0.3, no_resign_fraction=0.0, max_moves=40)
    runner = SelfPlayRunner(ScriptedEvaluator(scale=8.0), cfg, seed=1, out_dir=str(tmp_path / "r"))
    runner.play(3)
    recs = [load_sgf(p) for p in archive_games(str(tmp_path / "r"))]
    assert all(r.result == "W+R" for r in recs)
    assert all(len([n for n in r.nodes if n.color == BLACK]) <= 4 for r in recs)
    cfg2 = small_cfg(komi=60.0, resign_threshold=0.3, no_resign_fraction=1.0, max_moves=40)
    SelfPlayRunner(ScriptedEvaluator(scale=8.0), cfg2, seed=2, out_dir=str(tmp_path / "n")).play(3)
    paths = archive_games(str(tmp_path / "n"))
    assert all(load_sgf(p).root_props["AZR"] == "off" and not load_sgf(p).result.endswith("R") for p in paths)
    would, wrong = false_resignations(paths, threshold=0.3)
    assert would == 3 and wrong == 0  # Black would have resigned, and did lose every game


@pytest.fixture(scope="module")
def tiny_net(tmp_path_factory):
    pytest.importorskip("torch")
    from azgo.training.export import export_random
    path = tmp_path_factory.mktemp("net") / "tiny.onnx"
    export_random("b2c16", 1, path, check=False)
    return str(path)


def _wait_for_games(folder, n, proc, timeout=120):
    t = time.time()
    while len(archive_games(folder)) < n:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.time() - t < timeout, "no games written in time"
        time.sleep(0.2)


def test_selfplay_killed_mid_write_leaves_no_corrupt_file_and_resumes(tmp_path, tiny_net):
    out = str(tmp_path / "games")
    args = AZGO + ["selfplay", "--net", tiny_net, "--out", out, "--size", "7", "--full-visits", "16",
                   "--cheap-visits", "4", "--concurrent-games", "2", "--no-progress", "--seed", "5"]
    proc = subprocess.Popen(args + ["--games", "1000", "--workers", "2"], stderr=subprocess.PIPE,
                            start_new_session=True)
    _wait_for_games(out, 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its worker processes, mid-game
    proc.wait()
    have = archive_games(out)
    for path in have:
        load_sgf(path).to_game()  # every finished file is a complete game
    # a half-written file, as a kill inside write() would leave it (named by atomic_target, its writer dead)
    with open(os.path.join(out, f".partial-game.sgf.{proc.pid}-0badc0de.tmp"), "wb") as f:
        f.write(b"(;GM[1]SZ[7];B[aa")
    res = subprocess.run(args + ["--games", str(len(have) + 2), "--workers", "1"], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    after = archive_games(out)
    assert len(after) == len(have) + 2 and set(have) <= set(after)
    assert not glob.glob(os.path.join(out, ".*.tmp"))
    for path in after:
        load_sgf(path).to_game()


@pytest.mark.slow
def test_two_workers_and_a_trainer_share_one_archive(tmp_path, tiny_net):
    archive = tmp_path / "archive"
    archive.mkdir()
    shutil.copy(tiny_net, archive / "best.onnx")
    worker = AZGO + ["selfplay", "--archive", str(archive), "--out", str(archive), "--size", "7", "--full-visits",
                     "16", "--cheap-visits", "4", "--concurrent-games", "2", "--no-progress", "--games", "0"]
    procs = [subprocess.Popen(worker + ["--seed", str(s)], stderr=subprocess.PIPE, start_new_session=True)
             for s in (11, 12)]  # two independent processes (as on two machines)
    try:
        _wait_for_games(str(archive), 4, procs[0])
        res = subprocess.run(AZGO + ["train", str(archive), "--out", str(tmp_path / "run"), "--net", "b2c16",
                                     "--steps", "5", "--batch-size", "32", "--no-progress", "--no-tensorboard",
                                     "--threads", "1"], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        res = subprocess.run(AZGO + ["export", str(tmp_path / "run"), "--out", str(tmp_path / "new.onnx"),
                                     "--no-parity"], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        # promote the new network into the archive the running workers read from
        atomic_copy(tmp_path / "new.onnx", archive / "best.onnx")
        new_id = net_id(str(archive / "best.onnx"))
        # games already under way finish with the old network (a chunk of 2 per worker), so wait for
        # the first game of the promoted one rather than for a count of games
        t = time.time()
        while new_id not in _net_ids(archive):
            assert all(p.poll() is None for p in procs), "a worker died"
            assert time.time() - t < 180, f"no game from the promoted network: {_net_ids(archive)}"
            time.sleep(0.5)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    ids = _net_ids(archive)
    assert net_id(tiny_net).rsplit("-", 1)[1] in {i.rsplit("-", 1)[1] for i in ids}, ids  # the first network
    assert new_id in ids and len(ids) == 2, ids  # and the promoted one, nothing else


def _net_ids(folder) -> set[str]:
    return {load_sgf(p).root_props["AZM"] for p in archive_games(str(folder))}


def test_selfplay_precision_int8_plays_with_the_quantized_sibling(tmp_path, tiny_net):
    pytest.importorskip("onnx")
    import numpy as np

    from azgo.nets.quantize import quantize_int8
    from azgo.training.workers import network_file

    net = tmp_path / "tiny.onnx"
    shutil.copy(tiny_net, net)
    base = AZGO + ["selfplay", "--net", str(net), "--size", "7", "--full-visits", "8", "--cheap-visits", "4",
                   "--concurrent-games", "2", "--games", "2", "--no-progress", "--seed", "3", "--precision", "int8"]
    res = subprocess.run(base + ["--out", str(tmp_path / "none")], capture_output=True, text=True, timeout=300)
    assert res.returncode != 0 and "no int8 model was found" in res.stderr  # no sibling yet: a clear error
    assert network_file(str(net), "auto") == str(net) == network_file(str(net), "int8")

    from azgo.engine import planes as P
    rng = np.random.default_rng(1)
    calib = np.zeros((8, P.NUM_PLANES, 7, 7), np.float32)
    calib[:, P.OWN_STONES] = rng.integers(0, 2, (8, 7, 7))
    calib[:, P.ON_BOARD_PLANE] = 1.0
    q = quantize_int8(net, calib, calibration_note="test")
    assert network_file(str(net), "auto") == str(q) and network_file(str(net), "fp32") == str(net)
    out = tmp_path / "games"
    res = subprocess.run(base + ["--out", str(out)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    games = archive_games(str(out))
    assert len(games) == 2
    for path in games:  # each game names the network it was played with: the int8 file
        assert load_sgf(path).root_props["AZM"] == net_id(str(q)) != net_id(str(net))


def _write_game(path, size, moves):
    game = Game(size, 7.0)
    for m in moves:
        game.play(m)
    path.write_bytes(write_sgf(record_from_game(game, black="b", white="w", result="B+R")))


def test_load_openings_takes_prefixes_of_the_right_size_once(tmp_path):
    n = 7
    pas = n * n
    (tmp_path / "sub").mkdir()
    _write_game(tmp_path / "a.sgf", n, [24, 16, 32, 18, 10, 40, 30, 2, 3])
    _write_game(tmp_path / "sub" / "b.sgf", n, [24, 16, 32, 18, 10, 40, 30, 2])  # same first 8 moves as a
    _write_game(tmp_path / "c.sgf", n, [16, 24, pas, 10])  # an opening ends before the first pass
    _write_game(tmp_path / "nine.sgf", 9, [40, 30])  # another board size: left out
    (tmp_path / "bad.sgf").write_bytes(b"(;FF[4]SZ[7];B[zz")  # unreadable: left out
    got = load_openings([str(tmp_path)], n, max_moves=8)
    assert got == ((24, 16, 32, 18, 10, 40, 30, 2), (16, 24))
    assert load_openings([str(tmp_path / "c.sgf")], n, max_moves=1) == ((16,),)
    with pytest.raises(ValueError, match="no 13x13 openings"):
        load_openings([str(tmp_path)], 13)
    with pytest.raises(ValueError):
        SelfPlayConfig(size=7, opening_fraction=0.5)  # a fraction without openings


def test_forked_starts_begin_with_an_opening_prefix_that_is_not_trained_on(tmp_path):
    openings = ((24, 16, 32, 18, 10, 40), (16, 24, 10))
    runner = SelfPlayRunner(ScriptedEvaluator(), small_cfg(openings=openings, opening_fraction=0.5), seed=5,
                            net_id="scripted", out_dir=str(tmp_path))
    runner.play(12)
    forked = plain = 0
    for path in archive_games(str(tmp_path)):
        rec = load_sgf(path)
        moves = [node.move for node in rec.nodes]
        k = int(rec.root_props.get("AZO", "0"))
        if k == 0:
            plain += 1
            assert all("AZP" in node.props for node in rec.nodes)  # every move searched
            continue
        forked += 1
        assert any(tuple(moves[:k]) == op[:k] for op in openings) and 1 <= k <= 6
        assert all(node.props == {"AZT": "0"} for node in rec.nodes[:k])  # played, not searched
        assert all("AZP" in node.props for node in rec.nodes[k:])
        arrays = decode_record(rec)
        trained = sum(node.props.get("AZT") == "1" for node in rec.nodes)
        assert len(arrays.policy) == trained  # the opening's moves give no training positions
    assert forked and plain  # about half of the 12 games each way


def test_komi_spread_and_handicap_starts_reach_the_archive_and_the_training_arrays(tmp_path):
    from azgo.engine import planes as P
    from azgo.engine.board import WHITE
    from azgo.engine.handicap import fixed_handicap
    cfg = small_cfg(size=9, komi=7.0, komi_stdev=4.0, komi_wide_fraction=0.3, komi_range=(-5.0, 15.0),
                    handicap_fraction=0.4, handicap_stones=(2, 4), max_moves=30, no_resign_fraction=1.0)
    runner = SelfPlayRunner(ScriptedEvaluator(), cfg, seed=11, net_id="scripted", out_dir=str(tmp_path))
    runner.play(16)
    komis, handicaps = [], []
    for path in archive_games(str(tmp_path)):
        rec = load_sgf(path)
        if rec.handicap:
            handicaps.append(rec.handicap)
            assert 2 <= rec.handicap <= 4 and rec.komi == 0.5
            assert sorted(rec.setup[0]) == sorted(fixed_handicap(9, rec.handicap)) and not rec.setup[1]
            assert rec.nodes[0].color == WHITE  # White moves first after the stones
            game = rec.to_game()
            assert game.handicap == rec.handicap
        else:
            komis.append(rec.komi)
            assert -5.0 <= rec.komi <= 15.0 and (rec.komi * 2) == int(rec.komi * 2)
        arrays = decode_record(rec)
        if len(arrays.komi):  # the komi plane carries the game's komi (from the side to move's view)
            assert abs(abs(float(arrays.komi[0])) - rec.komi / P.KOMI_SCALE) < 1e-6
    assert handicaps and len(set(komis)) >= 4  # some handicap games, and komi really spread


def test_komi_and_handicap_settings_are_checked():
    with pytest.raises(ValueError, match="komi_range"):
        small_cfg(komi=7.0, komi_stdev=2.0, komi_range=(8.0, 20.0))
    with pytest.raises(ValueError, match="handicap"):
        small_cfg(handicap_fraction=0.2, handicap_stones=(1, 9))
    cfg = small_cfg(size=7, handicap_fraction=1.0, handicap_stones=(5, 9))
    import random
    assert cfg.draw_handicap(random.Random(1)) == 4  # 7x7 takes at most 4 fixed stones
    assert small_cfg().draw_komi(random.Random(1)) == 7.0  # no spread: the fair komi


def test_handicap_games_can_be_played_out(tmp_path):
    # 4 stones on 7x7 and 20 points of reverse komi: White is hopeless and resigns at once, unless the handicap
    # games are played out
    base = dict(handicap_fraction=1.0, handicap_stones=(4, 4), handicap_komi=-20.0, resign_threshold=0.3,
                no_resign_fraction=0.0, max_moves=40)
    SelfPlayRunner(ScriptedEvaluator(scale=8.0), small_cfg(**base), seed=3, out_dir=str(tmp_path / "r")).play(3)
    recs = [load_sgf(p) for p in archive_games(str(tmp_path / "r"))]
    assert len(recs) == 3 and all(r.handicap == 4 for r in recs)
    assert all(r.result == "B+R" for r in recs)
    cfg = small_cfg(handicap_resign=False, **base)
    SelfPlayRunner(ScriptedEvaluator(scale=8.0), cfg, seed=3, out_dir=str(tmp_path / "n")).play(3)
    recs = [load_sgf(p) for p in archive_games(str(tmp_path / "n"))]
    assert len(recs) == 3 and all(r.root_props["AZR"] == "off" and not r.result.endswith("R") for r in recs)


# ------------------------------------------------------------------ games against an outside opponent



def _opponent_cmd(tmp_path, mode):
    return f"{sys.executable} {fake_gtp.PATH} {tmp_path / 'marker'} {mode}"


def test_games_against_gnugo_train_on_azgo_moves_only(tmp_path):
    """With ``opponent_fraction = 1`` every game is azgo against GNU Go: GNU Go's moves are in the record (it
    plays, captures, passes), marked AZT[0]; every azgo move is a full search (AZT[1]); the root's AZE and PB/PW
    name the opponent's colour; training keeps exactly azgo's positions, valued by the game's result."""
    from gnugo import require_gnugo
    gnugo = require_gnugo()
    cfg = small_cfg(opponent=f"{gnugo} --mode gtp --chinese-rules --capture-all-dead --level 1",
                    opponent_fraction=1.0, opponent_name="GNU Go", concurrent_games=3, max_moves=98,
                    no_resign_fraction=1.0, handicap_fraction=0.5, handicap_stones=(2, 2), handicap_resign=False)
    runner = SelfPlayRunner(ScriptedEvaluator(), cfg, seed=5, net_id="scripted", out_dir=str(tmp_path))
    stats = runner.play(4)
    files = archive_games(str(tmp_path))
    assert stats.games == stats.opponent_games == 4 == len(files) and stats.dropped == 0
    colours, handicaps, opponent_stones = set(), 0, 0
    for path in files:
        rec = load_sgf(path)
        side, name = rec.root_props["AZE"].split(":")
        assert name == "GNU Go" and side in ("B", "W")
        opp = BLACK if side == "B" else 3 - BLACK
        colours.add(side)
        assert (rec.black, rec.white) == (("GNU Go", "scripted") if side == "B" else ("scripted", "GNU Go"))
        assert rec.result[:2] in ("B+", "W+")
        handicaps += rec.handicap == 2
        azgo_moves = 0
        for node in rec.nodes:
            if node.color == opp:
                assert node.props == {"AZT": "0"}
                opponent_stones += node.move != rec.size * rec.size
            else:
                assert node.props["AZT"] == "1"  # a full search (one visit where only a pass is left)
                assert int(node.props["AZN"]) >= 23 or node.move == rec.size * rec.size
                azgo_moves += 1
        arrays = decode_record(rec)
        assert len(arrays.value) == azgo_moves > 0  # GNU Go's positions are never trained on
        won = rec.result.startswith("B") == (opp != BLACK)
        assert set(arrays.value.tolist()) == {1.0 if won else -1.0}  # azgo's view of its result
    assert colours == {"B", "W"} and handicaps >= 1 and opponent_stones > 10


def test_a_failing_opponent_drops_its_games_and_stops_being_replaced(tmp_path):
    """An opponent that dies or answers nonsense loses nothing but its own games: each is dropped (nothing
    written, its process gone); dropped games are played again up to a cap, then the runner ends."""
    for mode in ("die", "junk"):
        out = tmp_path / mode
        cfg = small_cfg(opponent=_opponent_cmd(tmp_path, mode), opponent_fraction=1.0, concurrent_games=2)
        runner = SelfPlayRunner(ScriptedEvaluator(), cfg, seed=1, net_id="scripted", out_dir=str(out))
        stats = runner.play(2)
        assert stats.games == 0 and stats.dropped == 5  # 2 games, replaced three times, then given up
        assert not archive_games(str(out))
    from azgo.gtp.client import EngineError
    cfg = small_cfg(opponent=str(tmp_path / "no-such-engine"), opponent_fraction=1.0)
    with pytest.raises(EngineError, match="cannot start engine"):  # a wrong command line fails at once
        SelfPlayRunner(ScriptedEvaluator(), cfg, seed=1, out_dir=str(tmp_path / "x")).play(2)


def test_a_mix_of_self_play_and_opponent_games(tmp_path):
    cfg = small_cfg(opponent=_opponent_cmd(tmp_path, "pass"), opponent_fraction=0.5, opponent_name="passer")
    runner = SelfPlayRunner(ScriptedEvaluator(), cfg, seed=2, net_id="scripted", out_dir=str(tmp_path / "g"))
    stats = runner.play(8)
    recs = [load_sgf(p) for p in archive_games(str(tmp_path / "g"))]
    against = [r for r in recs if "AZE" in r.root_props]
    assert len(recs) == stats.games == 8 and len(against) == stats.opponent_games and 0 < len(against) < 8
    for rec in recs:
        if rec not in against:
            assert rec.black == rec.white == "scripted"
    with pytest.raises(ValueError, match="needs an opponent"):
        SelfPlayConfig(opponent_fraction=0.2)


def test_forked_games_put_the_opponent_on_the_side_that_won_the_source_game(tmp_path):
    """``opponent_fork_fraction`` and ``opponent_fork_side = "winner"``: every forked game (and no game from the
    empty board) is against the opponent, which plays the colour that won the game its start comes from."""
    openings = ((24, 16, 32, 18, 10, 40), (16, 24, 10))  # the first won by Black, the second by White
    cfg = small_cfg(opponent=_opponent_cmd(tmp_path, "pass"), opponent_name="passer", opponent_fraction=0.0,
                    opponent_fork_fraction=1.0, opponent_fork_side="winner", openings=openings,
                    opening_fraction=0.5, opening_winners=(BLACK, 3 - BLACK))
    stats = SelfPlayRunner(ScriptedEvaluator(), cfg, seed=4, net_id="scripted", out_dir=str(tmp_path / "g")).play(10)
    recs = [load_sgf(p) for p in archive_games(str(tmp_path / "g"))]
    forked = [r for r in recs if "AZO" in r.root_props]
    assert len(recs) == stats.games == 10 and 0 < len(forked) < 10
    sides = set()
    for rec in recs:
        if rec not in forked:
            assert "AZE" not in rec.root_props and rec.black == rec.white == "scripted"
            continue
        first = rec.nodes[0].move
        side = rec.root_props["AZE"].split(":")[0]
        assert side == ("B" if first == openings[0][0] else "W"), (first, side)
        sides.add(side)
    assert stats.opponent_games == len(forked)
    with pytest.raises(ValueError, match="opening_winners"):
        small_cfg(openings=openings, opening_fraction=0.5, opening_winners=(BLACK,))
    with pytest.raises(ValueError, match="opponent_fork_side"):
        small_cfg(opponent="x", opponent_fork_fraction=0.5, opponent_fork_side="loser")
    with pytest.raises(ValueError, match="needs an opponent"):
        small_cfg(opponent_fork_fraction=0.5)
