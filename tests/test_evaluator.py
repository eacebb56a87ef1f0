"""OnnxEvaluator: probabilities, symmetries, cache, int8, and the errors for unusable networks."""

import collections
import json
from pathlib import Path

import numpy as np
import pytest

from azgo.engine import planes as P
from azgo.engine import symmetry as sym
from azgo.nets import registry
from azgo.nets.registry import NetError
from azgo.nets.evaluator import EvalConfig, Evaluation, OnnxEvaluator, masked_softmax

DEFAULT = Path(__file__).resolve().parents[1] / "nets" / "default.onnx"


def make_planes(batch, n, seed=0):
    """Random but well-formed planes: disjoint stones, on-board plane ones, komi plane set."""
    rng = np.random.default_rng(seed)
    x = np.zeros((batch, P.NUM_PLANES, n, n), np.float32)
    for h in range(P.HISTORY):
        cell = rng.integers(0, 3, (batch, n, n))
        x[:, P.OWN_STONES + h] = cell == 1
        x[:, P.OPP_STONES + h] = cell == 2
    x[:, P.BLACK_TO_MOVE] = 1.0
    x[:, P.OWN_LIBERTIES + 2] = x[:, P.OWN_STONES]
    x[:, P.OPP_LIBERTIES + 2] = x[:, P.OPP_STONES]
    x[:, P.ON_BOARD_PLANE] = 1.0
    x[:, P.KOMI_PLANE] = -7.5 / P.KOMI_SCALE
    return x


def make_legal(batch, n, seed=0, p_illegal=0.3):
    legal = np.random.default_rng(seed).random((batch, n * n + 1)) > p_illegal
    legal[:, -1] = True  # pass is always legal
    return legal


@pytest.fixture(scope="module")
def ev():
    return OnnxEvaluator(DEFAULT)


@pytest.mark.parametrize("n", [9, 13, 19])
def test_outputs_are_well_formed(ev, n):
    x, legal = make_planes(5, n), make_legal(5, n)
    out = ev.evaluate(x, legal)
    assert isinstance(out, Evaluation) and len(out) == 5
    assert out.policy.shape == (5, n * n + 1) and out.policy.dtype == np.float32
    np.testing.assert_allclose(out.policy.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(out.policy[~legal] == 0.0)
    assert np.all(out.policy[legal] > 0.0)
    assert out.value.shape == (5,) and np.all(np.abs(out.value) <= 1.0)
    assert out.ownership.shape == (5, n * n) and np.all(np.abs(out.ownership) <= 1.0)
    assert out.score.shape == (5,) and np.all(np.isfinite(out.score))
    assert ev.heads == ("policy", "value", "ownership", "score")
    assert ev.net_name == "b6c64" and ev.feature_version == P.FEATURE_VERSION


def test_masked_softmax_matches_reference():
    logits = np.random.default_rng(0).normal(size=(3, 10)).astype(np.float32)
    legal = np.ones((3, 10), bool)
    legal[0, :5] = False
    got = masked_softmax(logits, legal)
    for row, lg, lm in zip(got, logits, legal):
        ref = np.where(lm, np.exp(lg - lg[lm].max()), 0.0)
        np.testing.assert_allclose(row, ref / ref.sum(), rtol=1e-5)


def test_symmetry_average_is_mean_of_the_8(ev):
    n = 9
    x, legal = make_planes(3, n, seed=1), make_legal(3, n, seed=1)
    avg = OnnxEvaluator(DEFAULT, EvalConfig(symmetry="average")).evaluate(x, legal)
    pol, val, own, score = [], [], [], []
    for k in range(8):
        e = ev.evaluate(sym.apply_planes(x, k), sym.apply_policy(legal, k, n))
        inv = sym.invert(k)
        pol.append(sym.apply_policy(e.policy, inv, n))
        own.append(sym.apply_points(e.ownership, inv, n))
        val.append(e.value)
        score.append(e.score)
    np.testing.assert_allclose(avg.policy, np.mean(pol, axis=0), atol=1e-6)
    np.testing.assert_allclose(avg.value, np.mean(val, axis=0), atol=1e-6)
    np.testing.assert_allclose(avg.ownership, np.mean(own, axis=0), atol=1e-6)
    np.testing.assert_allclose(avg.score, np.mean(score, axis=0), atol=1e-4)
    np.testing.assert_allclose(avg.policy.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(avg.policy[~legal] == 0.0)
    # the random net is not symmetric, so averaging must actually change the numbers
    assert not np.allclose(avg.policy, pol[0], atol=1e-4)


def test_random_symmetry_gives_one_of_the_8_mapped_back(ev):
    n = 9
    x, legal = make_planes(1, n, seed=2), make_legal(1, n, seed=2)
    candidates = []
    for k in range(8):
        e = ev.evaluate(sym.apply_planes(x, k), sym.apply_policy(legal, k, n))
        candidates.append(sym.apply_policy(e.policy, sym.invert(k), n)[0])
    rnd = OnnxEvaluator(DEFAULT, EvalConfig(symmetry="random", seed=0))
    seen = set()
    for _ in range(24):
        p = rnd.evaluate(x, legal).policy[0]
        match = [k for k, c in enumerate(candidates) if np.allclose(p, c, atol=1e-6)]
        assert match, "random-symmetry policy is not any back-mapped symmetric evaluation"
        seen.add(match[0])
    assert len(seen) > 1


def test_cache_hit_returns_same_numbers_and_is_bounded():
    n = 9
    ev = OnnxEvaluator(DEFAULT, EvalConfig(cache_size=3, symmetry="random", seed=1))
    x, legal = make_planes(5, n, seed=3), make_legal(5, n, seed=3)
    first = ev.evaluate(x[:2], legal[:2], keys=[10, 11])
    assert ev.cache_info() == {"hits": 0, "misses": 2, "size": 2, "capacity": 3}
    again = ev.evaluate(x[:2], legal[:2], keys=[10, 11])
    assert ev.cache_info()["hits"] == 2 and ev.positions_evaluated == 2
    for a, b in [(first.policy, again.policy), (first.value, again.value),
                 (first.ownership, again.ownership), (first.score, again.score)]:
        np.testing.assert_array_equal(a, b)
    # mixed batch: one hit, two misses; capacity 3 evicts the least recently used key (11)
    ev.evaluate(x[[0, 2, 3]], legal[[0, 2, 3]], keys=[10, 12, 13])
    info = ev.cache_info()
    assert info["size"] == 3 and info["hits"] == 3 and info["misses"] == 4
    assert [ev.is_cached(k, n) for k in (10, 11, 12, 13)] == [True, False, True, True]
    ev.evaluate(x[4:5], legal[4:5], keys=[14])
    assert ev.cache_info()["size"] == 3
    # a different legal mask for a cached key is not served from the cache
    other = legal[3:4].copy()
    other[0, 0] = not other[0, 0]
    before = ev.positions_evaluated
    out = ev.evaluate(x[3:4], other, keys=[13])
    assert ev.positions_evaluated == before + 1
    assert (out.policy[0, 0] == 0.0) == (not other[0, 0])


def test_no_cache_without_keys_or_capacity():
    ev = OnnxEvaluator(DEFAULT, EvalConfig(cache_size=0))
    x, legal = make_planes(2, 9), make_legal(2, 9)
    ev.evaluate(x, legal, keys=[1, 2])
    ev.evaluate(x, legal, keys=[1, 2])
    assert ev.positions_evaluated == 4 and ev.cache_info()["size"] == 0


def test_errors_name_the_problem(tmp_path, ev):
    with pytest.raises(NetError, match="network file not found"):
        OnnxEvaluator(tmp_path / "nope.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"this is not a protobuf at all")
    with pytest.raises(NetError, match="not a loadable ONNX model"):
        OnnxEvaluator(junk)
    with pytest.raises(NetError, match="outside this network's range"):
        ev.evaluate(make_planes(1, 21), make_legal(1, 21))
    with pytest.raises(NetError, match="outside this network's range"):
        ev.evaluate(make_planes(1, 5), make_legal(1, 5))
    with pytest.raises(NetError, match="expects 26 input planes.*got 17"):
        ev.evaluate(make_planes(1, 9)[:, :17], make_legal(1, 9))
    with pytest.raises(ValueError, match="legal must have shape"):
        ev.evaluate(make_planes(1, 9), make_legal(1, 13))
    no_moves = np.zeros((1, 82), bool)
    with pytest.raises(ValueError, match="no legal move"):
        ev.evaluate(make_planes(1, 9), no_moves)
    lone = tmp_path / "lone.onnx"  # an fp32 network with no int8 model beside it
    lone.write_bytes(DEFAULT.read_bytes())
    with pytest.raises(NetError, match="no int8 model was found"):
        OnnxEvaluator(lone, EvalConfig(precision="int8"))
    with pytest.raises(ValueError, match="symmetry must be one of"):
        EvalConfig(symmetry="all")


def test_non_azgo_and_wrong_feature_version_refused(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["planes"], ["policy"])], "g",
        [helper.make_tensor_value_info("planes", TensorProto.FLOAT, [1, 82])],
        [helper.make_tensor_value_info("policy", TensorProto.FLOAT, [1, 82])])
    plain = tmp_path / "plain.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # loadable by any onnxruntime >= 1.17
    onnx.save(model, str(plain))
    with pytest.raises(NetError, match="not an azgo network"):
        OnnxEvaluator(plain)

    model = onnx.load(str(DEFAULT))
    for p in model.metadata_props:
        if p.key == "azgo_feature_version":
            p.value = str(P.FEATURE_VERSION + 41)
    old = tmp_path / "old.onnx"
    onnx.save(model, str(old))
    with pytest.raises(NetError) as info:
        OnnxEvaluator(old)
    assert str(info.value).endswith(f"network was trained on feature version {P.FEATURE_VERSION + 41}, "
                                    f"this azgo builds version {P.FEATURE_VERSION}")


def test_int8_quantization_and_accuracy(tmp_path):
    pytest.importorskip("onnx")
    from azgo.nets.quantize import compare_int8, int8_path_for, quantize_int8

    fp32 = tmp_path / "net.onnx"
    fp32.write_bytes(DEFAULT.read_bytes())
    q = quantize_int8(fp32, make_planes(16, 9, seed=5), calibration_note="random test planes")
    assert q == int8_path_for(fp32) == tmp_path / "net.int8.onnx"
    ev8 = OnnxEvaluator(fp32, EvalConfig(precision="int8"))  # finds the sibling
    assert ev8.path == q and ev8.metadata["azgo_precision"] == "int8"
    assert json.loads(ev8.metadata["azgo_calibration"])["positions"] == 16
    x, legal = make_planes(4, 9, seed=6), make_legal(4, 9, seed=6)
    out = ev8.evaluate(x, legal)
    np.testing.assert_allclose(out.policy.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(out.policy[~legal] == 0)
    report = compare_int8(fp32, q, make_planes(16, 9, seed=7))
    assert set(report) >= {"top1_agreement", "value_mae", "policy_max_abs"}
    assert 0.0 <= report["top1_agreement"] <= 1.0 and report["value_mae"] < 0.2
    with pytest.raises(NetError, match="use EvalConfig\\(precision='int8'\\)"):
        OnnxEvaluator(q)
    # "auto" takes the int8 sibling where there is one, the file as it is otherwise
    auto = OnnxEvaluator(fp32, EvalConfig(precision="auto"))
    assert auto.path == q and auto.precision == "int8"
    assert OnnxEvaluator(q, EvalConfig(precision="auto")).precision == "int8"
    lone = tmp_path / "lone.onnx"
    lone.write_bytes(DEFAULT.read_bytes())
    assert OnnxEvaluator(lone, EvalConfig(precision="auto")).precision == "fp32"


def test_packaged_network_has_its_int8_model_and_gtp_uses_it():
    from azgo.gtp.config import EngineConfig
    int8 = DEFAULT.with_name("default.int8.onnx")
    assert int8.is_file()
    ev = OnnxEvaluator(DEFAULT, EvalConfig(precision="auto"))
    assert ev.precision == "int8" and ev.path == int8
    meta = json.loads(ev.metadata["azgo_calibration"])
    assert meta["positions"] >= 500 and set(meta["board_sizes"]) >= {9, 19}
    assert EngineConfig().precision == "auto"


def test_registry():
    path = registry.default_net_path()
    # the packaged copy (the repository file itself in an editable install, a copy otherwise)
    assert path.name == "default.onnx" and path.read_bytes() == DEFAULT.read_bytes()
    assert registry.resolve_net(None) == path
    assert registry.resolve_net(str(DEFAULT)) == DEFAULT
    with pytest.raises(NetError, match="network file not found"):
        registry.resolve_net("/no/such/net.onnx")
    card = registry.load_card(path)
    assert card["net"] == "b6c64" and card["file"] == "default.onnx"
    assert registry.load_card("/no/such/net.onnx", missing_ok=True) is None
    with pytest.raises(NetError, match="no net card"):
        registry.load_card("/no/such/net.onnx")


def test_registry_by_board_size_and_gtp_switches_network(tmp_path, monkeypatch, capsys):
    import shutil
    from azgo.gtp.config import EngineConfig
    from azgo.gtp.engine import GtpEngine
    from azgo.gtp.protocol import parse as parse_command
    shutil.copy(DEFAULT, tmp_path / "default.onnx")
    shutil.copy(DEFAULT, tmp_path / "large.onnx")
    (tmp_path / "registry.json").write_text(json.dumps({"networks": [
        {"file": "default.onnx", "sizes": [7, 11]}, {"file": "large.onnx", "sizes": [12, 19]}]}))
    monkeypatch.setattr(registry, "_package_dir", lambda: tmp_path)
    assert registry.default_net_path(9).name == "default.onnx"
    assert registry.default_net_path(13).name == "large.onnx" and registry.default_net_path(19).name == "large.onnx"
    assert registry.default_net_path().name == "default.onnx"
    engine = GtpEngine(EngineConfig(visits=4))
    assert engine.evaluator.path.name == "large.onnx"  # a new engine starts on 19x19
    capsys.readouterr()
    engine.execute(parse_command("boardsize 9"))
    assert engine.evaluator.path.name == "default.onnx" and engine.searcher.evaluator is engine.evaluator
    import hashlib
    digest = hashlib.sha256((tmp_path / "default.onnx").read_bytes()).hexdigest()[:12]
    # the switch is said, with the file's hash (its card's), so a log names the very network that played
    assert capsys.readouterr().err == f"azgo: 9x9: network default.onnx (fp32, sha256 {digest})\n"
    assert engine.execute(parse_command("genmove b"))
    engine.execute(parse_command("boardsize 9"))  # no switch, no line
    assert "network" not in capsys.readouterr().err
    engine.execute(parse_command("boardsize 13"))
    assert engine.evaluator.path.name == "large.onnx"
    assert "azgo: 13x13: network large.onnx" in capsys.readouterr().err
    # `azgo genmove --size 9` starts on its position's size: only the 9x9 network is loaded
    from click.testing import CliRunner
    from azgo.gtp.cli import main, make_engine
    engine = make_engine(EngineConfig(visits=4), size=9)
    assert engine.size == 9 and [e.path.name for e in engine.pool.loaded()] == ["default.onnx"]
    res = CliRunner().invoke(main, ["genmove", "--size", "9", "--visits", "4"])
    assert res.exit_code == 0 and "large.onnx" not in res.output and "network default.onnx" in res.output
    # an explicit --net plays every size
    engine = GtpEngine(EngineConfig(visits=4, net=str(tmp_path / "default.onnx")))
    engine.execute(parse_command("boardsize 19"))
    assert engine.evaluator.path.name == "default.onnx"
    (tmp_path / "registry.json").write_text("{not json")
    with pytest.raises(NetError, match="registry"):
        registry.default_net_path(19)


def test_packaged_registry_covers_every_size_once_with_carded_loadable_networks():
    import hashlib
    entries = registry.packaged_registry()
    if not entries:
        pytest.skip("no nets/registry.json: nets/default.onnx plays every size")
    folder = DEFAULT.parent
    owner = {}
    for e in entries:
        lo, hi = e["sizes"]
        for n in range(lo, hi + 1):
            assert n not in owner, f"{n}x{n} is in two registry entries"
            owner[n] = e["file"]
    assert sorted(owner) == list(range(7, 20))  # every supported size, no gaps
    for name in set(owner.values()):
        card = json.loads((folder / name).with_suffix(".json").read_text())
        data = (folder / name).read_bytes()
        assert card["file"] == name and card["sha256"] == hashlib.sha256(data).hexdigest()
        assert card["strength"] and card["training"]
        if "int8" in card:  # the int8 copy the engine plays by default is the one the card describes
            q = (folder / card["int8"]["file"]).read_bytes()
            assert card["int8"]["sha256"] == hashlib.sha256(q).hexdigest()
        ev = OnnxEvaluator(folder / name, EvalConfig(precision="auto"))
        n = max(s for s, f in owner.items() if f == name)
        x = np.zeros((1, P.NUM_PLANES, n, n), np.float32)
        x[:, P.ON_BOARD_PLANE] = 1.0
        out = ev.evaluate(x, np.ones((1, n * n + 1), bool))
        assert abs(float(out.policy.sum()) - 1.0) < 1e-4 and -1.0 <= float(out.value[0]) <= 1.0
    for n, name in owner.items():
        assert registry.default_net_path(n).name == name


def test_int8_keep_fp32_leaves_the_named_nodes_unquantized(tmp_path):
    """``keep_fp32`` nodes read fp32 weights (no DequantizeLinear on their weight input); the rest are int8."""
    onnx = pytest.importorskip("onnx")
    from azgo.nets.quantize import compare_int8, main, quantize_int8

    fp32 = tmp_path / "net.onnx"
    fp32.write_bytes(DEFAULT.read_bytes())
    planes = make_planes(16, 9, seed=5)

    def dequantized_weight_inputs(path):
        m = onnx.load(str(path))
        made_by = {o: n for n in m.graph.node for o in n.output}
        return {n.name for n in m.graph.node if n.op_type == "Conv" and len(n.input) > 1
                and n.input[1] in made_by and made_by[n.input[1]].op_type == "DequantizeLinear"}

    whole = quantize_int8(fp32, planes, tmp_path / "whole.int8.onnx")
    assert "/blocks.0/a/conv/Conv" in dequantized_weight_inputs(whole)
    kept = quantize_int8(fp32, planes, tmp_path / "kept.int8.onnx", keep_fp32=["/blocks.0/a/conv/Conv"])
    quantized = dequantized_weight_inputs(kept)
    assert "/blocks.0/a/conv/Conv" not in quantized and "/blocks.0/b/conv/Conv" in quantized
    meta = {p.key: p.value for p in onnx.load(str(kept)).metadata_props}
    assert json.loads(meta["azgo_calibration"])["fp32_nodes"] == ["/blocks.0/a/conv/Conv"]
    assert compare_int8(fp32, kept, make_planes(16, 9, seed=7))["value_mae"] < 0.2
    with pytest.raises(NetError, match="no node named /nope"):
        quantize_int8(fp32, planes, tmp_path / "bad.int8.onnx", keep_fp32=["/nope"])
    np.save(tmp_path / "p.npy", planes)
    with pytest.raises(SystemExit) as info:
        main([str(fp32), "--calibration", str(tmp_path / "p.npy"), "--keep-fp32", "/nope"])
    assert info.value.code == 2
    assert not (tmp_path / "net.int8.onnx").exists()


def test_analysis_int8_copy_has_8bit_weights_and_percentile_ranges(tmp_path):
    """--analysis: full-range weights (so the evaluator plays it in fp32 where int8 saturates) and
    percentile activation ranges, recorded in the calibration text; percentile takes one board size."""
    onnx = pytest.importorskip("onnx")
    from azgo.nets.evaluator import int8_full_range
    from azgo.nets.quantize import ANALYSIS_PERCENTILE, compare_int8, quantize_int8

    fp32 = tmp_path / "net.onnx"
    fp32.write_bytes(DEFAULT.read_bytes())
    planes = make_planes(37, 9, seed=5)  # not a multiple of the calibration batch: equal chunks all the same
    out = quantize_int8(fp32, planes, tmp_path / "a.int8.onnx", full_range=True, percentile=ANALYSIS_PERCENTILE)
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    record = json.loads(meta["azgo_calibration"])
    assert "Percentile 99.999" in record["method"] and "reduce_range" not in record["method"]
    assert int8_full_range(meta)
    plain = quantize_int8(fp32, planes, tmp_path / "b.int8.onnx")
    assert not int8_full_range({p.key: p.value for p in onnx.load(str(plain)).metadata_props})
    assert compare_int8(fp32, out, make_planes(16, 9, seed=7))["top1_agreement"] > 0.5
    with pytest.raises(NetError, match="one board size"):
        quantize_int8(fp32, [planes, make_planes(8, 7, seed=1)], tmp_path / "c.int8.onnx", percentile=99.9)


def test_int8_keeps_the_stem_value_head_and_pooling_matrices_fp32_by_default(tmp_path):
    """The stem, the value/score/ownership head and every ``gpool_fc`` read fp32 weights unless
    ``default_fp32=False``; the policy head and the trunk's convolutions are int8 either way."""
    onnx = pytest.importorskip("onnx")
    from azgo.nets.quantize import default_fp32_nodes, quantize_int8

    fp32 = tmp_path / "net.onnx"
    fp32.write_bytes(DEFAULT.read_bytes())
    planes = make_planes(16, 9, seed=5)
    heads = default_fp32_nodes(onnx.load(str(fp32)).graph)
    assert {"/value_conv/conv/Conv", "/value_fc/Gemm", "/score_out/Gemm", "/ownership_out/Conv"} <= set(heads)
    assert "/stem/conv/Conv" in heads
    assert not any(h.startswith(("/policy_conv", "/policy_out", "/blocks.0/")) for h in heads)
    assert any("gpool_fc" in h for h in heads)

    def weights_dequantized(path):
        m = onnx.load(str(path))
        made_by = {o: n for n in m.graph.node for o in n.output}
        return {n.name for n in m.graph.node if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1
                and n.input[1] in made_by and made_by[n.input[1]].op_type == "DequantizeLinear"}

    default = weights_dequantized(quantize_int8(fp32, planes, tmp_path / "a.int8.onnx"))
    whole = weights_dequantized(quantize_int8(fp32, planes, tmp_path / "b.int8.onnx", default_fp32=False))
    assert "/value_fc/Gemm" in whole and "/value_fc/Gemm" not in default
    assert "/value_conv/conv/Conv" in whole and "/value_conv/conv/Conv" not in default
    assert "/stem/conv/Conv" in whole and "/stem/conv/Conv" not in default
    assert "/policy_conv/Conv" in default and "/blocks.0/a/conv/Conv" in default
    meta = {p.key: p.value for p in onnx.load(str(tmp_path / "a.int8.onnx")).metadata_props}
    assert json.loads(meta["azgo_calibration"])["default_fp32"] is True

    def rounded_outputs(path):  # op type -> how many outputs of nodes of that type are rounded to int8
        m = onnx.load(str(path))
        made_by = {o: n for n in m.graph.node for o in n.output}
        return collections.Counter(made_by[n.input[0]].op_type for n in m.graph.node
                                   if n.op_type == "QuantizeLinear" and n.input[0] in made_by)
    # by default only the matrix products are int8: the element-wise nodes between them (board-mask
    # products, residual additions) compute in fp32 and are not rounded again after each of them
    a, b = rounded_outputs(tmp_path / "a.int8.onnx"), rounded_outputs(tmp_path / "b.int8.onnx")
    assert a["Add"] == 0 and b["Add"] > 0
    assert a["Mul"] < b["Mul"] and sum(a.values()) < sum(b.values()) / 2
    assert json.loads(meta["azgo_calibration"])["int8_ops"] == ["Conv", "Gemm", "MatMul"]
