"""The training objective and optimiser of ``azgo train``: losses per head, their running means, SGD.

Losses (``loss_weights``, default ``1, 1, 0.5, 0.2``)::

    loss = w_p * policy + w_v * value + w_o * ownership + w_s * score      (+ L2 via weight decay)

* policy: cross-entropy with the soft target, ``-sum(pi * log_softmax(logits))``, mean over the batch (scaled
  per sample by its source's ``policy_w``);
* value: squared error of the tanh value against the game result (+1/0/-1, side to move), only for
  samples with a known result (others weigh 0);
* ownership: squared error per point, mean over the board, only for games played to the end;
* score: Huber loss (delta 1) on ``score / 20`` against the final area margin / 20, same samples.

Weighted terms are summed over the batch and divided by the batch size, so a sample without a target
contributes nothing. The logged per-head values are means over the samples that have the target; ``loss``
is the objective above.

Optimizer: SGD, momentum 0.9, weight decay 1e-4 (on convolution and linear weights; not on batch-norm
parameters and biases), learning rate ``lr`` times ``lr_decay`` for every step milestone in ``lr_steps``
already passed (a pure function of the step, so a resumed run follows the same schedule).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from azgo.training.model import SCORE_SCALE

DEFAULT_LOSS_WEIGHTS = (1.0, 1.0, 0.5, 0.2)
HEADS = ("policy", "value", "ownership", "score")


def lr_at(config, step: int) -> float:
    """Learning rate for the update that makes step ``step + 1`` (step decay at ``lr_steps``)."""
    passed = sum(1 for m in config.lr_steps if step >= m)
    return config.lr * config.lr_decay ** passed


def make_optimizer(model: torch.nn.Module, config) -> torch.optim.SGD:
    """SGD with momentum; weight decay on conv/linear weights only (not on BN parameters or biases).
    The value head's komi weight is trained only when the model's komi inputs are on (so the optimiser of a
    checkpoint from before them still matches the model it resumes)."""
    decay, no_decay = [], []
    named = model.parameters_in_use() if hasattr(model, "parameters_in_use") else model.named_parameters()
    for _, p in named:
        (decay if p.ndim > 1 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": config.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.SGD(groups, lr=config.lr, momentum=config.momentum)


def to_tensors(batch: dict[str, np.ndarray], device: torch.device | None = None) -> dict[str, torch.Tensor]:
    """The batch's arrays as tensors (sharing memory on the CPU; copied to ``device`` otherwise)."""
    out = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in batch.items()}
    if device is not None and device.type != "cpu":
        out = {k: v.to(device, non_blocking=True) for k, v in out.items()}
    return out


def _cpu(obj: Any) -> Any:
    """``obj`` with every tensor in it (nested dicts/lists) on the CPU (a CPU tensor is kept as is)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cpu(v) for v in obj)
    return obj


def compute_losses(outputs, batch: dict[str, torch.Tensor], weights=DEFAULT_LOSS_WEIGHTS):
    """``(objective, metrics)`` for network ``outputs`` on a batch (see the module docstring).

    ``metrics`` holds plain floats: ``loss``, the per-head means over samples having the target,
    ``policy_acc`` (top-1 agreement with the target's argmax) and the weight sums.
    """
    policy, value, ownership, score = outputs
    b = policy.shape[0]
    logp = F.log_softmax(policy, dim=1)
    pol = -(batch["policy"] * logp).sum(dim=1)
    pw = batch.get("policy_w")
    if pw is None:
        pw = torch.ones_like(pol)
    vw, fw = batch["value_w"], batch["final_w"]
    val = (value - batch["value"]) ** 2
    own = ((ownership - batch["ownership"]) ** 2).mean(dim=1)
    sco = F.huber_loss(score / SCORE_SCALE, batch["score"] / SCORE_SCALE, reduction="none", delta=1.0)
    sums = ((pol * pw).sum(), (val * vw).sum(), (own * fw).sum(), (sco * fw).sum())  # weighted, per head
    total = sum(w * t / b for w, t in zip(weights, sums))
    with torch.no_grad():
        vsum, fsum, psum = float(vw.sum()), float(fw.sum()), float(pw.sum())
        pol_s, val_s, own_s, sco_s = (float(t) for t in sums)
        metrics = {
            "loss": float(total),
            "policy": pol_s / psum if psum else math.nan,
            "value": val_s / vsum if vsum else math.nan,
            "ownership": own_s / fsum if fsum else math.nan,
            "score": sco_s / fsum if fsum else math.nan,
            "policy_acc": float((policy.argmax(1) == batch["policy"].argmax(1)).float().mean()),
            "value_n": vsum, "final_n": fsum, "policy_n": psum, "n": float(b),
        }
    return total, metrics


class MetricMeans:
    """Averages of per-batch metrics, weighted by the samples that had each target."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.weights: dict[str, float] = {}

    def add(self, m: dict[str, float]) -> None:
        w_of = {"value": m["value_n"], "ownership": m["final_n"], "score": m["final_n"],
                "policy": m["policy_n"]}
        for k in ("loss", "policy", "value", "ownership", "score", "policy_acc"):
            w = w_of.get(k, m["n"])
            if w and not math.isnan(m[k]):
                self.sums[k] = self.sums.get(k, 0.0) + m[k] * w
                self.weights[k] = self.weights.get(k, 0.0) + w

    def means(self) -> dict[str, float]:
        return {k: self.sums[k] / self.weights[k] for k in self.sums if self.weights[k]}

    def __bool__(self) -> bool:
        return bool(self.sums)
