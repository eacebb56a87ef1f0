"""Stochastic weight averaging (as KataGo exports averaged snapshots): the running mean of the weights.

The weights after every ``swa_every``-th step from ``swa_from`` on (batch-norm statistics included) join a
running mean, which checkpoints carry (``swa``: ``model``, ``count``), so a resumed run averages the same
snapshots; at the last step the average is validated and written to ``<out>/swa.pt``.
"""

from __future__ import annotations

import copy

from .losses import _cpu

SWA_NAME = "swa.pt"


def swa_due(config, step: int) -> bool:
    """Whether the weights after ``step`` join the average (every ``swa_every``-th step from ``swa_from``)."""
    return config.swa_from > 0 and step >= config.swa_from and (step - config.swa_from) % config.swa_every == 0


def swa_update(state) -> None:
    """Add the current weights (and batch-norm statistics) to the running mean of snapshots."""
    current = _cpu(state.model.state_dict())
    n = state.swa_count
    if state.swa is None or n == 0:
        state.swa = {k: v.detach().clone().float() if v.is_floating_point() else v.clone() for k, v in current.items()}
    else:
        for k, v in current.items():
            if v.is_floating_point():
                state.swa[k].add_((v.float() - state.swa[k]) / (n + 1))
            else:  # counters such as num_batches_tracked
                state.swa[k] = v.clone()
    state.swa_count = n + 1


def swa_model(state):
    """A copy of the model holding the averaged weights (on the state's device, eval mode)."""
    model = copy.deepcopy(state.model)
    dtypes = {k: v.dtype for k, v in model.state_dict().items()}
    model.load_state_dict({k: v.to(dtype=dtypes[k]) for k, v in state.swa.items()})
    return model.eval()
