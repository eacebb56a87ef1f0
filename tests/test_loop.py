"""azgo loop: generations end to end on a tiny net, killed mid-way and resumed by the same command."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

LOOP = [sys.executable, "-m", "azgo.gtp.cli", "loop", "--net", "b2c16", "--size", "7", "--games-per-generation", "6",
        "--workers", "1", "--full-visits", "12", "--cheap-visits", "4", "--train-steps", "12", "--batch-size", "32",
        "--gate-games", "2", "--gate-visits", "4", "--seed", "3"]


@pytest.mark.slow
def test_loop_killed_and_resumed(tmp_path):
    pytest.importorskip("torch")
    folder = tmp_path / "loop"
    proc = subprocess.Popen(LOOP + ["--dir", str(folder), "--generations", "2"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    state = folder / "state.json"
    t = time.time()
    while True:  # kill it inside generation 1, once training has started
        if state.exists() and json.loads(state.read_text())["stage"] in ("train", "export", "gate"):
            break
        assert proc.poll() is None and time.time() - t < 240
        time.sleep(0.2)
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    res = subprocess.run(LOOP + ["--dir", str(folder), "--generations", "2"], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    st = json.loads(state.read_text())
    assert st["generation"] == 3 and st["stage"] == "selfplay", st
    rows = list(csv.DictReader(open(folder / "ladder.csv")))
    assert [r["generation"] for r in rows] == ["0", "1", "2"], rows
    for g in (0, 1, 2):
        assert (folder / "nets" / f"gen{g:04d}.onnx").exists()
        assert (folder / "checkpoints" / f"gen{g:04d}" / "checkpoint.pt").exists()
    assert len(list((folder / "games").glob("*.sgf"))) == 12
    assert (folder / "ladder.png").exists()
    assert not list(folder.rglob("*.tmp")), list(folder.rglob("*.tmp"))


def test_loop_init_from_checkpoint_and_extra_games(tmp_path, monkeypatch):
    """--init makes generation 0 the given network (not random weights); --extra-games joins training."""
    torch = pytest.importorskip("torch")
    from azgo.training import loop as loop_mod
    from azgo.training.model import build_model
    from azgo.training.selfplay import SelfPlayConfig

    model = build_model("b2c16", seed=11).eval()
    src = tmp_path / "sup.pt"
    torch.save({"net": "b2c16", "model": model.state_dict(), "step": 5, "training": "supervised test"}, src)
    extra = tmp_path / "extra"
    extra.mkdir()
    cfg = loop_mod.LoopConfig(net="b2c16", init=str(src), extra_games=(str(extra),),
                              selfplay=SelfPlayConfig(size=7))
    lp = loop_mod.Loop(str(tmp_path / "loop"), cfg, log=lambda m: None)
    lp.init()
    assert lp.state["best"] == 0 and lp.state["generation"] == 1
    saved = torch.load(lp.ckpt_path(0), weights_only=True)
    assert "supervised test" in saved["training"]
    for k, v in model.state_dict().items():
        assert torch.equal(saved["model"][k], v)
    # the exported generation 0 is this network (ONNX equals torch), and not a fresh random one
    from azgo.training.export import ExportError, check_parity
    check_parity(model, lp.net_path(0), sizes=(7,))
    with pytest.raises(ExportError):
        check_parity(build_model("b2c16", seed=12).eval(), lp.net_path(0), sizes=(7,))
    calls = []
    monkeypatch.setattr(loop_mod, "run_child", calls.append)
    lp.train(1)
    cmd = calls[0]
    assert cmd[cmd.index("train") + 1:cmd.index("--out")] == [lp.games_dir, str(extra)]
    assert cmd[cmd.index("--init") + 1] == lp.ckpt_path(0)
    assert "--surprise-weight" not in cmd  # off by default
    import dataclasses
    loop_mod.Loop(str(tmp_path / "loop"), dataclasses.replace(cfg, surprise_weight=0.5), log=lambda m: None).train(1)
    assert calls[1][calls[1].index("--surprise-weight") + 1] == "0.5"
    assert "--size-mix" not in calls[1] and "--max-final-margin" not in calls[1]
    loop_mod.Loop(str(tmp_path / "loop"), dataclasses.replace(cfg, size_mix="7=0.7,9=0.3", max_final_margin=0.75),
                  log=lambda m: None).train(1)
    assert calls[2][calls[2].index("--size-mix") + 1] == "7=0.7,9=0.3"
    assert calls[2][calls[2].index("--max-final-margin") + 1] == "0.75"


def test_loop_gate_replayed_after_a_kill_before_its_save(tmp_path, monkeypatch):
    """A kill after the gate's work but before state.json is saved: no doubled ladder row, no stray best."""
    pytest.importorskip("torch")
    import filecmp

    from azgo.gtp import match as match_mod
    from azgo.training import loop as loop_mod
    from azgo.training.export import export_onnx
    from azgo.training.model import build_model
    from azgo.training.selfplay import SelfPlayConfig

    cfg = loop_mod.LoopConfig(net="b2c16", selfplay=SelfPlayConfig(size=7), gate_games=4)
    folder = str(tmp_path / "loop")
    lp = loop_mod.Loop(folder, cfg, log=lambda m: None)
    lp.init()
    export_onnx(build_model("b2c16", seed=99).eval(), lp.net_path(1), net_name="b2c16")
    lp.state["stage"] = "gate"
    lp.save()
    best = os.path.join(lp.games_dir, "best.onnx")

    def won_all(a, b, games, size, komi, **kw):
        return match_mod.MatchSummary(games, games, 0, 0, "gen1", "gen0")
    monkeypatch.setattr(match_mod, "run_match", won_all)
    lp.gate(1)  # promoted in memory; killed here, before the driver saves
    again = loop_mod.Loop(folder, cfg, log=lambda m: None)
    assert again.state["best"] == 0 and again.state["stage"] == "gate"
    assert filecmp.cmp(best, lp.net_path(0), shallow=False)  # best.onnx still the saved best
    again.gate(1)  # the resumed loop replays the gate
    again.state["stage"] = "selfplay"
    again.save()
    rows = list(csv.DictReader(open(os.path.join(folder, "ladder.csv"))))
    assert [(r["generation"], r["promoted"]) for r in rows] == [("0", "1"), ("1", "1")]
    assert filecmp.cmp(best, lp.net_path(1), shallow=False)
    assert loop_mod.Loop(folder, cfg).state["best"] == 1


@pytest.mark.slow
def test_loop_int8_keep_fp32_names_an_unknown_node_plainly(tmp_path):
    """A --int8-keep-fp32 node the network lacks stops the loop with a one-line error, not a traceback;
    without --precision int8 the option is refused before anything runs."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    folder = tmp_path / "loop"
    res = subprocess.run(LOOP + ["--dir", str(folder), "--generations", "1", "--precision", "int8",
                                 "--int8-keep-fp32", "/no/such/Conv"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 1 and "has no node named /no/such/Conv" in res.stderr, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    res = subprocess.run(LOOP + ["--dir", str(tmp_path / "other"), "--int8-keep-fp32", "/stem/conv/Conv"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "only with --precision int8" in res.stderr
    assert not (tmp_path / "other").exists()


@pytest.mark.slow
def test_loop_int8_quantizes_each_generation_and_plays_with_it(tmp_path, gnugo_path):
    """--precision int8: every generation gets a calibrated int8 copy, and self-play plays the best one;
    --anchor: each generation then plays GNU Go (the real one), a ladder row of its own."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import hashlib

    import onnx

    folder = tmp_path / "loop"
    anchor = f"{gnugo_path} --mode gtp --chinese-rules --level 0"
    res = subprocess.run(LOOP + ["--dir", str(folder), "--generations", "1", "--precision", "int8",
                                 "--int8-keep-fp32", "/stem/conv/Conv",
                                 "--anchor", anchor, "--anchor-games", "2", "--anchor-visits", "8"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]

    def calibration(path):
        meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
        assert meta["azgo_precision"] == "int8"
        return json.loads(meta["azgo_calibration"])
    gen0, gen1 = (folder / "nets" / f"gen{g:04d}.int8.onnx" for g in (0, 1))
    cal0, cal1 = calibration(gen0), calibration(gen1)
    assert cal0["note"] == "random legal positions" and cal0["positions"] == 400
    assert "newest 6 7x7 games" in cal1["note"] and cal1["board_sizes"] == [7]
    for g, cal in ((0, cal0), (1, cal1)):  # each copy is of its own generation's network
        fp32 = (folder / "nets" / f"gen{g:04d}.onnx").read_bytes()
        assert cal["fp32_sha256"] == hashlib.sha256(fp32).hexdigest()
        assert cal["fp32_nodes"] == ["/stem/conv/Conv"]  # --int8-keep-fp32 reached every generation's copy
        graph = onnx.load(str(folder / "nets" / f"gen{g:04d}.int8.onnx")).graph
        made_by = {o: n.op_type for n in graph.node for o in n.output}
        dequantized = {n.name for n in graph.node if n.op_type == "Conv"
                       and made_by.get(n.input[1]) == "DequantizeLinear"}
        assert "/stem/conv/Conv" not in dequantized and dequantized  # the stem fp32, the other convolutions int8
    # self-play (generation 1's games) played generation 0's int8 file
    digest = hashlib.sha256(gen0.read_bytes()).hexdigest()[:12]
    games = sorted((folder / "games").glob("*.sgf"))
    assert len(games) == 6
    for f in games:
        assert f"PB[best.int8-{digest}]" in f.read_text()
    st = json.loads((folder / "state.json").read_text())
    best8 = folder / "nets" / f"gen{st['best']:04d}.int8.onnx"
    assert (folder / "games" / "best.int8.onnx").read_bytes() == best8.read_bytes()
    assert "[gen 1] int8 ->" in res.stderr and "top-1 agreement" in res.stderr
    rows = list(csv.DictReader(open(folder / "ladder.csv")))
    assert [(r["generation"], r["opponent"]) for r in rows[:2]] == [("0", ""), ("1", "0")], rows
    anchored = {r["generation"]: r for r in rows if r["opponent"] == "anchor"}
    assert anchored["1"]["games"] == "2"
    if st["gate"]["passed"]:  # the anchor decided: generation 0 played it too, and the better score won
        assert sorted(anchored) == ["0", "1"] and anchored["0"]["games"] == "2"
        assert (st["best"] == 1) == (st["anchor"]["1"]["score"] >= st["anchor"]["0"]["score"])
    else:
        assert sorted(anchored) == ["1"] and st["best"] == 0
    assert rows[1]["promoted"] == anchored["1"]["promoted"] == str(int(st["best"] == 1))
    played = sorted((folder / "matches" / "gen0001-anchor").glob("game*.sgf"))
    assert len(played) == 2
    assert "PB[gen1]" in played[0].read_text() and "PB[anchor]" in played[1].read_text()  # colours alternate
    assert not list(folder.rglob("*.tmp")), list(folder.rglob("*.tmp"))


def test_loop_anchor_rows_survive_replays(tmp_path, monkeypatch):
    """With the anchor as a report (--no-anchor-gate) the anchor stage adds one row per generation beside
    the gate's; replaying either (a kill before the save) replaces only its own row; without --anchor the
    stage does nothing."""
    pytest.importorskip("torch")
    from azgo.gtp import match as match_mod
    from azgo.training import loop as loop_mod
    from azgo.training.export import export_onnx
    from azgo.training.model import build_model
    from azgo.training.selfplay import SelfPlayConfig

    calls = []

    def fake(a, b, games, size, komi, **kw):
        calls.append((a, b, games, kw.get("resume", False)))
        wins = 1 if "anchor" == kw.get("name_b") else games
        return match_mod.MatchSummary(games, wins, games - wins, 0, kw.get("name_a"), kw.get("name_b"))
    monkeypatch.setattr(match_mod, "run_match", fake)
    cfg = loop_mod.LoopConfig(net="b2c16", selfplay=SelfPlayConfig(size=7), gate_games=4,
                              anchor="gnugo --mode gtp --level 10", anchor_games=3, anchor_visits=77,
                              anchor_gate=False)
    folder = str(tmp_path / "loop")
    lp = loop_mod.Loop(folder, cfg, log=lambda m: None)
    lp.init()
    export_onnx(build_model("b2c16", seed=99).eval(), lp.net_path(1), net_name="b2c16")
    lp.gate(1)
    lp.anchor(1)
    lp.anchor(1)  # replayed
    lp.gate(1)    # replayed (in memory generation 1 is already the best, so it gated against itself)
    lp.save()
    rows = list(csv.DictReader(open(os.path.join(folder, "ladder.csv"))))
    assert [(r["generation"], r["opponent"], r["games"]) for r in rows] == [
        ("0", "", "0"), ("1", "anchor", "3"), ("1", "1", "4")], rows
    anchor_row = rows[1]
    assert anchor_row["win_rate"] == "0.333" and anchor_row["promoted"] == "1"
    assert float(anchor_row["elo"]) == pytest.approx(match_mod.elo(1.5 / 4), abs=0.1)
    a, b, games, resume = calls[1]
    assert b == cfg.anchor and games == 3 and resume and "--visits 77" in a and lp.net_path(1) in a
    n = len(calls)
    loop_mod.Loop(folder, loop_mod.LoopConfig(net="b2c16", selfplay=SelfPlayConfig(size=7)),
                  log=lambda m: None).anchor(1)
    assert len(calls) == n  # no --anchor: nothing played


def _anchor_loop(tmp_path, monkeypatch, anchor_wins, gate_wins=4, margin=0.0):
    """A loop at generation 1 whose matches are faked: ``anchor_wins[g]`` of 4 anchor games for gen g."""
    pytest.importorskip("torch")
    from azgo.gtp import match as match_mod
    from azgo.training import loop as loop_mod
    from azgo.training.export import export_onnx
    from azgo.training.model import build_model
    from azgo.training.selfplay import SelfPlayConfig

    calls = []

    def fake(a, b, games, size, komi, **kw):
        calls.append(kw.get("name_a"))
        if kw.get("name_b") == "anchor":
            wins = anchor_wins[int(kw["name_a"][3:])]
        else:
            wins = gate_wins
        return match_mod.MatchSummary(games, wins, games - wins, 0, kw.get("name_a"), kw.get("name_b"))
    monkeypatch.setattr(match_mod, "run_match", fake)
    cfg = loop_mod.LoopConfig(net="b2c16", selfplay=SelfPlayConfig(size=7), gate_games=4,
                              anchor="gnugo --mode gtp --level 10", anchor_games=4, anchor_margin=margin)
    folder = str(tmp_path / "loop")
    lp = loop_mod.Loop(folder, cfg, log=lambda m: None)
    lp.init()
    export_onnx(build_model("b2c16", seed=99).eval(), lp.net_path(1), net_name="b2c16")
    return loop_mod, lp, cfg, folder, calls


def _rows(folder):
    return [(r["generation"], r["opponent"], r["win_rate"], r["promoted"])
            for r in csv.DictReader(open(os.path.join(folder, "ladder.csv")))]


def test_loop_anchor_rejects_a_gate_winner_that_plays_the_anchor_worse(tmp_path, monkeypatch):
    """--anchor gates by default: the candidate swept its gate (4-0) but won 1 of 4 against GNU Go where
    the best network won 3 of 4, so it is not promoted and best.onnx stays generation 0."""
    import filecmp
    loop_mod, lp, cfg, folder, calls = _anchor_loop(tmp_path, monkeypatch, {0: 3, 1: 1})
    lp.gate(1)
    assert lp.state["best"] == 0  # the gate alone does not promote
    lp.anchor(1)
    assert calls == ["gen1", "gen0", "gen1"]  # gate, then the best's anchor games, then the candidate's
    assert lp.state["best"] == 0
    lp.state["stage"] = "selfplay"
    lp.save()
    assert _rows(folder) == [("0", "", "", "1"), ("1", "0", "1.000", "0"), ("0", "anchor", "0.750", "1"),
                             ("1", "anchor", "0.250", "0")]
    assert filecmp.cmp(os.path.join(lp.games_dir, "best.onnx"), lp.net_path(0), shallow=False)


@pytest.mark.slow
def test_loop_anchor_promotes_and_survives_a_kill(tmp_path, monkeypatch):
    """A gate winner that scores against the anchor as well as the best (2 of 4 each; the margin lets
    a little worse through too) is promoted; a loop killed after the anchor games but before the save
    replays the stage from the saved state (the best's anchor games are not played again once saved)."""
    import filecmp
    loop_mod, lp, cfg, folder, calls = _anchor_loop(tmp_path, monkeypatch, {0: 2, 1: 2})
    lp.gate(1)
    lp.state["stage"] = "anchor"
    lp.save()
    lp.anchor(1)  # promoted in memory; killed here
    assert lp.state["best"] == 1
    again = loop_mod.Loop(folder, cfg, log=lambda m: None)
    assert again.state["best"] == 0 and "anchor" not in again.state
    again.anchor(1)
    again.state["stage"] = "selfplay"
    again.save()
    assert calls == ["gen1", "gen0", "gen1", "gen0", "gen1"]
    assert again.state["best"] == 1 and again.state["anchor"]["0"]["games"] == 4
    assert _rows(folder) == [("0", "", "", "1"), ("1", "0", "1.000", "1"), ("0", "anchor", "0.500", "1"),
                             ("1", "anchor", "0.500", "1")]
    assert filecmp.cmp(os.path.join(lp.games_dir, "best.onnx"), lp.net_path(1), shallow=False)
    # within the margin: 1 of 4 (smoothed 0.3) against the best's 2 of 4 (0.5) passes at 0.25, not at 0.1
    for margin, promoted in ((0.25, 1), (0.1, 0)):
        sub = tmp_path / f"m{margin}"
        sub.mkdir()
        _, lp2, _, _, _ = _anchor_loop(sub, monkeypatch, {0: 2, 1: 1}, margin=margin)
        lp2.gate(1)
        lp2.anchor(1)
        assert lp2.state["best"] == promoted


def test_loop_anchor_gate_failure_is_not_rescued_by_the_anchor(tmp_path, monkeypatch):
    """A candidate that lost its gate (1 of 4) stays out however well it plays the anchor; it still
    gets its anchor row, and the best's anchor games are not needed."""
    loop_mod, lp, cfg, folder, calls = _anchor_loop(tmp_path, monkeypatch, {0: 0, 1: 4}, gate_wins=1)
    lp.gate(1)
    lp.anchor(1)
    assert lp.state["best"] == 0 and calls == ["gen1", "gen1"]
    assert lp.state["anchor"] == {"1": {"games": 4, "wins": 4, "score": 0.9}}
