"""AzNet's komi inputs: the score head adds the side to move's komi as the game does, the value logit gets a
learned komi weight; old state dicts load with them off; the flag survives checkpoints and ONNX export."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from azgo.engine import planes as P  # noqa: E402
from azgo.training import export as E  # noqa: E402
from azgo.training.losses import make_optimizer  # noqa: E402
from azgo.training.model import build_model, randomize_batchnorm  # noqa: E402
from azgo.training.train import TrainConfig  # noqa: E402


def _planes(komi_adv: float, size: int = 9, batch: int = 4) -> torch.Tensor:
    x = E.random_planes(batch, size, np.random.default_rng(5))
    x[:, P.KOMI_PLANE] = komi_adv / P.KOMI_SCALE
    return torch.from_numpy(x)


def _komi_blind(model) -> None:
    """The trunk no longer reads the komi plane: only the direct komi inputs can."""
    with torch.no_grad():
        model.stem.conv.weight[:, P.KOMI_PLANE] = 0.0


def test_score_moves_point_for_point_with_komi_and_value_by_its_weight():
    model = build_model("b2c16", seed=1)
    randomize_batchnorm(model, seed=2)
    _komi_blind(model)
    model.set_komi_inputs(True)
    with torch.no_grad():
        model.value_komi.fill_(0.05)
    model.eval()
    with torch.no_grad():
        _, v0, _, s0 = model(_planes(-7.5))
        _, v1, _, s1 = model(_planes(12.5))
    np.testing.assert_allclose((s1 - s0).numpy(), 20.0, atol=1e-3)
    np.testing.assert_allclose((torch.atanh(v1) - torch.atanh(v0)).numpy(), 0.05 * 20.0, atol=1e-3)


def test_off_the_komi_plane_alone_decides_and_old_state_dicts_load_off():
    model = build_model("b2c16", seed=1)
    _komi_blind(model)
    model.eval()
    with torch.no_grad():
        _, _, _, s0 = model(_planes(-7.5))
        _, _, _, s1 = model(_planes(12.5))
    np.testing.assert_allclose((s1 - s0).numpy(), 0.0, atol=1e-5)  # komi-blind trunk, komi inputs off
    old = {k: v for k, v in model.state_dict().items() if k not in ("komi_inputs", "value_komi")}
    fresh = build_model("b2c16", seed=9)
    fresh.set_komi_inputs(True)
    fresh.load_state_dict(old)
    assert not fresh._komi_on and float(fresh.komi_inputs) == 0.0


def test_optimiser_trains_the_komi_weight_only_when_on():
    model = build_model("b2c16", seed=1)
    count = sum(len(g["params"]) for g in make_optimizer(model, TrainConfig()).param_groups)
    model.set_komi_inputs(True)
    assert sum(len(g["params"]) for g in make_optimizer(model, TrainConfig()).param_groups) == count + 1


def test_flag_survives_a_state_dict_and_the_onnx_export(tmp_path):
    model = build_model("b2c16", seed=1)
    randomize_batchnorm(model, seed=2)
    model.set_komi_inputs(True)
    with torch.no_grad():
        model.value_komi.fill_(0.03)
    copy = build_model("b2c16", seed=7)
    copy.load_state_dict(model.state_dict())
    assert copy._komi_on and float(copy.value_komi.detach()) == pytest.approx(0.03)
    path = E.export_onnx(copy.eval(), tmp_path / "k.onnx", provenance={"method": "test"})
    assert max(E.check_parity(copy, path, sizes=(9, 19), atol=1e-4).values()) < 1e-4
    import onnx
    off = E.export_onnx(build_model("b2c16", seed=1).eval(), tmp_path / "off.onnx", provenance={"method": "test"})
    weights = {p: {i.name for i in onnx.load(str(p)).graph.initializer} for p in (path, off)}
    assert "value_komi" in weights[path] and "value_komi" not in weights[off]  # the graph reads the komi only when on
