"""A self-play archive folder: its finished games, its best network (``best.onnx``, re-read when replaced),
and how a self-play worker loads that network. Shared by the local workers (:mod:`azgo.training.workers`) and
the Ray actors (:mod:`azgo.training.ray_selfplay`)."""

from __future__ import annotations

import glob
import hashlib
import os

BEST_NET = "best.onnx"


def archive_games(folder: str) -> list[str]:
    """Finished SGF games in ``folder`` (temporary files excluded), sorted by name."""
    return sorted(glob.glob(os.path.join(folder, "*.sgf")))


def net_id(path: str) -> str:
    """A short id for a network file: its name and the start of its SHA-256."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    return f"{os.path.splitext(os.path.basename(path))[0]}-{digest}"


def eval_config(threads: int, seed: int, device: str = "cpu", precision: str = "fp32"):
    """The evaluator settings of a self-play worker (random symmetry, a 20,000-position cache).

    ``precision``: "fp32", "int8" (the network's ``.int8.onnx`` sibling, or the file itself if it is
    int8) or "auto" (int8 where that sibling exists and the network runs on the CPU).
    """
    from azgo.nets.evaluator import EvalConfig
    return EvalConfig(threads=threads, symmetry="random", cache_size=20_000, seed=seed, device=device,
                      precision=precision)


def _load(path: str, threads: int, seed: int, device: str = "cpu", precision: str = "fp32"):
    from azgo.nets.evaluator import OnnxEvaluator
    return OnnxEvaluator(path, eval_config(threads, seed, device, precision))


def network_file(path: str, precision: str) -> str:
    """The file a worker with ``precision`` plays with: ``path``, or its ``.int8.onnx`` sibling for
    "int8" and, where that sibling exists, for "auto" (the Ray driver sends this file's bytes)."""
    from azgo.nets.evaluator import INT8_SUFFIX, int8_sibling
    if precision == "fp32" or path.endswith(INT8_SUFFIX):
        return path
    sibling = int8_sibling(path)
    return str(sibling) if sibling.is_file() else path
