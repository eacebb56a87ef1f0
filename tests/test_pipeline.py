"""CI smoke test of the whole training chain: scripts/smoke_pipeline.sh on a tiny net and 7x7 games."""

import glob
import os
import subprocess
import sys

import pytest

from azgo.engine.sgf import load_sgf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_smoke_pipeline(tmp_path):
    pytest.importorskip("torch")
    from azgo.nets.evaluator import OnnxEvaluator
    out = tmp_path / "smoke"
    env = dict(os.environ, PYTHON=sys.executable)
    res = subprocess.run(["bash", os.path.join(ROOT, "scripts", "smoke_pipeline.sh"), str(out)],
                         capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    games = glob.glob(str(out / "games" / "*.sgf"))
    assert len(games) == 8
    for path in games:
        rec = load_sgf(path)
        assert rec.size == 7 and rec.root_props["AZF"] == "1"
        rec.to_game()
    nets = sorted(glob.glob(str(out / "nets" / "*.onnx")))
    assert [os.path.basename(n) for n in nets] == ["gen0.onnx", "gen1.onnx"]
    card = (out / "nets" / "gen1.json").read_text()
    assert "azgo train" in card and "steps" in card
    ev = OnnxEvaluator(nets[1])
    assert ev.net_name == "b2c16"
    assert len(glob.glob(str(out / "match" / "*.sgf"))) == 2
    assert "win rate of gen1" in res.stdout
