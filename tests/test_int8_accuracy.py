"""The int8 networks agree with their fp32 sources on real positions, on the CPU that runs the tests.

onnxruntime's uint8 x int8 kernel on x86 CPUs without VNNI (AVX2 only) adds pairs of products in 16
bits and saturates with full-range int8 weights; the int8 files made that way agreed with fp32 on the
top move in only 0.68 of real 19x19 positions on such a CPU (value MAE 0.27) while passing on a VNNI
CPU. ``quantize_int8`` now uses 7-bit weights (``REDUCE_RANGE``); these tests fail on a non-VNNI CPU
if a shipped int8 file or a fresh quantization loses the network again.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from azgo.engine.sgf import load_sgf
from azgo.nets import registry
from azgo.training.calibration import sample_positions

pytest.importorskip("onnx")

DATA = Path(__file__).parent / "data" / "int8"
NETS = Path(registry.__file__).parent
# one game against GNU Go level 10 per size (docs/strength), positions drawn over all their moves
GAMES = {9: DATA / "gnugo9.sgf", 13: DATA / "gnugo13.sgf", 19: DATA / "gnugo19.sgf"}
MIN_TOP1 = 0.8    # 7-bit weights: 0.89-0.94 on calibration positions; full range on AVX2: 0.68
MAX_VALUE_MAE = 0.1  # 7-bit: 0.02-0.05; full range on AVX2: 0.27


def _positions(size: int, n: int = 96) -> np.ndarray:
    return sample_positions([load_sgf(str(GAMES[size]))], n, seed=3)


def _shipped() -> list[tuple[str, int]]:
    """(fp32 file, a board size it plays) for every network in the registry."""
    entries = json.loads((NETS / "registry.json").read_text())["networks"]
    out = []
    for e in entries:
        sizes = range(e["sizes"][0], e["sizes"][1] + 1)
        size = max(s for s in GAMES if s in sizes)
        out.append((e["file"], size))
    return out


@pytest.mark.parametrize("name,size", _shipped())
def test_shipped_int8_agrees_with_fp32(name, size):
    from azgo.nets.quantize import compare_int8, int8_path_for
    fp32 = NETS / name
    int8 = int8_path_for(fp32)
    assert int8.is_file(), f"{int8.name} is not shipped beside {name}"
    report = compare_int8(fp32, int8, _positions(size))
    assert report["top1_agreement"] >= MIN_TOP1, report
    assert report["value_mae"] <= MAX_VALUE_MAE, report
    meta = json.loads(_metadata(int8)["azgo_calibration"])
    assert "reduce_range" in meta["method"], meta


def test_fresh_quantization_agrees_with_fp32(tmp_path):
    """Quantizing the shipped 19x19 network again, as its int8 file was made, keeps it."""
    from azgo.nets.quantize import compare_int8, int8_path_for, quantize_int8
    fp32 = tmp_path / "net.onnx"
    fp32.write_bytes((NETS / "large19.onnx").read_bytes())
    # the layers the shipped int8 file keeps in fp32 (a network whose value drifts with every layer 7-bit, as
    # mx23's did, ships with some in fp32)
    keep = json.loads(_metadata(int8_path_for(NETS / "large19.onnx"))["azgo_calibration"]).get("fp32_nodes", [])
    calib = sample_positions([load_sgf(str(GAMES[19]))], 64, seed=11)
    q = quantize_int8(fp32, calib, calibration_note="test", keep_fp32=keep)
    report = compare_int8(fp32, q, _positions(19))
    assert report["top1_agreement"] >= MIN_TOP1, report
    assert report["value_mae"] <= MAX_VALUE_MAE, report


def _metadata(path: Path) -> dict[str, str]:
    import onnx
    return {p.key: p.value for p in onnx.load(str(path)).metadata_props}


def test_int8_saturates_reads_the_cpu_flags():
    from azgo.nets.evaluator import int8_saturates
    assert int8_saturates("processor: 0\nflags\t\t: fpu sse2 avx avx2 fma\n") is True
    assert int8_saturates("flags\t\t: fpu avx2 avx512f avx512_vnni\n") is False
    assert int8_saturates("flags\t\t: fpu avx2 avx_vnni\n") is False
    assert int8_saturates("no flags here\n") is False


def test_full_range_int8_falls_back_to_fp32_where_it_saturates(tmp_path, monkeypatch, capsys):
    """An int8 file made before 7-bit weights: --precision auto plays the fp32 network on a CPU without
    VNNI (and the int8 file elsewhere); an explicit int8 request keeps it and warns."""
    import azgo.nets.evaluator as ev
    import azgo.nets.quantize as q
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    fp32 = tmp_path / "old.onnx"
    fp32.write_bytes((NETS / "large19.onnx").read_bytes())
    monkeypatch.setattr(q, "REDUCE_RANGE", False)
    int8 = q.quantize_int8(fp32, _positions(19, 32), calibration_note="full range, as before")
    assert ev.int8_full_range(_metadata(int8))
    monkeypatch.setattr(ev, "int8_saturates", lambda: True)
    auto = OnnxEvaluator(fp32, EvalConfig(precision="auto"))
    assert auto.path == fp32 and auto.precision == "fp32"
    assert "playing old.onnx in fp32" in capsys.readouterr().err
    forced = OnnxEvaluator(fp32, EvalConfig(precision="int8"))
    assert forced.path == int8 and forced.precision == "int8"
    assert "warning: old.int8.onnx has full-range int8 weights" in capsys.readouterr().err
    monkeypatch.setattr(ev, "int8_saturates", lambda: False)  # a VNNI CPU: the int8 file as before
    assert OnnxEvaluator(fp32, EvalConfig(precision="auto")).path == int8
    # a 7-bit file is played in int8 everywhere
    monkeypatch.setattr(q, "REDUCE_RANGE", True)
    q.quantize_int8(fp32, _positions(19, 32))
    monkeypatch.setattr(ev, "int8_saturates", lambda: True)
    seven = OnnxEvaluator(fp32, EvalConfig(precision="auto"))
    assert seven.path == int8 and seven.precision == "int8" and not ev.int8_full_range(seven.metadata)


def test_precision_vnni_takes_the_8bit_copy_where_the_cpu_has_vnni_and_only_for_its_own_network(tmp_path, monkeypatch,
                                                                                             capsys):
    """``net.int8-vnni.onnx`` (8-bit weights) beside ``net.int8.onnx``: precision "vnni" (azgo analysis's default)
    takes it on a VNNI CPU, the fp32 network elsewhere; "auto" and "int8" (play) keep the 7-bit copy; a VNNI copy
    made from another network is passed over with a message; alone on a CPU without VNNI, "vnni" plays fp32.
    The promotion helper copies both files and removes a stale one."""
    import azgo.nets.evaluator as ev
    import azgo.nets.quantize as q
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    fp32 = tmp_path / "net.onnx"
    fp32.write_bytes((NETS / "large9.onnx").read_bytes())
    x = _positions(9, 32)
    seven = q.quantize_int8(fp32, x)
    vnni = q.quantize_int8(fp32, x, q.int8_vnni_path_for(fp32), full_range=True, percentile=q.ANALYSIS_PERCENTILE)
    assert vnni.name == "net.int8-vnni.onnx" and ev.int8_full_range(_metadata(vnni))
    monkeypatch.setattr(ev, "int8_saturates", lambda: False)
    assert OnnxEvaluator(fp32, EvalConfig(precision="vnni")).path == vnni
    for precision in ("auto", "int8"):
        assert OnnxEvaluator(fp32, EvalConfig(precision=precision)).path == seven
    monkeypatch.setattr(ev, "int8_saturates", lambda: True)  # no VNNI: analysis in fp32, play in 7-bit int8
    exact = OnnxEvaluator(fp32, EvalConfig(precision="vnni"))
    assert exact.path == fp32 and exact.precision == "fp32"
    assert OnnxEvaluator(fp32, EvalConfig(precision="auto")).path == seven
    # another network's VNNI copy (a newer net.onnx beside an old copy): the 7-bit copy, or fp32
    monkeypatch.setattr(ev, "int8_saturates", lambda: False)
    other = tmp_path / "other.onnx"
    other.write_bytes((NETS / "default.onnx").read_bytes())
    q.int8_vnni_path_for(other).write_bytes(vnni.read_bytes())
    capsys.readouterr()
    e = OnnxEvaluator(other, EvalConfig(precision="vnni"))
    assert e.path == other and e.precision == "fp32"
    assert "other.int8-vnni.onnx was not made from other.onnx" in capsys.readouterr().err
    # alone beside the network on a CPU without VNNI: fp32
    seven.unlink()
    monkeypatch.setattr(ev, "int8_saturates", lambda: True)
    assert OnnxEvaluator(fp32, EvalConfig(precision="vnni")).precision == "fp32"
    monkeypatch.setattr(ev, "int8_saturates", lambda: False)
    assert OnnxEvaluator(fp32, EvalConfig(precision="vnni")).path == vnni
    # promotion: both copies travel with the network, and a copy the source lacks is removed at the target
    q.quantize_int8(fp32, x)
    dst = tmp_path / "reg" / "large9.onnx"
    dst.parent.mkdir()
    assert {p.name for p in q.copy_int8_copies(fp32, dst)} == {"large9.int8.onnx", "large9.int8-vnni.onnx"}
    assert (dst.parent / "large9.int8-vnni.onnx").read_bytes() == vnni.read_bytes()
    vnni.unlink()
    assert [p.name for p in q.copy_int8_copies(fp32, dst)] == ["large9.int8.onnx"]
    assert not (dst.parent / "large9.int8-vnni.onnx").exists()


def test_azgo_quantize_from_games(tmp_path):
    """``azgo quantize NET --games DIR``: the int8 copy calibrated on positions of real games, with its report."""
    import glob
    import subprocess
    import sys
    games = sorted(glob.glob(str(Path(__file__).resolve().parent.parent / "docs" / "strength" / "gnugo9" / "*.sgf")))[:20]
    folder = tmp_path / "games"
    folder.mkdir()
    for g in games:
        (folder / Path(g).name).write_bytes(Path(g).read_bytes())
    out = subprocess.run([sys.executable, "-m", "azgo.gtp.cli", "quantize", str(NETS / "large9.onnx"), "--games",
                          str(folder), "--size", "9", "--positions", "64", "--out", str(tmp_path / "q.int8.onnx")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "top-1 agreement" in out.stdout and "score lead MAE" in out.stdout
    assert (tmp_path / "q.int8.onnx").exists()
    pct = subprocess.run([sys.executable, "-m", "azgo.gtp.cli", "quantize", str(NETS / "large9.onnx"), "--games",
                          str(folder), "--size", "9", "--positions", "64", "--percentile", "99.999",
                          "--out", str(tmp_path / "p.int8.onnx")], capture_output=True, text=True, timeout=300)
    assert pct.returncode == 0, pct.stderr[-2000:]
    import json
    import onnx
    meta = {p.key: p.value for p in onnx.load(str(tmp_path / "p.int8.onnx")).metadata_props}
    method = json.loads(meta["azgo_calibration"])["method"]
    assert "Percentile 99.999" in method and "reduce_range" in method  # 7-bit weights: int8 on every CPU
    bad = subprocess.run([sys.executable, "-m", "azgo.gtp.cli", "quantize", str(NETS / "large9.onnx")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--games" in bad.stderr


def test_emulated_int8_is_the_int8_computation_unfused(tmp_path):
    """compare_int8(emulate=True) runs the QDQ graph unfused: for a 7-bit copy (exact in int8 on every CPU)
    it gives the fused run's figures; an 8-bit copy emulated is close to fp32 on any CPU (the figures that a
    VNNI CPU gives, measured here on one without)."""
    import azgo.nets.quantize as q
    x = _positions(9, 48)
    fp32 = tmp_path / "net.onnx"
    fp32.write_bytes((NETS / "large9.onnx").read_bytes())
    seven = q.quantize_int8(fp32, x[:32])
    fused, emulated = q.compare_int8(fp32, seven, x[32:]), q.compare_int8(fp32, seven, x[32:], emulate=True)
    assert abs(fused["value_mae"] - emulated["value_mae"]) < 0.003
    assert abs(fused["lead_mae"] - emulated["lead_mae"]) < 0.05
    assert emulated["value_mae"] > 0  # it did run the quantized graph, not the fp32 one
    eight = q.quantize_int8(fp32, x[:32], q.int8_vnni_path_for(fp32), full_range=True,
                            percentile=q.ANALYSIS_PERCENTILE)
    acc = q.compare_int8(fp32, eight, x[32:], emulate=True)
    assert 0 < acc["value_mae"] < 0.05 and acc["top1_agreement"] >= 0.8
