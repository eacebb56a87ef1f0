"""`AzNet`: the azgo residual network (torch; training and export only, never imported at play time).

Input: planes ``[B, 26, H, W]`` float32 as specified in :mod:`azgo.engine.planes` (side-to-move
perspective). Plane ``ON_BOARD_PLANE`` (24) is 1.0 on the board and 0.0 on padding, so one batch may
mix board sizes by padding smaller boards at the bottom/right; the network is exact for every board
from 7x7 to 19x19:

* every convolution output is multiplied by the on-board mask, so padding stays zero and a 3x3
  convolution sees the board edge exactly as on an unpadded board;
* batch-norm statistics in training are taken over on-board points only (:class:`MaskedBatchNorm2d`);
  in eval mode it is a plain ``BatchNormalization`` that onnxruntime folds into the convolution;
* global pooling uses the on-board area (mean = sum / area; max over non-negative masked values,
  which equals the max over the board), plus a board-size term ``mean * (sqrt(area) - 14) / 10``
  (KataGo's ``KataGPool``), so one net serves all sizes.

Trunk: 3x3 conv + BN + ReLU, then ``blocks`` residual blocks (two 3x3 conv + BN, skip, ReLU). The
blocks listed in ``NetSize.gpool_blocks`` are global-pooling blocks (KataGo ``regulargpool``): the
first convolution is split into ``channels - gpool_channels`` regular channels and ``gpool_channels``
pooled channels whose mean/scaled-mean/max, through a linear layer, become per-channel biases of the
regular channels.

Outputs (all from the perspective of the side to move; ``H*W`` indices are ``row*W + col``):

* ``policy``    ``[B, H*W + 1]`` logits, pass last; the pass logit comes from pooled features.
  Off-board points (padding) get logit ``-OFF_BOARD_LOGIT`` so a softmax gives them ~0.
* ``value``     ``[B]`` in [-1, 1]: +1 = the side to move wins.
* ``ownership`` ``[B, H*W]`` in [-1, 1]: +1 = the point ends owned by the side to move (0 off-board).
* ``score``     ``[B]`` expected final score margin of the side to move, in points (komi included).

Komi inputs (``AzNet.komi_inputs``, off for networks trained before it; ``azgo train --komi-inputs`` turns it
on): the komi plane also reaches the two scalar heads directly. The score head then predicts the margin on the
board and the side to move's komi advantage ``k`` (the komi plane's mean times ``KOMI_SCALE``) is added to it,
exactly as the game's score adds komi; the value logit gets ``value_komi * k`` (one learned weight). Measured
reason: with komi only as an input plane, networks trained with komi spread and komi augmentation still moved
their empty-board score lead by only 0.1-0.56 points per point of komi; 400 steps with komi inputs from such a
network gave 0.77-1.00 on 9x9-19x19 (docs/TRAINING.md, "Komi inputs").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from azgo.engine.planes import FEATURE_VERSION, KOMI_PLANE, KOMI_SCALE, NUM_PLANES, ON_BOARD_PLANE

#: Logit given to off-board (padding) points of the policy output.
OFF_BOARD_LOGIT = 1.0e4
#: The score head's linear output is multiplied by this, so its raw output is O(1) at init.
SCORE_SCALE = 20.0
#: Output names, in the order `AzNet.forward` returns them (also the ONNX output names).
OUTPUT_NAMES = ("policy", "value", "ownership", "score")


@dataclass(frozen=True)
class NetSize:
    """Architecture of one named network size.

    ``gpool_blocks`` are 0-based indices of the residual blocks that are global-pooling blocks.
    ``head_channels`` is the width of the 1x1 convolutions of the policy and value heads,
    ``head_gpool_channels`` the number of policy-head channels that are pooled (for the pass logit
    and the policy biases), ``value_fc`` the hidden width of the value/score MLP.
    """

    blocks: int
    channels: int
    gpool_blocks: tuple[int, ...]
    gpool_channels: int
    head_channels: int
    head_gpool_channels: int
    value_fc: int

    def __post_init__(self) -> None:
        if any(not 0 <= b < self.blocks for b in self.gpool_blocks):
            raise ValueError(f"gpool_blocks {self.gpool_blocks} outside 0..{self.blocks - 1}")
        if not 0 < self.gpool_channels < self.channels:
            raise ValueError("gpool_channels must be between 1 and channels - 1")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["gpool_blocks"] = list(self.gpool_blocks)
        return d


NET_SIZES: dict[str, NetSize] = {
    # tiny, for tests only
    "b2c16": NetSize(blocks=2, channels=16, gpool_blocks=(1,), gpool_channels=8,
                     head_channels=8, head_gpool_channels=8, value_fc=16),
    "b3c16": NetSize(blocks=3, channels=16, gpool_blocks=(1,), gpool_channels=8,  # b2c16 grown, for tests
                     head_channels=8, head_gpool_channels=8, value_fc=16),
    # the default 9x9 network (KataGo's b6c96 pattern at width 64): blocks 2 and 4 pool
    "b6c64": NetSize(blocks=6, channels=64, gpool_blocks=(2, 4), gpool_channels=16,
                     head_channels=24, head_gpool_channels=24, value_fc=64),
    # b6c64 grown deeper (azgo.training.grow): the same widths, its pooling blocks moved to keep its order
    "b8c64": NetSize(blocks=8, channels=64, gpool_blocks=(3, 6), gpool_channels=16,
                     head_channels=24, head_gpool_channels=24, value_fc=64),
    "b10c64": NetSize(blocks=10, channels=64, gpool_blocks=(3, 7), gpool_channels=16,
                      head_channels=24, head_gpool_channels=24, value_fc=64),
    "b6c96": NetSize(blocks=6, channels=96, gpool_blocks=(2, 4), gpool_channels=32,
                     head_channels=32, head_gpool_channels=32, value_fc=96),
    "b10c128": NetSize(blocks=10, channels=128, gpool_blocks=(3, 7), gpool_channels=32,
                       head_channels=32, head_gpool_channels=32, value_fc=128),
}


def get_size(name: str) -> NetSize:
    """The `NetSize` called ``name`` (a key of `NET_SIZES`); ValueError naming the known sizes otherwise."""
    try:
        return NET_SIZES[name]
    except KeyError:
        raise ValueError(f"unknown net size {name!r}; known: {', '.join(NET_SIZES)}") from None


class MaskedBatchNorm2d(nn.BatchNorm2d):
    """BatchNorm2d whose training statistics come from on-board points only.

    ``forward(x, mask)``: ``x`` ``[B, C, H, W]``, ``mask`` ``[B, 1, H, W]`` (1 on the board). In eval
    mode it is exactly ``F.batch_norm`` with the running statistics (exports as
    ``BatchNormalization``). The output is *not* masked; callers multiply by the mask.
    """

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        if not self.training:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                False, 0.0, self.eps)
        count = mask.sum().clamp_min(1.0)
        mean = (x * mask).sum(dim=(0, 2, 3)) / count
        centered = (x - mean.view(1, -1, 1, 1)) * mask
        var = (centered * centered).sum(dim=(0, 2, 3)) / count
        with torch.no_grad():
            m = self.momentum if self.momentum is not None else 0.1
            unbiased = var * (count / (count - 1.0).clamp_min(1.0))
            self.running_mean.mul_(1.0 - m).add_(mean.detach(), alpha=m)
            self.running_var.mul_(1.0 - m).add_(unbiased.detach(), alpha=m)
            self.num_batches_tracked.add_(1)
        scale = self.weight / torch.sqrt(var + self.eps)
        return (x - mean.view(1, -1, 1, 1)) * scale.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)


def global_pool(x: torch.Tensor, area: torch.Tensor, size_term: torch.Tensor) -> torch.Tensor:
    """Pool masked, non-negative features ``x`` ``[B, C, H, W]`` to ``[B, 3C]``.

    Returns ``[mean, mean * size_term, max]`` over the on-board area; ``area`` and ``size_term`` are
    ``[B, 1]``. ``x`` must be zero off the board and >= 0 (post-ReLU), so the plain spatial max equals
    the max over on-board points.
    """
    mean = x.sum(dim=(2, 3)) / area
    mx = torch.amax(x, dim=(2, 3))
    return torch.cat([mean, mean * size_term, mx], dim=1)


class ConvBN(nn.Module):
    """Convolution (no bias) + masked batch norm + mask; ReLU optional."""

    def __init__(self, cin: int, cout: int, kernel: int, relu: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False)
        self.bn = MaskedBatchNorm2d(cout)
        self.relu = relu

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        y = self.bn(self.conv(x), mask) * mask
        return F.relu(y) if self.relu else y


class ResBlock(nn.Module):
    """Two 3x3 conv + BN with a skip connection; output = relu(x + block(x)), masked."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.a = ConvBN(channels, channels, 3, relu=True)
        self.b = ConvBN(channels, channels, 3, relu=False)

    def forward(self, x, mask, area, size_term):
        return F.relu(x + self.b(self.a(x, mask), mask))


class GPoolBlock(nn.Module):
    """Residual block whose first conv is split into regular and globally pooled channels (KataGo).

    The pooled channels (``gpool`` of them) are BN + ReLU'd, pooled to ``3*gpool`` features, and a
    linear layer turns those into one bias per regular channel, added before that part's ReLU.
    """

    def __init__(self, channels: int, gpool: int) -> None:
        super().__init__()
        regular = channels - gpool
        self.conv_regular = nn.Conv2d(channels, regular, 3, padding=1, bias=False)
        self.conv_gpool = ConvBN(channels, gpool, 3, relu=True)
        self.bn_regular = MaskedBatchNorm2d(regular)
        self.gpool_fc = nn.Linear(3 * gpool, regular, bias=False)
        self.b = ConvBN(regular, channels, 3, relu=False)

    def forward(self, x, mask, area, size_term):
        g = global_pool(self.conv_gpool(x, mask), area, size_term)
        r = self.bn_regular(self.conv_regular(x), mask) + self.gpool_fc(g)[:, :, None, None]
        r = F.relu(r) * mask
        return F.relu(x + self.b(r, mask))


class AzNet(nn.Module):
    """The azgo policy/value/ownership/score network; see the module docstring for the contract.

    ``forward(planes)`` with planes ``[B, 26, H, W]`` returns the tuple
    ``(policy [B, H*W+1] logits, value [B], ownership [B, H*W], score [B])``, all for the side to move.
    """

    def __init__(self, size: NetSize | str, num_planes: int = NUM_PLANES) -> None:
        super().__init__()
        if isinstance(size, str):
            self.size_name: str | None = size
            size = get_size(size)
        else:
            self.size_name = next((k for k, v in NET_SIZES.items() if v == size), None)
        self.size = size
        self.num_planes = num_planes
        self.feature_version = FEATURE_VERSION
        c = size.channels
        self.stem = ConvBN(num_planes, c, 3, relu=True)
        self.blocks = nn.ModuleList(
            GPoolBlock(c, size.gpool_channels) if i in size.gpool_blocks else ResBlock(c)
            for i in range(size.blocks)
        )
        h, hg = size.head_channels, size.head_gpool_channels
        # policy head
        self.policy_conv = nn.Conv2d(c, h, 1, bias=False)
        self.policy_gpool = ConvBN(c, hg, 1, relu=True)
        self.policy_gpool_fc = nn.Linear(3 * hg, h, bias=False)
        self.policy_bn = MaskedBatchNorm2d(h)
        self.policy_out = nn.Conv2d(h, 1, 1, bias=False)
        self.pass_fc = nn.Linear(3 * hg, h)
        self.pass_out = nn.Linear(h, 1, bias=False)
        # value / ownership / score head
        self.value_conv = ConvBN(c, h, 1, relu=True)
        self.value_fc = nn.Linear(3 * h, size.value_fc)
        self.value_out = nn.Linear(size.value_fc, 1)
        self.score_out = nn.Linear(size.value_fc, 1)
        self.ownership_out = nn.Conv2d(h, 1, 1, bias=False)
        # komi inputs (see the module docstring): a flag kept in the state dict, and the value head's komi weight
        self.register_buffer("komi_inputs", torch.zeros(()))
        self.value_komi = nn.Parameter(torch.zeros(()))
        self._komi_on = False
        self.reset_parameters()

    def set_komi_inputs(self, on: bool = True) -> None:
        """Let the komi reach the score and value heads directly (kept in checkpoints and exports)."""
        self.komi_inputs.fill_(1.0 if on else 0.0)
        self._komi_on = bool(on)

    def parameters_in_use(self) -> list[tuple[str, nn.Parameter]]:
        """``named_parameters()`` without the value head's komi weight while komi inputs are off (it is then
        outside the graph: not trained, not counted)."""
        return [(n, p) for n, p in self.named_parameters() if n != "value_komi" or self._komi_on]

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """As ``nn.Module.load_state_dict``; a state dict from before komi inputs loads with them off."""
        state_dict = dict(state_dict)
        state_dict.setdefault("komi_inputs", torch.zeros(()))
        state_dict.setdefault("value_komi", torch.zeros(()))
        out = super().load_state_dict(state_dict, strict=strict, assign=assign)
        self._komi_on = bool(self.komi_inputs.item() != 0.0)
        return out

    def reset_parameters(self) -> None:
        """Initialise for training from scratch.

        He-normal (fan-in, ReLU gain) for convolutions and hidden linear layers; the last BN of every
        residual block starts with gamma 0 so each block starts as the identity ("zero-init
        residual"); output layers start small (std 0.01 scaled by fan-in) so initial policies are
        near-uniform, values near 0 and ownership near 0.
        """
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
                m.reset_running_stats()
        for block in self.blocks:
            nn.init.zeros_(block.b.bn.weight)
        for m in (self.gpool_fcs() + [self.policy_gpool_fc]):
            # pooled biases start modest so they do not dominate the spatial signal
            m.weight.data.mul_(0.5)
        for m in (self.policy_out, self.pass_out, self.value_out, self.score_out, self.ownership_out):
            nn.init.normal_(m.weight, std=0.01)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def gpool_fcs(self) -> list[nn.Linear]:
        return [b.gpool_fc for b in self.blocks if isinstance(b, GPoolBlock)]

    def forward(self, planes: torch.Tensor):
        mask = planes[:, ON_BOARD_PLANE:ON_BOARD_PLANE + 1]          # [B, 1, H, W]
        area = mask.sum(dim=(2, 3))                                   # [B, 1]
        size_term = (torch.sqrt(area) - 14.0) * 0.1                   # [B, 1]
        x = self.stem(planes, mask)
        for block in self.blocks:
            x = block(x, mask, area, size_term)

        # policy
        pg = global_pool(self.policy_gpool(x, mask), area, size_term)      # [B, 3*hg]
        p = self.policy_bn(self.policy_conv(x), mask) + self.policy_gpool_fc(pg)[:, :, None, None]
        p = F.relu(p) * mask
        board_logits = self.policy_out(p)                                   # [B, 1, H, W]
        board_logits = board_logits * mask - (1.0 - mask) * OFF_BOARD_LOGIT
        pass_logit = self.pass_out(F.relu(self.pass_fc(pg)))               # [B, 1]
        policy = torch.cat([torch.flatten(board_logits, 1), pass_logit], dim=1)

        # value, score, ownership
        v = self.value_conv(x, mask)                                        # [B, h, H, W]
        hidden = F.relu(self.value_fc(global_pool(v, area, size_term)))
        value_logit = self.value_out(hidden).squeeze(1)
        score = (self.score_out(hidden) * SCORE_SCALE).squeeze(1)
        if self._komi_on:  # a Python flag: the exported graph has these nodes only when it is on
            komi = (planes[:, KOMI_PLANE] * mask[:, 0]).sum(dim=(1, 2)) / area[:, 0] * KOMI_SCALE  # [B]
            value_logit = value_logit + self.value_komi * komi
            score = score + komi
        value = torch.tanh(value_logit)
        ownership = torch.flatten(torch.tanh(self.ownership_out(v)) * mask, 1)
        return policy, value, ownership, score


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters in use (the value head's komi weight only when komi inputs are on)."""
    named = model.parameters_in_use() if isinstance(model, AzNet) else model.named_parameters()
    return sum(p.numel() for _, p in named if p.requires_grad)


def randomize_batchnorm(model: nn.Module, seed: int = 0) -> None:
    """Give every batch norm random affine parameters and running statistics (in place).

    For tests and benchmarks only: a fresh model has zero-init residual gammas, which would make
    its blocks identities and hide bugs in them.
    """
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                n = m.num_features
                m.weight.copy_(0.5 + torch.rand(n, generator=gen))
                m.bias.copy_(0.2 * torch.randn(n, generator=gen))
                m.running_mean.copy_(0.2 * torch.randn(n, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(n, generator=gen))


def build_model(name: str, seed: int | None = None) -> AzNet:
    """A freshly initialised `AzNet` of the named size (deterministic when ``seed`` is given)."""
    if seed is not None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return AzNet(name)
    return AzNet(name)
