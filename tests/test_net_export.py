"""AzNet -> ONNX export: ORT/torch parity at 9/13/19, metadata, net card, masking exactness."""

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from azgo.engine import planes as P  # noqa: E402
from azgo.training import export as E  # noqa: E402
from azgo.training.model import (  # noqa: E402
    NET_SIZES,
    AzNet,
    build_model,
    count_parameters,
    randomize_batchnorm,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A b2c16 net with random BN statistics (so every layer matters), exported once."""
    model = build_model("b2c16", seed=3)
    randomize_batchnorm(model, seed=4)
    model.eval()
    path = E.export_onnx(model, tmp_path_factory.mktemp("net") / "tiny.onnx",
                         provenance={"method": "test"})
    return model, path


def test_parity_9_13_19(tiny):
    model, path = tiny
    report = E.check_parity(model, path, sizes=(9, 13, 19), atol=1e-4)
    assert set(report) == {f"{n}/{o}" for n in (9, 13, 19) for o in ("policy", "value", "ownership", "score")}
    assert max(report.values()) < 1e-4


def test_parity_detects_a_different_model(tiny):
    model, path = tiny
    other = build_model("b2c16", seed=99)
    randomize_batchnorm(other, seed=5)
    with pytest.raises(E.ExportError, match="parity failed"):
        E.check_parity(other.eval(), path, sizes=(9,))


def test_metadata_and_dynamic_axes(tiny):
    _, path = tiny
    meta = E.read_metadata(path)
    assert meta["azgo_format"] == "1"
    assert meta["azgo_feature_version"] == str(P.FEATURE_VERSION)
    assert meta["azgo_net"] == "b2c16"
    assert meta["azgo_heads"] == "policy,value,ownership,score"
    assert (meta["azgo_min_size"], meta["azgo_max_size"]) == ("7", "19")
    prov = json.loads(meta["azgo_provenance"])
    assert prov["method"] == "test" and prov["opset"] >= 17 and prov["torch"] == torch.__version__
    proto = onnx.load(str(path))
    assert proto.opset_import[0].version >= 17
    (inp,) = proto.graph.input
    assert inp.name == "planes"
    dims = inp.type.tensor_type.shape.dim
    assert dims[1].dim_value == 26
    assert [dims[i].dim_param for i in (0, 2, 3)] == ["batch", "height", "width"]
    assert [o.name for o in proto.graph.output] == ["policy", "value", "ownership", "score"]


def test_output_shapes_and_ranges(tiny):
    import onnxruntime as ort

    _, path = tiny
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = E.random_planes(2, 13, np.random.default_rng(0))
    pol, val, own, score = sess.run(None, {"planes": x})
    assert pol.shape == (2, 170) and val.shape == (2,) and own.shape == (2, 169) and score.shape == (2,)
    assert np.all(np.abs(val) <= 1) and np.all(np.abs(own) <= 1)


def test_card_written(tiny):
    model, path = tiny
    card_file = E.write_card(path, model, training="unit test", strength="untrained")
    assert card_file == path.with_suffix(".json")
    card = json.loads(card_file.read_text())
    assert card["net"] == "b2c16" and card["feature_version"] == P.FEATURE_VERSION
    assert card["params"] == count_parameters(model)
    assert card["file_size_bytes"] == path.stat().st_size
    assert card["architecture"]["blocks"] == 2 and card["architecture"]["channels"] == 16
    assert card["strength"] == "untrained" and card["training"] == "unit test"


def test_cli_random_export_says_untrained(tmp_path):
    out = tmp_path / "rand.onnx"
    assert E.main(["--random", "--net", "b2c16", "--seed", "1", "--out", str(out)]) == 0
    card = json.loads(out.with_suffix(".json").read_text())
    assert card["strength"] == "untrained"
    assert "UNTRAINED" in card["training"]
    assert card["provenance"]["seed"] == 1
    assert card["onnx_parity_max_abs_diff"] < 1e-4


def test_padding_is_exact():
    """A 9x9 board padded into a 19x19 tensor gives the same outputs as the bare 9x9 board."""
    model = build_model("b2c16", seed=0)
    randomize_batchnorm(model, seed=1)
    model.eval()
    small = torch.from_numpy(E.random_planes(2, 9, np.random.default_rng(2)))
    big = torch.zeros(2, 26, 19, 19)
    big[:, :, :9, :9] = small
    with torch.no_grad():
        ps, vs, os_, ss = model(small)
        pb, vb, ob, sb = model(big)
    grid = pb[:, :361].reshape(2, 19, 19)
    torch.testing.assert_close(grid[:, :9, :9].reshape(2, 81), ps[:, :81], atol=1e-5, rtol=0)
    torch.testing.assert_close(pb[:, 361], ps[:, 81], atol=1e-5, rtol=0)
    assert torch.all(grid[:, 9:, :] < -1000) and torch.all(grid[:, :, 9:] < -1000)
    torch.testing.assert_close(vb, vs, atol=1e-5, rtol=0)
    torch.testing.assert_close(sb, ss, atol=1e-4, rtol=0)
    own = ob.reshape(2, 19, 19)
    torch.testing.assert_close(own[:, :9, :9].reshape(2, 81), os_, atol=1e-5, rtol=0)
    assert torch.all(own[:, 9:, :] == 0)


def test_training_batchnorm_ignores_padding():
    model = build_model("b2c16", seed=0).train()
    small = torch.from_numpy(E.random_planes(4, 9, np.random.default_rng(3)))
    big = torch.zeros(4, 26, 13, 13)
    big[:, :, :9, :9] = small
    ps, vs, _, _ = model(small)
    pb, vb, _, _ = model(big)
    torch.testing.assert_close(pb[:, :169].reshape(4, 13, 13)[:, :9, :9].reshape(4, 81), ps[:, :81],
                               atol=1e-4, rtol=0)
    torch.testing.assert_close(vb, vs, atol=1e-5, rtol=0)
    (pb.logsumexp(1).sum() + vb.sum()).backward()  # trainable end to end


def test_named_sizes():
    for name in ("b2c16", "b6c64", "b10c128"):
        assert name in NET_SIZES
    assert NET_SIZES["b6c64"].blocks == 6 and NET_SIZES["b6c64"].channels == 64
    assert len(NET_SIZES["b6c64"].gpool_blocks) == 2
    with pytest.raises(ValueError, match="unknown net size"):
        AzNet("b99c1")


def test_packaged_default_net_matches_its_card():
    """nets/default.onnx is a b6c64 made by the project's own pipeline, and its card says how."""
    import hashlib

    path = REPO / "nets" / "default.onnx"
    card = json.loads(path.with_suffix(".json").read_text())
    assert card["net"] == "b6c64" and card["strength"]
    stages = card["pipeline"]["stages"]  # every stage ran one of the project's own tools, and took time
    assert card["pipeline"]["hours"] == pytest.approx(sum(st["hours"] for st in stages), abs=0.05)
    assert all(st["command"].startswith(("azgo ", "python3 scripts/")) and st["hours"] > 0 for st in stages)
    assert any(st["command"].startswith("azgo loop") for st in stages)  # self-play is part of its making
    assert card["training"]["games"] > 0
    assert card["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert card["params"] == count_parameters(build_model("b6c64"))
    assert E.read_metadata(path)["azgo_feature_version"] == str(P.FEATURE_VERSION)


def test_checkpoint_export(tmp_path):
    model = build_model("b2c16", seed=7)
    randomize_batchnorm(model, seed=8)
    ckpt = tmp_path / "step100.pt"
    torch.save({"net": "b2c16", "model": model.state_dict(), "training": {"steps": 100},
                "strength": "not measured"}, ckpt)
    out = tmp_path / "trained.onnx"
    assert E.main(["--checkpoint", str(ckpt), "--out", str(out)]) == 0
    card = json.loads(out.with_suffix(".json").read_text())
    assert card["training"] == {"steps": 100} and card["provenance"]["checkpoint"] == "step100.pt"
    E.check_parity(model.eval(), out, sizes=(9,))
