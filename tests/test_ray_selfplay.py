"""Self-play on Ray actors (``--ray``): games come back to the driver and land in the archive exactly
as local workers write them; a SIGKILLed actor is replaced, and the target is met with no partial or
duplicated game. Ray runs on this machine (``ray.init(num_cpus=2)``); skipped without Ray."""

import glob
import os
import re
import shutil
import signal
import sys
import tempfile

import pytest
from click.testing import CliRunner

from azgo.engine.atomic import atomic_copy
from azgo.engine.sgf import load_sgf
from azgo.training.selfplay import SelfPlayConfig
from azgo.training.workers import archive_games, net_id

NAME = re.compile(r"^\d{8}-\d{6}-ray\d+-(\d{10})-[0-9a-f]{8}\.sgf$")


def small_cfg(**kw):
    base = dict(size=7, komi=7.0, full_visits=16, cheap_visits=4, full_prob=0.4, concurrent_games=2,
                leaves_per_game=4, max_moves=50)
    base.update(kw)
    return SelfPlayConfig(**base)


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'azgo[cluster]')")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    pytest.importorskip("torch")
    from azgo.training.export import export_random
    folder = tmp_path_factory.mktemp("nets")
    paths = []
    for seed in (1, 2):
        path = folder / f"tiny{seed}.onnx"
        export_random("b2c16", seed, path, check=False)
        paths.append(str(path))
    return paths


def check_archive(folder, target):
    """Exactly ``target`` complete games, no temporary files, no game name or seed twice."""
    files = archive_games(str(folder))
    assert len(files) == target, files
    assert not glob.glob(os.path.join(str(folder), ".*")), "a temporary or partial file is left"
    names = [os.path.basename(p) for p in files]
    assert all(NAME.match(n) for n in names), names
    seeds = [load_sgf(p).root_props["AZS"] for p in files]
    assert len(set(seeds)) == len(seeds) == len(set(names)), seeds
    for p in files:
        rec = load_sgf(p)
        assert NAME.match(os.path.basename(p)).group(1) == f"{int(rec.root_props['AZS']):010d}"
        rec.to_game()  # every file is a whole, legal game
    return files


def net_folders():
    """The folders actors wrote networks into (none may outlive loading: Ray kills actors unfinalised)."""
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "azgo-ray-net-*")))


@pytest.mark.slow
def test_two_actors_fill_the_archive_and_follow_a_promotion(ray_session, nets, tmp_path):
    from azgo.training.ray_selfplay import RaySelfPlay
    archive = tmp_path / "games"
    archive.mkdir()
    shutil.copy(nets[0], archive / "best.onnx")
    first = net_id(str(archive / "best.onnx"))
    before = net_folders()
    pool = RaySelfPlay("local", small_cfg(), workers=2, log=lambda m: None)
    try:
        assert pool.workers == 2 and len(set(pool.pids())) == 2 and os.getpid() not in pool.pids()
        assert pool.play(str(archive), 6, archive=str(archive), seed=3, show_progress=False) == 6
        assert net_folders() <= before, "an actor keeps its network's temporary folder"
        files = check_archive(archive, 6)
        assert {os.path.basename(p).split("-")[2] for p in files} == {"ray0", "ray1"}  # both actors played
        for p in files:  # the properties local workers write
            rec = load_sgf(p)
            assert rec.size == 7 and rec.komi == 7.0 and rec.root_props["AZF"] == "1"
            assert rec.root_props["AZM"] == first and rec.root_props["AZR"] in ("0.05", "off")
            assert all(n.props["AZT"] in ("0", "1") and "AZP" in n.props for n in rec.nodes)
        from azgo.training import dataset as D
        train, _, summary = D.load_dataset([str(archive)], val_fraction=0.0, use_cache=False, workers=1)
        assert summary.train_games == 6 and len(train) > 0  # azgo train reads them unchanged
        # a promotion: best.onnx replaced atomically; the same actors get the new network and play the rest
        atomic_copy(nets[1], archive / "best.onnx")
        assert pool.play(str(archive), 8, archive=str(archive), seed=3, show_progress=False) == 2
        files = check_archive(archive, 8)
        ids = [load_sgf(p).root_props["AZM"] for p in files]
        second = net_id(str(archive / "best.onnx"))
        assert second != first and ids.count(first) == 6 and ids.count(second) == 2, ids
        assert pool.play(str(archive), 8, archive=str(archive), show_progress=False) == 0  # target met already
        assert pool.replaced == 0
    finally:
        pool.close()
    assert net_folders() <= before, "closing the actors left their networks in the temporary folder"


@pytest.mark.slow
def test_sigkilled_actor_is_replaced_and_the_target_met(ray_session, nets, tmp_path):
    from azgo.training.ray_selfplay import RaySelfPlay
    out = tmp_path / "games"
    pool = RaySelfPlay("local", small_cfg(concurrent_games=3), workers=2, log=lambda m: None)
    try:
        pids = pool.pids()
        killed = []

        def kill_one(path, written):
            if written == 2:  # both actors are mid-game now: kill one process outright
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
        assert pool.play(str(out), 10, net=nets[0], seed=9, show_progress=False, on_game=kill_one) == 10
        assert killed and pool.replaced >= 1
        assert killed[0] not in pool.pids() and len(pool.pids()) == 2  # a replacement took its place
        check_archive(out, 10)
    finally:
        pool.close()


def test_selfplay_cli_with_ray(ray_session, nets, tmp_path):
    """``azgo selfplay --ray``: uses the Ray session of this process (as started above), --workers actors."""
    from azgo.gtp.cli import main
    out = tmp_path / "games"
    res = CliRunner().invoke(main, ["selfplay", "--ray", "local", "--workers", "2", "--net", nets[0],
                                    "--out", str(out), "--games", "3", "--size", "7", "--full-visits", "8",
                                    "--cheap-visits", "4", "--concurrent-games", "2", "--max-moves", "40",
                                    "--seed", "4", "--no-progress", "--device", "cpu"])
    assert res.exit_code == 0, res.output
    assert "played 3 games with 2 Ray actors" in res.output
    check_archive(out, 3)


def test_loop_self_play_stage_on_ray(ray_session, tmp_path):
    pytest.importorskip("torch")
    from azgo.training import loop as loop_mod
    cfg = loop_mod.LoopConfig(net="b2c16", games_per_generation=3, workers=2, ray="local",
                              selfplay=small_cfg(max_moves=40))
    lp = loop_mod.Loop(str(tmp_path / "loop"), cfg, log=lambda m: None)
    try:
        lp.init()
        lp.selfplay(1)
        check_archive(lp.games_dir, 3)
        assert lp._ray_pool is not None and lp._ray_pool.workers == 2
    finally:
        if lp._ray_pool is not None:
            lp._ray_pool.close()


def test_ray_missing_gives_a_clear_error(monkeypatch, tmp_path):
    """Without Ray installed, --ray names the extra to install (simulated: ``import ray`` fails)."""
    from azgo.gtp.cli import main
    from azgo.nets.registry import default_net_path
    monkeypatch.setitem(sys.modules, "ray", None)
    for args in (["selfplay", "--net", str(default_net_path()), "--out", str(tmp_path / "g"), "--ray", "auto"],
                 ["loop", "--dir", str(tmp_path / "loop"), "--ray", "auto"]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 1, res.output
        assert "--ray needs Ray" in res.output and "azgo[cluster]" in res.output
    assert not (tmp_path / "loop").exists() and not (tmp_path / "g").exists()
