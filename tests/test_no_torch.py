"""Play-time code (azgo.engine, azgo.nets) must run without importing torch."""

import subprocess
import sys
import textwrap

import pytest

CODE = textwrap.dedent("""
    import sys
    import numpy as np
    import azgo.engine, azgo.nets
    from azgo.engine import planes as P, symmetry
    from azgo.nets import registry
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    ev = OnnxEvaluator(registry.default_net_path(), EvalConfig(symmetry="random", cache_size=8))
    rng = np.random.default_rng(0)
    x = np.zeros((1, P.NUM_PLANES, 9, 9), np.float32)
    x[0, :P.KO_PLANE] = rng.integers(0, 2, (P.KO_PLANE, 9, 9))
    x[0, P.ON_BOARD_PLANE] = 1.0
    legal = np.ones((1, 82), bool)
    out = ev.evaluate(x, legal, keys=[123])
    assert abs(float(out.policy.sum()) - 1.0) < 1e-5 and -1.0 <= float(out.value[0]) <= 1.0
    bad = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
    assert not bad, bad
    print("ok")
""")


def test_play_time_imports_do_not_pull_in_torch():
    res = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


QUANTIZE = textwrap.dedent("""
    import sys, tempfile
    from pathlib import Path
    import numpy as np
    from azgo.nets import registry
    from azgo.nets.quantize import compare_int8, quantize_int8
    x = np.zeros((4, 26, 9, 9), np.float32)
    x[:, :8] = np.random.default_rng(0).integers(0, 2, (4, 8, 9, 9))
    x[:, 24] = 1.0
    with tempfile.TemporaryDirectory() as tmp:
        q = quantize_int8(registry.default_net_path(), x, Path(tmp) / "d.int8.onnx")
        compare_int8(registry.default_net_path(), q, x)
    bad = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
    assert not bad, bad[:5]
    print("ok")
""")


def test_int8_quantization_does_not_pull_in_torch():
    """onnxruntime.quantization's quant_pre_process would import torch via onnxruntime.tools."""
    pytest.importorskip("onnx")
    res = subprocess.run([sys.executable, "-c", QUANTIZE], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("ok")
