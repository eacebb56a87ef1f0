"""Device choice on a machine without a GPU: onnxruntime providers, the CPU fallback, the error texts
for ``--device cuda``, ``azgo train --device`` and ``azgo loop`` passing it on. (No GPU was available
to test the CUDA paths themselves; these tests check the choices and messages around them.)"""

import os
from pathlib import Path

import onnxruntime as ort
import pytest
from click.testing import CliRunner

from azgo.gtp.cli import main
from azgo.nets import evaluator as E
from azgo.nets.registry import NetError, default_net_path

CUDA = ("CUDAExecutionProvider", {"device_id": 0})


def test_choose_providers_with_fake_provider_lists():
    gpu = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    cpu_only = ["AzureExecutionProvider", "CPUExecutionProvider"]
    assert E.choose_providers("cpu", gpu) == ["CPUExecutionProvider"]
    assert E.choose_providers("auto", gpu) == [CUDA, "CPUExecutionProvider"]
    assert E.choose_providers("cuda", gpu) == [CUDA, "CPUExecutionProvider"]
    assert E.choose_providers("cuda:1", gpu) == [("CUDAExecutionProvider", {"device_id": 1}), "CPUExecutionProvider"]
    assert E.choose_providers("auto", cpu_only) == ["CPUExecutionProvider"]  # the fallback
    with pytest.raises(NetError) as err:
        E.choose_providers("cuda", cpu_only)
    msg = str(err.value)
    assert "no CUDAExecutionProvider" in msg and "azgo[gpu]" in msg and "AzureExecutionProvider" in msg
    for bad in ("gpu", "cuda:x", "cpu:0", ""):
        with pytest.raises(ValueError, match="auto, cpu, cuda or cuda:N"):
            E.parse_device(bad)
    with pytest.raises(ValueError):
        E.EvalConfig(device="tpu")


def _spy_sessions(monkeypatch, available):
    """Fake onnxruntime's provider list; record the providers each real session is asked for."""
    asked = []
    real = ort.InferenceSession

    def session(path, options, providers):
        asked.append(providers)
        return real(path, options, providers=[p for p in providers if p == "CPUExecutionProvider"])
    monkeypatch.setattr(E.ort, "get_available_providers", lambda: list(available))
    monkeypatch.setattr(E.ort, "InferenceSession", session)
    return asked


def test_evaluator_asks_onnxruntime_for_the_chosen_providers(monkeypatch, capsys):
    asked = _spy_sessions(monkeypatch, ["CPUExecutionProvider"])
    ev = E.OnnxEvaluator(default_net_path(), E.EvalConfig(device="cpu"))
    assert asked[-1] == ["CPUExecutionProvider"] and ev.provider == "CPUExecutionProvider" and not ev.on_gpu
    assert capsys.readouterr().err == ""  # an explicit cpu is not announced
    monkeypatch.setattr(E, "_ANNOUNCED", set())
    ev = E.OnnxEvaluator(default_net_path(), E.EvalConfig(device="auto"))
    E.OnnxEvaluator(default_net_path(), E.EvalConfig(device="auto"))
    assert asked[-1] == ["CPUExecutionProvider"] and ev.provider == "CPUExecutionProvider"
    err = capsys.readouterr().err
    assert err.count("azgo: network on onnxruntime CPUExecutionProvider (--device auto") == 1  # once
    with pytest.raises(NetError, match="no CUDAExecutionProvider"):
        E.OnnxEvaluator(default_net_path(), E.EvalConfig(device="cuda"))


def test_cuda_provider_that_cannot_start(monkeypatch, capsys):
    """onnxruntime-gpu installed but no GPU: the session runs on the CPU; auto says so, cuda refuses."""
    asked = _spy_sessions(monkeypatch, ["CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.setattr(E, "_ANNOUNCED", set())
    ev = E.OnnxEvaluator(default_net_path(), E.EvalConfig(device="auto"))
    assert asked[-1] == [CUDA, "CPUExecutionProvider"] and ev.provider == "CPUExecutionProvider"
    assert "CUDA could not start" in capsys.readouterr().err
    with pytest.raises(NetError, match="could not start it"):
        E.OnnxEvaluator(default_net_path(), E.EvalConfig(device="cuda:0"))
    assert asked[-1] == [CUDA, "CPUExecutionProvider"]


def test_gtp_device_options(monkeypatch):
    from azgo.gtp.cli import make_engine
    from azgo.gtp.config import EngineConfig
    runner = CliRunner()
    res = runner.invoke(main, ["genmove", "--size", "9", "--visits", "4", "--device", "cuda"])
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        assert res.exit_code == 1 and "no CUDAExecutionProvider" in res.output and "azgo[gpu]" in res.output
    res = runner.invoke(main, ["genmove", "--size", "9", "--visits", "4", "--device", "cuda:one"])
    assert res.exit_code == 2 and "use auto, cpu, cuda or cuda:N" in res.output
    res = runner.invoke(main, ["genmove", "--size", "9", "--visits", "4", "--device", "cpu"])
    assert res.exit_code == 0 and res.output.strip()
    with pytest.raises(ValueError):
        EngineConfig(device="gpu")
    # the search batches gpu_batch_size leaves per call when the network runs on CUDA
    assert make_engine(EngineConfig(device="auto", batch_size=8)).search_config.batch_size == 8
    monkeypatch.setattr(E.OnnxEvaluator, "on_gpu", property(lambda self: True))
    engine = make_engine(EngineConfig(device="auto", batch_size=8, gpu_batch_size=24))
    assert engine.search_config.batch_size == 24


def test_selfplay_batches_more_games_when_the_network_runs_on_cuda(monkeypatch):
    from azgo.training.selfplay import SelfPlayConfig
    from azgo.training.workers import GPU_CONCURRENT_GAMES, default_concurrent_games
    monkeypatch.setattr(E.ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert [default_concurrent_games(d) for d in ("auto", "cpu", "cuda")] == [SelfPlayConfig.concurrent_games] * 3
    monkeypatch.setattr(E.ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert [default_concurrent_games(d) for d in ("auto", "cpu", "cuda:1")] == \
        [GPU_CONCURRENT_GAMES, SelfPlayConfig.concurrent_games, GPU_CONCURRENT_GAMES]


def test_selfplay_device_cuda_without_gpu_fails_clearly(tmp_path):
    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime has CUDA")
    res = CliRunner().invoke(main, ["selfplay", "--net", str(default_net_path()), "--out", str(tmp_path / "g"),
                                    "--games", "1", "--size", "7", "--device", "cuda", "--no-progress"])
    assert res.exit_code == 1 and "worker 0: device 'cuda'" in res.output and "azgo[gpu]" in res.output
    assert not list((tmp_path / "g").glob("*.sgf"))


# ----------------------------------------------------------------------------------- training

def _games(folder: Path, n: int = 6) -> Path:
    import random

    from azgo.engine.game import Game
    from azgo.engine.scoring import area_score, result_string
    from azgo.engine.sgf import record_from_game, write_sgf
    folder.mkdir()
    for s in range(n):
        rng, g = random.Random(s), Game(7, 7.5)
        while g.move_number < 20:
            pts = [m for m in g.board.legal_moves() if m != 49]
            g.play(rng.choice(pts) if pts else 49)
        g.play(49)
        g.play(49)
        (folder / f"g{s}.sgf").write_bytes(write_sgf(record_from_game(g, result=result_string(area_score(g.board, 7.5)))))
    return folder


def _train(*args):
    return CliRunner().invoke(main, ["train", *args, "--net", "b2c16", "--batch-size", "16", "--threads", "1",
                                     "--no-progress", "--no-tensorboard", "--no-cache"])


def test_train_device_cpu_and_a_clear_cuda_error(tmp_path):
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    try:
        data = _games(tmp_path / "games")
        res = _train(str(data), "--out", str(tmp_path / "cpu"), "--steps", "2", "--device", "cpu")
        assert res.exit_code == 0, res.output
        from azgo.training import train as T
        ckpt = T.load_checkpoint(tmp_path / "cpu" / "checkpoint.pt")
        assert ckpt["step"] == 2 and ckpt["args"]["device"] == "cpu" and ckpt["training"]["device"] == "cpu"
        assert "scaler" not in ckpt  # mixed precision (and its GradScaler) only on CUDA
        assert all(t.device.type == "cpu" for t in ckpt["model"].values())
        # resuming takes the device given now, not the recorded one
        res = _train("--out", str(tmp_path / "cpu"), "--resume", "--steps", "3", "--device", "auto")
        assert res.exit_code == 0, res.output
        assert T.load_checkpoint(tmp_path / "cpu" / "checkpoint.pt")["args"]["device"] == "auto"
        if not torch.cuda.is_available():
            res = _train(str(data), "--out", str(tmp_path / "gpu"), "--steps", "2", "--device", "cuda")
            assert res.exit_code == 1
            assert "--device cuda: torch sees no CUDA GPU" in res.output and "--device cpu" in res.output
            assert not (tmp_path / "gpu").exists()  # nothing written
        res = _train(str(data), "--out", str(tmp_path / "bad"), "--steps", "2", "--device", "gpu0")
        assert res.exit_code == 1 and "unknown device 'gpu0'" in res.output
    finally:
        torch.set_num_threads(threads)


def test_loop_passes_device_to_train_and_keeps_gating_on_cpu(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from azgo.gtp import match as match_mod
    from azgo.training import loop as loop_mod
    from azgo.training.selfplay import SelfPlayConfig
    cfg = loop_mod.LoopConfig(net="b2c16", selfplay=SelfPlayConfig(size=7), device="cuda:1", gate_games=2)
    lp = loop_mod.Loop(str(tmp_path / "loop"), cfg, log=lambda m: None)
    lp.init()
    calls = []
    monkeypatch.setattr(loop_mod, "run_child", calls.append)
    lp.train(1)
    assert calls[0][calls[0].index("--device") + 1] == "cuda:1"
    engines = []

    def fake_match(a, b, games, size, komi, **kw):
        engines.extend([a, b])
        return match_mod.MatchSummary(games, 0, games, 0, "gen1", "gen0")
    monkeypatch.setattr(match_mod, "run_match", fake_match)
    os.link(lp.net_path(0), lp.net_path(1))
    lp.gate(1)
    assert all(e.endswith("--device cpu") for e in engines), engines
    res = CliRunner().invoke(main, ["loop", "--dir", str(tmp_path / "x"), "--device", "tpu"])
    assert res.exit_code == 2 and "unknown device 'tpu'" in res.output
