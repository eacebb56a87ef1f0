"""Growing a network deeper (azgo.training.grow): the same outputs, blocks in order, new blocks trainable."""

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from azgo.training.checkpoints import load_checkpoint, save_atomic  # noqa: E402
from azgo.training.cli import grow as grow_cmd  # noqa: E402
from azgo.training.errors import TrainError  # noqa: E402
from azgo.training.grow import block_placement, grow_checkpoint, grow_model, max_output_difference  # noqa: E402
from azgo.training.model import NET_SIZES, GPoolBlock, build_model, randomize_batchnorm  # noqa: E402


def trained_like(name="b6c64", seed=1):
    """A network whose every block matters: random batch-norm statistics and gammas, komi inputs on."""
    m = build_model(name, seed=seed)
    randomize_batchnorm(m, seed=seed + 1)
    m.set_komi_inputs(True)
    with torch.no_grad():
        m.value_komi.fill_(0.3)
    return m.eval()


def test_placement_keeps_order_and_pooling_blocks():
    p = block_placement(NET_SIZES["b6c64"], NET_SIZES["b10c64"])
    assert p == [0, 1, None, 2, 3, None, None, 4, 5, None]
    assert [p[i] for i in NET_SIZES["b10c64"].gpool_blocks] == list(NET_SIZES["b6c64"].gpool_blocks)
    assert block_placement(NET_SIZES["b6c64"], NET_SIZES["b8c64"]) == [0, 1, None, 2, 3, None, 4, 5]
    assert block_placement(NET_SIZES["b6c64"], NET_SIZES["b6c64"]) == list(range(6))


@pytest.mark.parametrize("big", ["b8c64", "b10c64"])
def test_grown_network_computes_the_same(big):
    small = trained_like()
    grown = grow_model(small, big, seed=5).eval()
    assert isinstance(grown.blocks[NET_SIZES[big].gpool_blocks[0]], GPoolBlock)
    assert grown._komi_on and float(grown.value_komi.detach()) == pytest.approx(0.3)
    # every size the net serves, and a 9x9 board padded into a 13x13 batch (on-board mask)
    for n in (7, 9, 13, 19):
        x = torch.zeros(3, small.num_planes, n, n)
        g = torch.Generator().manual_seed(n)
        x[:, 0] = (torch.rand(3, n, n, generator=g) < 0.3).float()
        x[:, 8] = (torch.rand(3, n, n, generator=g) < 0.3).float() * (1 - x[:, 0])
        x[:, 24] = 1.0
        x[:, 25] = 0.5
        if n == 13:
            x[:, :, 9:, :] = 0.0
            x[:, :, :, 9:] = 0.0
        with torch.no_grad():
            for a, b in zip(small(x), grown(x)):
                assert torch.allclose(a, b, atol=1e-4, rtol=1e-4), (n, float((a - b).abs().max()))
    # the check `azgo grow` runs agrees
    ck = {"net": "b6c64", "model": small.state_dict()}
    assert max_output_difference(ck, {"net": big, "model": grown.state_dict()}) < 1e-4


def test_a_grown_block_is_not_an_identity_without_its_zero_gamma():
    """The test above can fail: the same growth with the new blocks' gammas left at 1 changes the outputs."""
    small = trained_like()
    grown = grow_model(small, "b10c64", seed=5)
    with torch.no_grad():
        grown.blocks[2].b.bn.weight.fill_(1.0)
    ck = {"net": "b6c64", "model": small.state_dict()}
    assert max_output_difference(ck, {"net": "b10c64", "model": grown.state_dict()}) > 1e-3


def test_new_blocks_learn():
    """Gradients reach a new block through its zero gamma, and one SGD step moves it off the identity."""
    grown = grow_model(trained_like(), "b10c64", seed=5).train()
    x = torch.zeros(4, grown.num_planes, 9, 9)
    x[:, 0, 2:4, 2:4] = 1.0
    x[:, 24] = 1.0
    policy, value, ownership, score = grown(x)
    (policy.logsumexp(1) - policy[:, 0] + value.pow(2) + ownership.pow(2).mean(1)).sum().backward()
    assert grown.blocks[2].b.bn.weight.grad.abs().sum() > 0
    assert grown.blocks[2].a.conv.weight.grad is not None


@pytest.mark.parametrize("small,big,words", [
    ("b6c64", "b6c96", "deeper, not wider"),
    ("b10c64", "b6c64", "cannot grow 10 blocks into 6"),
    ("b2c16", "b6c64", "not wider"),
])
def test_refuses_what_it_cannot_grow(small, big, words):
    with pytest.raises(TrainError, match=words):
        grow_model(build_model(small, seed=0), big)


def test_cli_writes_a_checkpoint_train_can_init_from(tmp_path):
    small = trained_like()
    save_atomic({"net": "b6c64", "model": small.state_dict(), "step": 1000, "training": "test run"},
                tmp_path / "small.pt")
    res = CliRunner().invoke(grow_cmd, [str(tmp_path / "small.pt"), "--net", "b10c64", "-o", str(tmp_path / "big.pt")])
    assert res.exit_code == 0, res.output
    assert "b6c64 -> b10c64" in res.output
    ck = load_checkpoint(tmp_path / "big.pt")
    assert ck["net"] == "b10c64" and ck["step"] == 0 and ck["grown_from"] == {"net": "b6c64", "step": 1000}
    assert "test run" in ck["training"]["summary"] and ck["training"]["summary"].startswith("azgo grow: a b6c64")
    bad = CliRunner().invoke(grow_cmd, [str(tmp_path / "small.pt"), "--net", "b6c96", "-o", str(tmp_path / "x.pt")])
    assert bad.exit_code != 0 and "deeper, not wider" in bad.output and not (tmp_path / "x.pt").exists()
    unknown = CliRunner().invoke(grow_cmd, [str(tmp_path / "small.pt"), "--net", "b99", "-o", str(tmp_path / "y.pt")])
    assert unknown.exit_code != 0 and "unknown net size" in unknown.output


def test_grow_checkpoint_records_where_it_came_from():
    """The parent's training record (its lineage, what it trained on) carries over, the growth said first, so
    `azgo train --init` of the grown file keeps the lineage; an init already of the size is copied, and says so."""
    parent = {"summary": "azgo train: 1000 steps", "steps": 1000, "games": 50,
              "lineage": [{"net": "b6c64", "steps": 500, "description": "older"}]}
    ck = grow_checkpoint({"net": "b6c64", "model": trained_like().state_dict(), "step": 7, "training": parent},
                         "b8c64")
    assert ck["net"] == "b8c64" and ck["grown_from"]["step"] == 7
    t = ck["training"]
    assert t["summary"] == ("azgo grow: a b6c64 network grown to b8c64 (new blocks are identities: the same "
                            "outputs); before: azgo train: 1000 steps")
    assert t["lineage"] == parent["lineage"] and t["games"] == 50
    same = grow_checkpoint(ck, "b8c64")  # a recipe grows every generation's init: an already grown one is copied
    assert same["training"]["summary"].startswith("azgo grow: copied, already a b8c64 network; before: azgo grow: a")
    assert max_output_difference(ck, same) == 0.0
    bare = grow_checkpoint({"net": "b6c64", "model": trained_like().state_dict(), "step": 3}, "b8c64")
    assert bare["training"] == {"summary": "azgo grow: a b6c64 network grown to b8c64 (new blocks are identities: "
                                           "the same outputs)", "steps": 3}
