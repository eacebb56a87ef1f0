"""Grow a trained network deeper without changing what it computes (Net2Net-style, depth only).

A larger network trained from scratch costs many generations of self-play before it catches up with the
lineage's small one; grown from it, it starts exactly where the small one is and training only has to add.
`grow_model` takes an `AzNet` of size ``small`` and returns one of size ``big`` (a `NET_SIZES` name with the
same widths and as many global-pooling blocks, and at least as many blocks): every block of the small
network is copied in order, its global-pooling blocks to the big one's global-pooling positions, and each
new block is a plain residual block whose last batch norm has gamma 0 and beta 0. Such a block adds
``b(a(x)) = 0`` to its input and ends in a ReLU of an input that is already non-negative (every block and
the stem end in ReLU), so it is the identity: the grown network's outputs equal the small one's to float
rounding, for every board size. Its other weights are the fresh initialisation (He-normal), so gradients
reach the new blocks through their zero gammas from the first step.

Perspective and shapes are those of `azgo.training.model`; nothing here changes the input planes.
"""

from __future__ import annotations

import torch

from .errors import TrainError
from .model import AzNet, NetSize, build_model, get_size


def block_placement(small: NetSize, big: NetSize) -> list[int | None]:
    """For each block of ``big``, the index of the ``small`` block copied there (None = a new identity block).

    The small network's global-pooling blocks go to the big one's, in order; the plain blocks between two
    global-pooling blocks stay between them, first in their stretch, and the new blocks fill the rest of it.
    TrainError when the sizes cannot be grown into each other (different widths, heads or pooling count).
    """
    same = ("channels", "gpool_channels", "head_channels", "head_gpool_channels", "value_fc")
    diff = [f"{k} {getattr(small, k)} -> {getattr(big, k)}" for k in same if getattr(small, k) != getattr(big, k)]
    if diff:
        raise TrainError(f"can only grow a network deeper, not wider: {', '.join(diff)}")
    if len(small.gpool_blocks) != len(big.gpool_blocks):
        raise TrainError(f"the networks have {len(small.gpool_blocks)} and {len(big.gpool_blocks)} "
                         "global-pooling blocks; growing keeps their number")
    if big.blocks < small.blocks:
        raise TrainError(f"cannot grow {small.blocks} blocks into {big.blocks}")
    placement: list[int | None] = [None] * big.blocks
    s_bounds = [-1, *sorted(small.gpool_blocks), small.blocks]
    b_bounds = [-1, *sorted(big.gpool_blocks), big.blocks]
    for k in range(len(s_bounds) - 1):
        plain = list(range(s_bounds[k] + 1, s_bounds[k + 1]))   # the small net's plain blocks in stretch k
        slots = list(range(b_bounds[k] + 1, b_bounds[k + 1]))
        if len(plain) > len(slots):
            raise TrainError(f"the big network has {len(slots)} plain blocks where the small one has {len(plain)} "
                             f"(before global-pooling block {k + 1}); choose a size whose pooling blocks come later")
        for src, dst in zip(plain, slots):
            placement[dst] = src
        if k + 1 < len(s_bounds) - 1:
            placement[b_bounds[k + 1]] = s_bounds[k + 1]
    return placement


def grow_model(model: AzNet, big: str, seed: int = 0) -> AzNet:
    """A network of size ``big`` that computes what ``model`` computes (see the module docstring).

    ``model`` is not changed; the result is in the mode (train/eval) of a fresh model: call ``.eval()`` to
    compare outputs. Komi inputs and their weight carry over.
    """
    new = build_model(big, seed=seed)
    placement = block_placement(model.size, new.size)
    small_state = model.state_dict()
    state = new.state_dict()
    for name, tensor in small_state.items():
        if not name.startswith("blocks."):
            state[name] = tensor.clone()
    for dst, src in enumerate(placement):
        if src is None:  # a new plain block (block_placement copies every pooling block)
            continue
        prefix_src, prefix_dst = f"blocks.{src}.", f"blocks.{dst}."
        for name, tensor in small_state.items():
            if name.startswith(prefix_src):
                state[prefix_dst + name[len(prefix_src):]] = tensor.clone()
    new.load_state_dict(state)
    with torch.no_grad():
        for dst, src in enumerate(placement):
            if src is None:
                new.blocks[dst].b.bn.weight.zero_()
                new.blocks[dst].b.bn.bias.zero_()
    return new


def grow_checkpoint(ckpt: dict, big: str, seed: int = 0) -> dict:
    """A new checkpoint dict (step 0, no optimiser state) of the ``big`` network grown from ``ckpt``'s weights.

    Its ``training`` record is the parent's (what it was trained on, its lineage), with the growth said first in
    the summary, so that `azgo train --init` of the grown file keeps the lineage as for any other init."""
    small = AzNet(ckpt["net"])
    small.load_state_dict(ckpt["model"])
    get_size(big)  # ValueError naming the known sizes
    grown = grow_model(small, big, seed=seed)
    how = (f"azgo grow: a {ckpt['net']} network grown to {big} (new blocks are identities: the same outputs)"
           if ckpt["net"] != big else f"azgo grow: copied, already a {big} network")
    parent = ckpt.get("training")
    if isinstance(parent, dict):
        training = {**parent, "summary": how + (f"; before: {parent['summary']}" if parent.get("summary") else "")}
    else:
        training = {"summary": how + (f"; before: {parent}" if parent else ""), "steps": ckpt.get("step")}
    return {"net": big, "model": grown.state_dict(), "step": 0, "training": training,
            "grown_from": {"net": ckpt["net"], "step": ckpt.get("step")}}


def max_output_difference(a: dict, b: dict, sizes=(9, 13, 19), batch: int = 4, seed: int = 0) -> float:
    """The largest absolute difference between the outputs of checkpoints ``a`` and ``b`` (eval mode) on
    ``batch`` random stone positions of each size (random komi and side to move, on-board mask set)."""
    from azgo.engine import planes as P

    nets = []
    for ckpt in (a, b):
        m = AzNet(ckpt["net"])
        m.load_state_dict(ckpt["model"])
        nets.append(m.eval())
    gen = torch.Generator().manual_seed(seed)
    worst = 0.0
    with torch.no_grad():
        for n in sizes:
            x = torch.zeros(batch, P.NUM_PLANES, n, n)
            stones = torch.randint(0, 3, (batch, n, n), generator=gen)
            x[:, P.OWN_STONES] = (stones == 1).float()
            x[:, P.OPP_STONES] = (stones == 2).float()
            x[:, P.BLACK_TO_MOVE] = torch.randint(0, 2, (batch, 1, 1), generator=gen).float()
            x[:, P.ON_BOARD_PLANE] = 1.0
            x[:, P.KOMI_PLANE] = (torch.rand(batch, 1, 1, generator=gen) - 0.5)
            for ya, yb in zip(nets[0](x), nets[1](x)):
                worst = max(worst, float((ya - yb).abs().max()))
    return worst
