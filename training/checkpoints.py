"""Training checkpoints: atomic writes, loading, and the plain-data form of RNG states.

A checkpoint (``<out>/checkpoint.pt``) is written atomically: ``torch.save`` to a hidden temporary file in the
same folder, ``fsync``, then a rename (`azgo.engine.atomic`); a kill at any moment leaves the previous complete checkpoint.
Everything in it loads with ``torch.load(weights_only=True)`` on any machine (CPU tensors only).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from azgo.engine.atomic import atomic_target

from .errors import TrainError

CHECKPOINT_NAME = "checkpoint.pt"
CHECKPOINT_FORMAT = 1


def save_atomic(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` ``obj`` to ``path`` atomically (`azgo.engine.atomic.atomic_target`)."""
    with atomic_target(path) as tmp:
        torch.save(obj, tmp)
    return Path(path)


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """A checkpoint dict (``torch.load(weights_only=True)``); TrainError if unreadable."""
    try:
        ckpt = torch.load(str(path), map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise TrainError(f"no checkpoint at {path}") from None
    except Exception as e:
        raise TrainError(f"cannot read checkpoint {path}: {e}") from None
    if not isinstance(ckpt, dict) or "model" not in ckpt or "net" not in ckpt:
        raise TrainError(f"{path} is not an azgo training checkpoint (no 'net'/'model')")
    return ckpt


def checkpoint_path(out: str | os.PathLike) -> Path:
    return Path(out) / CHECKPOINT_NAME


def _plain(obj: Any) -> Any:
    """Python's random state as nested lists/ints (loadable with ``weights_only=True``)."""
    if isinstance(obj, tuple):
        return [_plain(x) for x in obj]
    return obj


def _as_random_state(obj: Any) -> Any:
    if isinstance(obj, list):
        return tuple(_as_random_state(x) for x in obj)
    return obj
