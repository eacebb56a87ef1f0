"""Training: dataset targets, symmetry augmentation, losses, checkpoint/resume, kill safety, export.

Uses the tiny ``b2c16`` network and a handful of 7x7 games made here (random play written with
``record_from_game``/``write_sgf``), some with azgo search properties (AZP/AZX/AZT).
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from azgo.engine import planes as P  # noqa: E402
from azgo.engine import symmetry as sym  # noqa: E402
from azgo.engine.board import BLACK, WHITE  # noqa: E402
from azgo.engine.coords import gtp_to_move  # noqa: E402
from azgo.engine.features import encode  # noqa: E402
from azgo.engine.game import Game  # noqa: E402
from azgo.engine.scoring import area_ownership, area_score, result_string  # noqa: E402
from azgo.engine.sgf import encode_visits, load_sgf, record_from_game, write_sgf  # noqa: E402
from azgo.training import dataset as D  # noqa: E402
from azgo.training import train as T  # noqa: E402
from azgo.training.model import build_model  # noqa: E402

N = 7


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    """Training runs here use 1 thread (bit-exact resume); give the rest of the session its setting back."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


# ------------------------------------------------------------------------------------- game files

def random_game(seed: int, moves: int, finish: bool, props: str = "none") -> tuple[Game, list[dict]]:
    """``moves`` random legal non-pass moves, then two passes if ``finish``.

    props: "none" (a foreign game), "azp" (AZP + AZT, every third move cheap) or "azx" (AZX too).
    """
    rng = random.Random(seed)
    g = Game(N, 7.5)
    move_props = []
    while g.move_number < moves:
        pts = [m for m in g.board.legal_moves() if m != N * N]
        m = rng.choice(pts) if pts else N * N
        other = rng.choice(pts) if pts else N * N
        p = {}
        if props != "none":
            p = {"AZP": encode_visits({m: 12, other: 3, N * N: 1}, N), "AZN": "16",
                 "AZT": "0" if g.move_number % 3 == 2 else "1"}
            if props == "azx":
                p["AZX"] = encode_visits({m: 10, other: 1}, N)
        move_props.append(p)
        g.play(m)
    if finish:
        for _ in range(2):
            move_props.append({})
            g.play(N * N)
    return g, move_props


def write_game(path: Path, game: Game, move_props, result: str | None = None, mtime: float | None = None) -> Path:
    if result is None:
        result = result_string(area_score(game.board, game.komi))
    path.write_bytes(write_sgf(record_from_game(game, result=result, move_props=move_props)))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """A folder of 7x7 games: self-play-like (AZP/AZX/AZT), foreign (no props), one unfinished, one bad."""
    root = tmp_path_factory.mktemp("games")
    t = time.time() - 1000
    for i in range(10):
        g, props = random_game(i, 20 + i, finish=True, props="azx" if i % 2 else "azp")
        write_game(root / f"self-{i:02d}.sgf", g, props, mtime=t + i)
    g, props = random_game(100, 25, finish=True, props="none")
    write_game(root / "foreign.sgf", g, props, mtime=t + 20)
    g, props = random_game(101, 30, finish=False, props="azp")
    write_game(root / "unfinished.sgf", g, props, result="W+R", mtime=t + 21)
    (root / "bad.sgf").write_bytes(b"(;GM[1]SZ[7];B[zz]")
    os.utime(root / "bad.sgf", (t + 22, t + 22))
    return root


# ------------------------------------------------------------------------------------- targets

def test_hand_checked_targets(tmp_path):
    """One game with AZX, AZP-only, cheap and bare nodes, played to two passes, checked by hand."""
    g = Game(N, 7.5)
    seq = [("D4", {"AZP": "dd:8 cc:2", "AZX": "dd:6 ee:2", "AZT": "1", "AZK": "0.3125"}),  # B: AZX wins
           ("C3", {"AZP": "ce:5", "AZT": "0"}),                             # W: cheap -> skipped
           ("E5", {"AZP": "ec:3 pass:1", "AZT": "1"}),                      # B: AZP only
           ("C5", {}),                                                      # W: no stats -> played move
           ("pass", {"AZP": "pass:4", "AZT": "1"}),                         # B
           ("pass", {})]                                                    # W
    for v, _ in seq:
        g.play(gtp_to_move(v, N))
    margin = area_score(g.board, g.komi)  # Black minus White minus komi
    path = write_game(tmp_path / "hand.sgf", g, [p for _, p in seq])
    arrays = D.decode_file(path)
    assert len(arrays) == 5 and arrays.stats["cheap"] == 1
    assert arrays.stats == {"moves": 6, "cheap": 1, "azx": 1, "azp": 2, "played": 2, "azk": 1, "finished": 1}
    np.testing.assert_array_equal(np.isnan(arrays.surprise), [False, True, True, True, True])
    assert arrays.surprise[0] == pytest.approx(0.3125)
    n2 = N * N

    def onehot(**kv):
        v = np.zeros(n2 + 1, np.float32)
        for k, x in kv.items():
            v[n2 if k == "pass" else gtp_to_move(k, N)] = x
        return v

    # SGF "dd" = D4 on 7x7, "ee" = E3, "ec" = E5, "cc" = C5.
    np.testing.assert_allclose(arrays.policy[0], onehot(D4=0.75, E3=0.25))
    np.testing.assert_allclose(arrays.policy[1], onehot(E5=0.75, **{"pass": 0.25}))
    np.testing.assert_allclose(arrays.policy[2], onehot(C5=1.0))
    np.testing.assert_allclose(arrays.policy[3], onehot(**{"pass": 1.0}))
    np.testing.assert_allclose(arrays.policy[4], onehot(**{"pass": 1.0}))
    movers = [BLACK, BLACK, WHITE, BLACK, WHITE]
    black_wins = 1.0 if margin > 0 else -1.0
    signs = np.array([1.0 if c == BLACK else -1.0 for c in movers], np.float32)
    np.testing.assert_array_equal(arrays.value, signs * black_wins)
    np.testing.assert_array_equal(arrays.value_w, 1.0)
    np.testing.assert_array_equal(arrays.final_w, 1.0)
    np.testing.assert_allclose(arrays.score, signs * margin)
    own = area_ownership(g.board).reshape(-1)
    for j, s in enumerate(signs):
        np.testing.assert_array_equal(arrays.ownership[j], own * int(s))
    # planes: the position before each kept move, from the mover's view, komi plane separate
    boards_before = [0, 2, 3, 4, 5]
    for j, i in enumerate(boards_before):
        want = encode(g.boards[i::-1][:P.HISTORY], g.komi)
        got = D.unpack_planes(arrays.planes[j:j + 1], N)[0]
        np.testing.assert_array_equal(got, want[:P.KOMI_PLANE])
        assert arrays.komi[j] == pytest.approx(want[P.KOMI_PLANE, 0, 0])
    assert arrays.komi[0] == pytest.approx(-7.5 / 15) and arrays.komi[2] == pytest.approx(7.5 / 15)


def test_policy_surprise_weighting(tmp_path):
    """AZK becomes each position's surprise; with a surprise weight w positions are drawn in proportion to
    1 - w + w * AZK / mean AZK (positions without AZK: 1), per board size; a bad AZK names the move."""
    g = Game(N, 7.5)
    kls = ["0.1", "0.1", "1.0", None, "0.0", "2.0"]
    props = []
    for i, kl in enumerate(kls):
        pts = [m for m in g.board.legal_moves() if m != N * N]
        p = {"AZP": encode_visits({pts[0]: 4}, N), "AZT": "1"}
        if kl is not None:
            p["AZK"] = kl
        props.append(p)
        g.play(pts[0])
    arrays = D.decode_file(write_game(tmp_path / "k.sgf", g, props))
    assert arrays.stats["azk"] == 5 and np.isnan(arrays.surprise[3])
    ps = D.PositionSet([arrays])
    rng = np.random.default_rng(0)
    assert ps.set_surprise_weight(0.0) == 5
    uniform = np.bincount(_draws(ps, rng, 6000), minlength=6)
    assert uniform.min() > 850  # ~1000 each
    assert ps.set_surprise_weight(1.0) == 5
    counts = np.bincount(_draws(ps, rng, 60000), minlength=6) / 60000
    mean = (0.1 + 0.1 + 1.0 + 0.0 + 2.0) / 5  # 0.64
    w = np.array([0.1, 0.1, 1.0, mean, 0.0, 2.0]) / mean  # the unknown one keeps weight 1
    np.testing.assert_allclose(counts, w / w.sum(), atol=0.01)
    assert counts[4] == 0.0  # a search that agreed with the network entirely, at weight 1: never drawn
    ps.set_surprise_weight(0.5)
    counts = np.bincount(_draws(ps, rng, 60000), minlength=6) / 60000
    w = 0.5 + 0.5 * np.array([0.1, 0.1, 1.0, mean, 0.0, 2.0]) / mean
    np.testing.assert_allclose(counts, w / w.sum(), atol=0.01)
    with pytest.raises(D.DatasetError):
        ps.set_surprise_weight(1.5)
    props[2]["AZK"] = "inf"
    with pytest.raises(D.SgfError, match="AZK"):
        D.decode_file(write_game(tmp_path / "bad.sgf", g, props))


def test_komi_augmentation_keeps_the_final_board_and_moves_komi(tmp_path):
    """set_komi_augment: positions of played-out games are also samples at another komi; the side to move's
    final margin minus its komi advantage (the board's area margin) is unchanged, the value is its sign,
    the komi plane follows, ownership and policy stay; positions without a final score are never changed."""
    g, props = random_game(5, 30, finish=True, props="azp")
    played_out = D.decode_file(write_game(tmp_path / "done.sgf", g, props))
    g2 = Game(N, 7.5)
    for v in ["D4", "C3", "E5"]:
        g2.play(gtp_to_move(v, N))
    unfinished = D.decode_file(write_game(tmp_path / "open.sgf", g2, [{}] * 3))
    assert played_out.final_w.sum() > 0 and unfinished.final_w.sum() == 0
    ps = D.PositionSet([played_out, unfinished])
    assert ps.set_komi_augment(1.0) == int(played_out.final_w.sum())
    rng = np.random.default_rng(3)
    n = len(ps)
    index = np.arange(n)
    base = ps.batch(N, index, 0)
    moved = ps.batch(N, index, 0)
    ps._augment_komi(rng, moved)
    final = base["final_w"] > 0
    adv0 = base["planes"][:, P.KOMI_PLANE, 0, 0] * P.KOMI_SCALE
    adv1 = moved["planes"][:, P.KOMI_PLANE, 0, 0] * P.KOMI_SCALE
    np.testing.assert_allclose((moved["score"] - adv1)[final], (base["score"] - adv0)[final], atol=1e-4)
    assert (adv1[final] != adv0[final]).any()
    np.testing.assert_array_equal(moved["value"][final], np.sign(moved["score"][final]))
    black = base["planes"][:, P.BLACK_TO_MOVE, 0, 0] > 0.5
    komi = np.where(black, -adv1, adv1)  # the komi drawn, White's in points: a multiple of 0.5 in -10..20
    assert ((komi >= -10) & (komi <= 20)).all() and np.allclose(komi * 2, np.round(komi * 2))
    for key in ("ownership", "policy"):
        np.testing.assert_array_equal(moved[key], base[key])
    for key in ("score", "value"):
        np.testing.assert_array_equal(moved[key][~final], base[key][~final])
    np.testing.assert_array_equal(moved["planes"][~final], base["planes"][~final])
    with pytest.raises(D.DatasetError):
        ps.set_komi_augment(1.5)


def test_size_mix_and_final_margin_filter(tmp_path):
    """set_size_mix draws batch sizes by the given weights (a size left out never); drop_final_targets
    removes ownership/score targets only of games won by more than the given share of the board."""
    g7, p7 = random_game(7, 20, finish=True, props="azp")
    a7 = D.decode_file(write_game(tmp_path / "a7.sgf", g7, p7))
    g9 = Game(9, 7.5)
    for v in ["E5", "C3", "G7", "pass", "pass"]:
        g9.play(gtp_to_move(v, 9))
    a9 = D.decode_file(write_game(tmp_path / "a9.sgf", g9, [{}] * 5))
    ps = D.PositionSet([a7, a9])
    rng = np.random.default_rng(1)
    sizes = [len(ps.sample(rng, 4)["planes"][0][0]) for _ in range(2000)]
    share9 = sizes.count(9) / len(sizes)
    want = ps.counts[1] / ps.counts.sum()
    assert abs(share9 - want) < 0.05  # by positions by default
    assert ps.set_size_mix({9: 3.0, 7: 1.0}) == {7: 0.25, 9: 0.75}
    sizes = [len(ps.sample(rng, 4)["planes"][0][0]) for _ in range(2000)]
    assert abs(sizes.count(9) / len(sizes) - 0.75) < 0.04
    ps.set_size_mix({9: 1.0})
    assert {len(ps.sample(rng, 4)["planes"][0][0]) for _ in range(200)} == {9}
    with pytest.raises(D.DatasetError, match="no positions"):
        ps.set_size_mix({13: 1.0})
    # final margins: |score| / area per size
    m7 = abs(area_score(g7.board, 7.5)) / 49
    m9 = abs(area_score(g9.board, 7.5)) / 81
    assert ps.arrays[7]["final_w"].all() and ps.arrays[9]["final_w"].all()
    assert ps.drop_final_targets(0.0) == 0
    cut = (m7 + m9) / 2  # between the two games' margins: exactly one loses its targets
    dropped = ps.drop_final_targets(cut)
    big = 7 if m7 > m9 else 9
    small = 9 if big == 7 else 7
    assert dropped == len(ps.arrays[big]["value"])
    assert not ps.arrays[big]["final_w"].any() and ps.arrays[small]["final_w"].all()
    assert ps.count("final_w") == len(ps.arrays[small]["value"])
    assert ps.arrays[big]["value_w"].all()  # the value target stays


def test_source_weights_sampling_and_policy_loss(tmp_path):
    """Games under a weighted source are drawn W times as often, position for position, and carry policy
    weight P into the batch and the loss (P = 0: no policy loss from them; the value loss is untouched);
    validation games stay unweighted; a malformed --source-weight is a clear error and a good one is
    recorded in the run."""
    from click.testing import CliRunner

    from azgo.gtp.cli import main
    (tmp_path / "self").mkdir()
    (tmp_path / "vs").mkdir()
    for i in range(3):
        g, props = random_game(200 + i, 20, finish=True, props="azp")
        write_game(tmp_path / "self" / f"s{i}.sgf", g, props)
    g, props = random_game(300, 20, finish=True, props="none")
    write_game(tmp_path / "vs" / "v0.sgf", g, props)
    train, _, summary = D.load_dataset([str(tmp_path / "self"), str(tmp_path / "vs")], val_fraction=0.0,
                                       use_cache=False, workers=1,
                                       source_weights=[(str(tmp_path / "vs"), 4.0, 0.0)])
    assert summary.weighted == {str(tmp_path / "vs"): 1}
    a = train.arrays[N]
    vs = a["policy_w"] == 0.0
    nv = len(D.decode_file(tmp_path / "vs" / "v0.sgf"))  # 20 moves and two passes
    assert vs.sum() == nv == 22 and (a["sample_w"][vs] == 4.0).all() and (a["sample_w"][~vs] == 1.0).all()
    rng = np.random.default_rng(3)
    drawn = 0
    total = 0
    for _ in range(200):
        b = train.sample(rng, 64)
        drawn += int((b["policy_w"] == 0.0).sum())
        total += 64
    want = 4 * nv / (4 * nv + int((~vs).sum()))
    assert abs(drawn / total - want) < 0.03, (drawn / total, want)
    # the loss: with policy_w 0 for half the batch the policy term is half of the unweighted one
    batch = T.to_tensors(train.batch(N, np.arange(len(a["value"]))))
    model = build_model("b2c16", seed=0).eval()
    with torch.no_grad():
        out = model(batch["planes"])
        _, m_w = T.compute_losses(out, batch)
        ones = dict(batch, policy_w=torch.ones_like(batch["policy_w"]))
        loss1, m_1 = T.compute_losses(out, ones)
        zeros = dict(batch, policy_w=torch.zeros_like(batch["policy_w"]))
        loss0, m_0 = T.compute_losses(out, zeros)
    assert m_w["value"] == pytest.approx(m_1["value"]) and m_0["value"] == pytest.approx(m_1["value"])
    assert m_w["policy"] != pytest.approx(m_1["policy"])  # the mean over the weighted positions only
    assert float(loss1) - float(loss0) == pytest.approx(m_1["policy"], rel=1e-4)  # weight 1 for policy
    with pytest.raises(D.DatasetError):
        D.PositionSet([D.decode_file(tmp_path / "vs" / "v0.sgf")], [(1.0, 2.0)])
    bad = CliRunner().invoke(main, ["train", str(tmp_path), "--out", str(tmp_path / "x"),
                                    "--source-weight", "vs=x"])
    assert bad.exit_code == 2 and "SRC=W" in bad.output
    out = tmp_path / "run"
    ok = CliRunner().invoke(main, ["train", str(tmp_path / "self"), str(tmp_path / "vs"), "--out", str(out),
                                   "--steps", "2", "--net", "b2c16", "--batch-size", "8", "--val-fraction", "0",
                                   "--source-weight", f"{tmp_path / 'vs'}=3:0.5", "--no-progress",
                                   "--no-tensorboard", "--validate-every", "0"])
    assert ok.exit_code == 0, ok.output
    assert "sample x3, policy x0.5 (1 training games)" in ok.output
    args = torch.load(out / "checkpoint.pt", weights_only=False)["args"]
    assert args["source_weights"] == [[str(tmp_path / "vs"), 3.0, 0.5]]


def _draws(ps, rng, n):
    """Which of a one-game set's positions ``sample`` drew (told apart by their stored planes)."""
    a = ps.arrays[ps.sizes[0]]
    keys = {a["planes"][i].tobytes(): i for i in range(len(a["planes"]))}
    assert len(keys) == len(a["planes"])
    out = []
    while len(out) < n:
        b = ps.sample(rng, 500, augment=False)
        packed = np.packbits(b["planes"][:, :D.STORED_PLANES].astype(np.uint8).reshape(len(b["planes"]), -1), axis=1)
        out += [keys[row.tobytes()] for row in packed]
    return np.array(out[:n])


def test_results_and_unfinished_games(tmp_path):
    assert D.parse_result("B+R") == 1.0 and D.parse_result("W+3.5") == -1.0
    assert D.parse_result("0") == 0.0 and D.parse_result("Draw") == 0.0
    assert D.parse_result("Void") is None and D.parse_result("?") is None and D.parse_result("") is None
    g, props = random_game(7, 12, finish=False, props="none")
    a = D.decode_file(write_game(tmp_path / "resigned.sgf", g, props, result="W+R"))
    assert len(a) == 12 and a.stats["played"] == 12
    np.testing.assert_array_equal(a.value, [-1.0 if i % 2 == 0 else 1.0 for i in range(12)])
    assert a.final_w.sum() == 0 and a.value_w.sum() == 12   # not played to the end
    a = D.decode_file(write_game(tmp_path / "void.sgf", g, props, result="Void"))
    assert a.value_w.sum() == 0
    g, props = random_game(8, 10, finish=True, props="none")
    a = D.decode_file(write_game(tmp_path / "draw.sgf", g, props, result="0"))
    assert a.value_w.sum() == len(a) and not a.value.any()


def test_archive_window_validation_and_bad_files(archive, tmp_path):
    warnings = []
    files = D.select_window(D.find_sgf_files([str(archive)]), None)
    assert [Path(f).name for f in files][-3:] == ["foreign.sgf", "unfinished.sgf", "bad.sgf"]
    window = D.select_window(D.find_sgf_files([str(archive / "*.sgf")]), 4)
    assert [Path(f).name for f in window] == ["self-09.sgf", "foreign.sgf", "unfinished.sgf", "bad.sgf"]
    cache = tmp_path / "cache"
    train, val, summary = D.load_dataset([str(archive)], val_fraction=0.3, cache_dir=str(cache),
                                         workers=1, warn=warnings.append)
    assert summary.skipped_files == 1 and any("bad.sgf" in w for w in warnings)
    assert summary.train_games + summary.val_games == 12
    held = {Path(f).name for f in files if D.is_validation(f, 0.3) and Path(f).name != "bad.sgf"}
    assert len(held) == summary.val_games and held  # deterministic by file name
    assert summary.targets["played"] > 0 and summary.targets["azx"] > 0 and summary.targets["azp"] > 0
    assert summary.cheap_skipped > 0
    # the cache gives identical arrays and is keyed by mtime/size
    t2, v2, s2 = D.load_dataset([str(archive)], val_fraction=0.3, cache_dir=str(cache), workers=1)
    for n in train.sizes:
        for k, arr in train.arrays[n].items():
            np.testing.assert_array_equal(arr, t2.arrays[n][k])
    f = archive / "self-00.sgf"
    key_before = D.cache_path(str(f), str(cache))
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    assert D.cache_path(str(f), str(cache)) != key_before
    # a run killed while writing a cache left a temporary file: the next load (self-00 is decoded again) removes it
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = cache / f".self-00-0123456789abcdef.npz.{dead.pid}-0badc0de.tmp"
    orphan.write_bytes(b"half a cache")
    D.load_dataset([str(archive)], val_fraction=0.3, cache_dir=str(cache), workers=1)
    assert not orphan.exists() and not list(cache.glob(".*.tmp"))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_symmetry_augmentation_is_consistent(archive):
    train, _, _ = D.load_dataset([str(archive)], val_fraction=0.0, use_cache=False, workers=1)
    n = train.sizes[0]
    idx = np.arange(min(40, int(train.counts[0])))
    base = train.batch(n, idx, 0)
    for k in range(8):
        b = train.batch(n, idx, k)
        np.testing.assert_array_equal(b["planes"], sym.apply_planes(base["planes"], k))
        np.testing.assert_array_equal(b["policy"], sym.apply_policy(base["policy"], k, n))
        np.testing.assert_array_equal(b["ownership"], sym.apply_points(base["ownership"], k, n))
        for key in ("value", "value_w", "score", "final_w"):
            np.testing.assert_array_equal(b[key], base[key])
    # mixed symmetries in one batch: each row is transformed by its own k
    ks = np.arange(len(idx)) % 8
    mixed = train.batch(n, idx, ks)
    for i in (0, 3, 13):
        np.testing.assert_array_equal(mixed["planes"][i], sym.apply_planes(base["planes"][i], ks[i]))
        np.testing.assert_array_equal(mixed["policy"][i], sym.apply_policy(base["policy"][i], ks[i], n))
    # a stone plane, the policy mass and ownership move together: the played (one-hot) move of the
    # foreign game lands on an empty point in every symmetry
    sample = train.sample(np.random.default_rng(1), 64)
    occupied = (sample["planes"][:, P.OWN_STONES] + sample["planes"][:, P.OPP_STONES]).reshape(64, -1)
    mass_on_stones = (sample["policy"][:, :-1] * occupied).sum()
    assert mass_on_stones == 0.0


# ------------------------------------------------------------------------------------- training

def _config(archive, out, **kw) -> T.TrainConfig:
    base = dict(data=[str(archive)], out=str(out), net="b2c16", steps=8, batch_size=32,
                checkpoint_every=4, log_every=2, validate_every=4, val_fraction=0.2, val_positions=64,
                seed=5, threads=1, workers=1, tensorboard=False, progress=False, cache=False)
    base.update(kw)
    return T.TrainConfig(**base)


def test_loss_decreases_on_a_fixed_batch(archive):
    torch.set_num_threads(1)
    train, _, _ = D.load_dataset([str(archive)], val_fraction=0.0, use_cache=False, workers=1)
    batch = T.to_tensors(train.sample(np.random.default_rng(0), 64))
    assert batch["final_w"].sum() > 0 and batch["value_w"].sum() > 0
    model = build_model("b2c16", seed=0).train()
    opt = T.make_optimizer(model, T.TrainConfig(lr=0.02))
    first = None
    for _ in range(25):
        loss, m = T.compute_losses(model(batch["planes"]), batch)
        first = m if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    _, last = T.compute_losses(model(batch["planes"]), batch)
    assert last["loss"] < 0.8 * first["loss"]
    assert last["policy"] < first["policy"] and last["value"] < first["value"]


def test_resume_matches_an_uninterrupted_run(archive, tmp_path):
    straight = T.run(_config(archive, tmp_path / "a", steps=8), log=lambda m: None)
    assert straight["step"] == 8
    T.run(_config(archive, tmp_path / "b", steps=4), log=lambda m: None)
    half = T.load_checkpoint(tmp_path / "b" / "checkpoint.pt")
    assert half["step"] == 4 and half["optimizer"]["state"]  # momentum buffers saved
    resumed = T.run(_config(archive, tmp_path / "b", steps=8, resume=True), log=lambda m: None)
    assert resumed["step"] == 8
    a = T.load_checkpoint(tmp_path / "a" / "checkpoint.pt")
    b = T.load_checkpoint(tmp_path / "b" / "checkpoint.pt")
    assert a["step"] == b["step"] == 8
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    for k, st in a["optimizer"]["state"].items():
        assert torch.equal(st["momentum_buffer"], b["optimizer"]["state"][k]["momentum_buffer"])
    assert a["rng"]["numpy"] == b["rng"]["numpy"]
    # the CSV log of the resumed run equals the straight one, step for step
    rows = [(Path(p) / "train_log.csv").read_text().splitlines() for p in (tmp_path / "a", tmp_path / "b")]
    assert [r.split(",")[2:12] for r in rows[0]] == [r.split(",")[2:12] for r in rows[1]]
    prov = b["training"]
    assert prov["steps"] == 8 and prov["samples"] == 8 * 32 and prov["games"] > 0 and prov["positions"] > 0
    # a fresh run refuses to overwrite; --init starts from the weights at step 0
    with pytest.raises(T.TrainError, match="exists"):
        T.run(_config(archive, tmp_path / "b", steps=8), log=lambda m: None)
    child = T.run(_config(archive, tmp_path / "c", steps=2, init=str(tmp_path / "b" / "checkpoint.pt")),
                  log=lambda m: None)
    c = T.load_checkpoint(child["checkpoint"])
    assert c["step"] == 2 and c["training"]["lineage"][-1]["steps"] == 8


def test_swa_averages_the_snapshots_and_survives_resume(archive, tmp_path):
    """--swa-from 4 --swa-every 2 over 8 steps: swa.pt is the mean of the weights after steps 4, 6 and 8,
    the same when the run was stopped and resumed between snapshots; it exports like any checkpoint."""
    straight = T.run(_config(archive, tmp_path / "a", steps=8, swa_from=4, swa_every=2), log=lambda m: None)
    assert straight["step"] == 8
    snaps = []
    for steps in (4, 5, 6, 8):  # the same run in pieces, reading the weights at each snapshot step
        T.run(_config(archive, tmp_path / "b", steps=steps, swa_from=4, swa_every=2, resume=steps > 4),
              log=lambda m: None)
        ck = T.load_checkpoint(tmp_path / "b" / "checkpoint.pt")
        if steps != 5:
            snaps.append(ck["model"])
    assert ck["swa"]["count"] == 3
    for run in ("a", "b"):
        swa = T.load_checkpoint(tmp_path / run / T.SWA_NAME)
        assert swa["step"] == 8 and "mean of 3 snapshots" in swa["training"]["swa"]
        assert swa["training"]["last_validation"]["loss"] > 0
        for k, v in swa["model"].items():
            if v.is_floating_point():
                expect = sum(s[k].double() for s in snaps) / 3
                assert torch.allclose(v.double(), expect, atol=1e-6), k
    differs = [k for k, v in swa["model"].items() if v.is_floating_point() and not torch.equal(v, snaps[-1][k])]
    assert differs  # the average is not the last weights
    from azgo.training.export import export_checkpoint
    onnx_path, card_path = export_checkpoint(tmp_path / "a" / T.SWA_NAME, tmp_path / "swa.onnx")
    card = json.loads(Path(card_path).read_text())
    assert "stochastic weight averaging" in card["training"]["summary"]
    # off by default: no swa.pt
    T.run(_config(archive, tmp_path / "c", steps=2), log=lambda m: None)
    assert not (tmp_path / "c" / T.SWA_NAME).exists()
    assert "swa" not in T.load_checkpoint(tmp_path / "c" / "checkpoint.pt")


def _azgo(*args):
    """The ``azgo`` command line, run with this interpreter."""
    return [sys.executable, "-c", "import sys; from azgo.gtp.cli import main; sys.exit(main())", *args]


@pytest.mark.slow
def test_sigkill_leaves_a_loadable_checkpoint_and_resume_finishes(archive, tmp_path):
    out = tmp_path / "run"
    ckpt = out / "checkpoint.pt"
    args = ["train", str(archive), "--out", str(out), "--net", "b2c16", "--steps", "100000",
            "--batch-size", "16", "--checkpoint-every", "3", "--log-every", "5", "--validate-every", "0",
            "--threads", "1", "--no-tensorboard", "--no-progress", "--no-cache", "--seed", "1"]
    proc = subprocess.Popen(_azgo(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not ckpt.exists():
            time.sleep(0.05)
        assert ckpt.exists(), proc.stderr.read1(10000).decode() if proc.poll() is not None else "no checkpoint"
        time.sleep(0.3 + random.random() * 0.3)  # let it write a few more checkpoints, then kill mid-run
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    killed = T.load_checkpoint(ckpt)  # complete: loads with weights_only
    step = killed["step"]
    assert step > 0 and step % 3 == 0
    # nothing but the checkpoint looks like one (an interrupted write is a hidden .tmp file)
    assert [p.name for p in out.glob("*.pt")] == ["checkpoint.pt"]
    target = step + 7
    res = subprocess.run(_azgo("train", "--out", str(out), "--resume", "--steps", str(target), "--no-progress"),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    final = T.load_checkpoint(ckpt)
    assert final["step"] == target
    assert final["args"]["batch_size"] == 16 and final["args"]["steps"] == target
    assert len(final["training"]["commands"]) == 2
    assert not list(out.glob(".*.tmp"))
    lines = (out / "train_log.csv").read_text().splitlines()
    steps = [int(line.split(",")[2]) for line in lines[1:]]
    assert steps == sorted(steps) and steps[-1] == target


def test_export_cli_writes_an_onnx_the_evaluator_runs(archive, tmp_path):
    from azgo.nets.evaluator import OnnxEvaluator
    T.run(_config(archive, tmp_path / "r", steps=3), command="azgo train (test)", log=lambda m: None)
    onnx_path = tmp_path / "net.onnx"
    res = subprocess.run(_azgo("export", str(tmp_path / "r"), "--out", str(onnx_path)),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    card = json.loads(onnx_path.with_suffix(".json").read_text())
    assert card["net"] == "b2c16"
    assert card["training"]["steps"] == 3 and card["training"]["samples"] == 96
    assert card["training"]["games"] > 0 and card["training"]["positions"] > 0
    assert card["training"]["commands"] == ["azgo train (test)"] and card["training"]["train_seconds"] >= 0
    ev = OnnxEvaluator(onnx_path)
    rec = load_sgf(str(archive / "self-01.sgf"))
    game = rec.to_game(6)
    planes = encode(game.recent_boards(P.HISTORY), game.komi)[None]
    legal = game.board.legal_mask()[None]
    out = ev.evaluate(planes, legal)
    assert out.policy.shape == (1, N * N + 1) and abs(float(out.policy.sum()) - 1) < 1e-5
    assert -1 <= float(out.value[0]) <= 1 and out.ownership.shape == (1, N * N)


def test_cli_help_does_not_import_torch():
    code = ("import sys; from click.testing import CliRunner; from azgo.gtp.cli import main; "
            "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output; "
            "r = CliRunner().invoke(main, ['train', '--help']); assert r.exit_code == 0, r.output; "
            "assert 'torch' not in sys.modules, 'torch imported'; print('ok')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


@pytest.mark.slow
def test_batchnorm_recalibration_matches_the_statistics_of_the_board_size(archive, tmp_path):
    """Exported statistics that do not fit a board size (here: random ones, as after training on
    another size) make eval-mode outputs differ from what the batches' own statistics give;
    recalibrating on positions of that size brings eval mode to them, changes no weight, restores
    the momentum and leaves the model in eval mode; `azgo export --bn-data --bn-size` records it."""
    import torch

    from azgo.training.export import recalibrate_batchnorm
    from azgo.training.model import randomize_batchnorm
    model = build_model("b2c16", seed=5)
    randomize_batchnorm(model, seed=3)
    weights = {k: v.clone() for k, v in model.state_dict().items() if "running" not in k and "num_batches" not in k}
    train_set, _, _ = D.load_dataset([str(archive)], val_fraction=0.0, use_cache=False, workers=1)
    batch = torch.from_numpy(train_set.sample(np.random.default_rng(1), 512)["planes"])

    def gap():
        with torch.no_grad():
            model.train()
            own = model(batch)[1].clone()  # value with the batch's own statistics
            model.eval()
            return float((model(batch)[1] - own).abs().mean())
    before = gap()
    seen = recalibrate_batchnorm(model, train_set, batches=40, batch_size=128, seed=0)
    after = gap()
    assert seen == 40 * 128 and not model.training
    assert after < 0.25 * before, (before, after)
    for k, v in model.state_dict().items():
        if k in weights:
            assert torch.equal(v, weights[k]), k
    assert all(m.momentum == 0.1 for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d))

    ckpt = tmp_path / "c.pt"
    torch.save({"net": "b2c16", "model": build_model("b2c16", seed=5).state_dict(), "training": "test"}, ckpt)
    res = subprocess.run(_azgo("export", str(ckpt), "--out", str(tmp_path / "n.onnx"), "--bn-data", str(archive),
                               "--bn-size", "7", "--bn-batches", "3"), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    card = json.loads((tmp_path / "n.json").read_text())
    assert card["batchnorm"]["board_size"] == 7 and card["batchnorm"]["positions_seen"] == 3 * 128
    assert "recalibrated" in card["provenance"]["batchnorm"]
    res = subprocess.run(_azgo("export", str(ckpt), "--out", str(tmp_path / "m.onnx"), "--bn-data", str(archive)),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode != 0 and "--bn-size" in res.stderr and not (tmp_path / "m.onnx").exists()
    res = subprocess.run(_azgo("export", str(ckpt), "--out", str(tmp_path / "k.onnx"), "--bn-data", str(archive),
                               "--bn-size", "9"), capture_output=True, text=True, timeout=300)
    assert res.returncode != 0 and "no 9x9 positions" in res.stderr


def test_net_eval_script_compares_networks_on_the_same_positions(archive, tmp_path):
    """scripts/net_eval.py: one table row per network and board size, figures in range, the same
    positions for every network (a network compared with itself gives identical rows)."""
    from azgo.training.export import export_onnx
    net = tmp_path / "a.onnx"
    export_onnx(build_model("b2c16", seed=2).eval(), net, net_name="b2c16")
    script = Path(__file__).resolve().parents[1] / "scripts" / "net_eval.py"
    res = subprocess.run([sys.executable, str(script), str(archive), "--net", str(net), "--net", str(net),
                          "--positions", "50"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = [line.split("|")[1:-1] for line in res.stdout.splitlines() if line.startswith(f"| {net}")]
    assert len(rows) == 2 and rows[0][1:] == rows[1][1:]
    board, positions, top1, ce, mse = rows[0][1], int(rows[0][2]), *map(float, rows[0][3:6])
    assert board.strip() == "7x7" and 0 < positions <= 60
    assert 0 <= top1 <= 1 and ce > 0 and 0 <= mse <= 4
    res = subprocess.run([sys.executable, str(script), str(tmp_path / "none"), "--net", str(net)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "no SGF files" in res.stderr


def test_value_by_game_script_reports_the_players_view(tmp_path):
    """scripts/value_by_game.py: one row per game the player is in (colour and result read from PB/PW and
    RE), the value turned to the player's view (the first position's value, Black to move, negated when
    the player is White), and games without the player left out."""
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    from azgo.training.export import export_onnx
    net = tmp_path / "a.onnx"
    export_onnx(build_model("b2c16", seed=3).eval(), net, net_name="b2c16")
    games = tmp_path / "games"
    games.mkdir()
    g, _ = random_game(400, 12, finish=False)
    for name, black, white, result in (("a.sgf", "azgo", "GNU Go", "B+R"), ("b.sgf", "GNU Go", "azgo x", "B+R"),
                                       ("c.sgf", "GNU Go", "Pachi", "W+R")):
        (games / name).write_bytes(write_sgf(record_from_game(g, black=black, white=white, result=result)))
    script = Path(__file__).resolve().parents[1] / "scripts" / "value_by_game.py"
    res = subprocess.run([sys.executable, str(script), str(games), "--net", str(net), "--ranges", "0-1,1-2,5-99"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in res.stdout.splitlines() if line.startswith("| ") and ".sgf" in line}
    assert set(rows) == {"a.sgf", "b.sgf"}
    assert rows["a.sgf"][:3] == ["B", "won", "12"] and rows["b.sgf"][:3] == ["W", "lost", "12"]
    arrays = D.decode_file(games / "a.sgf")
    ps = D.PositionSet([arrays])
    b = ps.batch(N, np.arange(2))
    legal = np.ones((2, N * N + 1), bool)
    v = OnnxEvaluator(net, EvalConfig(precision="fp32")).evaluate(b["planes"], legal).value
    first_a, second_a, _ = rows["a.sgf"][3].split()
    first_b, second_b, _ = rows["b.sgf"][3].split()
    assert float(first_a) == pytest.approx(v[0], abs=0.006) and float(first_b) == pytest.approx(-v[0], abs=0.006)
    assert float(second_a) == pytest.approx(-v[1], abs=0.006)  # White to move at the second position
    assert "games azgo won (1)" in res.stdout and "games azgo lost (1)" in res.stdout


def test_train_cli_size_mix_and_margin(archive, tmp_path):
    """--size-mix and --max-final-margin reach the run (its log and recorded settings); a malformed mix
    or a size the data lacks is a clear error."""
    from click.testing import CliRunner

    from azgo.gtp.cli import main
    bad = CliRunner().invoke(main, ["train", str(archive), "--out", str(tmp_path / "x"), "--size-mix", "19=a"])
    assert bad.exit_code == 2 and "SIZE=WEIGHT" in bad.output
    missing = CliRunner().invoke(main, ["train", str(archive), "--out", str(tmp_path / "y"), "--steps", "1",
                                        "--size-mix", "7=1,9=1", "--no-progress", "--no-tensorboard"])
    assert missing.exit_code == 1 and "no positions: [9]" in missing.output
    out = tmp_path / "z"
    ok = CliRunner().invoke(main, ["train", str(archive), "--out", str(out), "--steps", "2", "--net", "b2c16",
                                   "--batch-size", "8", "--size-mix", "7=1", "--max-final-margin", "0.1",
                                   "--no-progress", "--no-tensorboard", "--validate-every", "0"])
    assert ok.exit_code == 0, ok.output
    args = torch.load(out / "checkpoint.pt", weights_only=False)["args"]
    assert args["size_mix"] == {7: 1.0} and args["max_final_margin"] == 0.1


def test_source_shares_set_each_sources_share_of_the_draws(tmp_path):
    """A source given a share makes that share of its board size's draws whatever its number of positions;
    the other games split the rest; shares over 1 are an error naming the sources; --source-share parses."""
    from click.testing import CliRunner

    from azgo.gtp.cli import main
    for d in ("a", "b", "c"):
        (tmp_path / d).mkdir()
    for i in range(4):
        g, props = random_game(400 + i, 20, finish=True, props="azp")
        write_game(tmp_path / "a" / f"a{i}.sgf", g, props)
    g, props = random_game(500, 20, finish=True, props="none")
    write_game(tmp_path / "b" / "b0.sgf", g, props)
    g, props = random_game(600, 20, finish=True, props="azp")
    write_game(tmp_path / "c" / "c0.sgf", g, props)
    srcs = [str(tmp_path / d) for d in ("a", "b", "c")]
    train, _, summary = D.load_dataset(srcs, val_fraction=0.0, use_cache=False, workers=1,
                                       source_weights=[(srcs[1], 1.0, 0.0)],
                                       source_shares=[(srcs[1], 0.5), (srcs[2], 0.25)])
    assert summary.shares[str(N)] == {srcs[1]: 0.5, srcs[2]: 0.25, "other": 0.25}
    a = train.arrays[N]
    b_rows = a["policy_w"] == 0.0  # source b keeps its policy weight 0 (from --source-weight)
    rng = np.random.default_rng(5)
    hits = total = 0
    for _ in range(150):
        batch = train.sample(rng, 64)
        hits += int((batch["policy_w"] == 0.0).sum())
        total += 64
    assert b_rows.sum() < len(b_rows) / 4  # one game of six...
    assert abs(hits / total - 0.5) < 0.04  # ...drawn half the time
    with pytest.raises(D.DatasetError, match="sum to 1.2"):
        D.load_dataset(srcs, val_fraction=0.0, use_cache=False, workers=1,
                       source_shares=[(srcs[1], 0.6), (srcs[2], 0.6)])
    # shares rounded on a command line (campaign19's generation 3: 0.15 + 0.25 + 0.134247 + 0.191781 + 0.273973
    # = 1.000001) are a sum of 1, scaled to it
    _, _, rounded = D.load_dataset(srcs, val_fraction=0.0, use_cache=False, workers=1,
                                   source_shares=[(srcs[0], 0.400001), (srcs[1], 0.3), (srcs[2], 0.3)])
    assert sum(rounded.shares[str(N)].values()) == pytest.approx(1.0, abs=1e-4)
    bad = CliRunner().invoke(main, ["train", str(tmp_path), "--out", str(tmp_path / "x"), "--source-share", "b=2"])
    assert bad.exit_code == 2 and "SRC=SHARE" in bad.output


def test_handicap_games_are_drawn_more_often_and_their_source_keeps_its_share(tmp_path):
    """--handicap-weight: the positions of games begun with 2+ handicap stones (HA) are drawn that many times
    as often as the other positions of their source; with source shares each source's share holds."""
    from click.testing import CliRunner

    from azgo.engine.sgf import read_handicap
    from azgo.gtp.cli import main
    for d in ("sp", "other"):
        (tmp_path / d).mkdir()
    rng = random.Random(3)
    for i in range(4):
        g = Game(N, 0.5 if i == 0 else 7.5)
        if i == 0:
            g.place_fixed_handicap(2)
        props = []
        while g.move_number < 24:
            pts = [m for m in g.board.legal_moves() if m != N * N]
            props.append({"AZP": encode_visits({pts[0]: 4}, N), "AZT": "1"})
            g.play(rng.choice(pts))
        for _ in range(2):
            props.append({})
            g.play(N * N)
        write_game(tmp_path / "sp" / f"g{i}.sgf", g, props, mtime=time.time() - 100 + i)
    g, props = random_game(700, 24, finish=True, props="azp")
    write_game(tmp_path / "other" / "o.sgf", g, props, mtime=time.time() - 50)  # the window's last game
    assert read_handicap(str(tmp_path / "sp" / "g0.sgf")) == 2 and read_handicap(str(tmp_path / "sp" / "g1.sgf")) == 0
    assert read_handicap(str(tmp_path / "missing.sgf")) == 0
    srcs = [str(tmp_path / "sp"), str(tmp_path / "other")]
    plain, _, s1 = D.load_dataset(srcs, val_fraction=0.0, use_cache=False, workers=1)
    heavy, _, s4 = D.load_dataset(srcs, val_fraction=0.0, use_cache=False, workers=1, handicap_weight=4.0)
    assert s1.handicap_games == 0 and s4.handicap_games == 1 and s4.as_dict()["handicap_games"] == 1
    w1, w4 = plain.arrays[N]["sample_w"], heavy.arrays[N]["sample_w"]
    assert set(np.round(w1, 6)) == {1.0} and sorted(set(np.round(w4, 6))) == [1.0, 4.0]
    assert (w4 == 4.0).sum() == s4.handicap_positions > 0
    # with shares: "sp" keeps 0.75 of the draws, and within it the handicap game's positions weigh 4x
    shared, _, s = D.load_dataset(srcs, val_fraction=0.0, use_cache=False, workers=1, handicap_weight=4.0,
                                  source_shares=[(srcs[0], 0.75)])
    ws = shared.arrays[N]["sample_w"]
    first = s4.handicap_positions  # rows: g0 (the handicap game), g1-g3, then o
    n_other = len(D.load_game(str(tmp_path / "other" / "o.sgf"), use_cache=False))
    assert ws[:first].min() / ws[first:-n_other].max() == pytest.approx(4.0)  # g0's rows against g1-g3's
    assert ws[-n_other:].sum() / ws.sum() == pytest.approx(0.25)  # "other" keeps the rest of the draws
    assert ws.mean() == pytest.approx(1.0)
    with pytest.raises(D.DatasetError, match="handicap weight"):
        D.load_dataset(srcs, val_fraction=0.0, use_cache=False, workers=1, handicap_weight=-1)
    bad = CliRunner().invoke(main, ["train", str(tmp_path), "--out", str(tmp_path / "x"), "--handicap-weight", "-2"])
    assert bad.exit_code == 2 and "handicap-weight" in bad.output


def test_source_share_groups_hold_one_share_together():
    """Two sources of one group hold the group's share jointly, split by their positions."""
    class G:
        def __init__(self, n, size=9):
            self.n, self.size = n, size

        def __len__(self):
            return self.n
    games = [G(10), G(30), G(60)]
    w, report = D.share_weights(games, [0, 1, -1], [0.5, 0.5], ["a", "b"], ["mine", "mine"])
    assert report["9"] == {"mine": 0.5, "other": 0.5}
    draws = [wi * len(g) for wi, g in zip(w, games)]
    assert draws[0] / sum(draws) == pytest.approx(0.125) and draws[1] / sum(draws) == pytest.approx(0.375)
    w, report = D.share_weights(games, [0, 1, -1], [0.2, 0.3], ["a", "b"])
    assert report["9"] == {"a": 0.2, "b": 0.3, "other": 0.5}


def test_komi_inputs_turn_on_from_an_init_and_stay_on_through_resume(archive, tmp_path):
    """--komi-inputs on a run initialised from a checkpoint without them: the model trains them (the komi
    weight moves), the checkpoint keeps them, a resumed run (without the flag) keeps them too."""
    T.run(_config(archive, tmp_path / "old", steps=2), log=lambda m: None)
    old = T.load_checkpoint(tmp_path / "old" / "checkpoint.pt")
    assert float(old["model"]["komi_inputs"]) == 0.0
    T.run(_config(archive, tmp_path / "k", steps=4, komi_inputs=True, init=str(tmp_path / "old" / "checkpoint.pt")),
          log=lambda m: None)
    k = T.load_checkpoint(tmp_path / "k" / "checkpoint.pt")
    assert float(k["model"]["komi_inputs"]) == 1.0 and float(k["model"]["value_komi"]) != 0.0
    T.run(_config(archive, tmp_path / "k", steps=6, resume=True), log=lambda m: None)
    again = T.load_checkpoint(tmp_path / "k" / "checkpoint.pt")
    assert again["step"] == 6 and float(again["model"]["komi_inputs"]) == 1.0
