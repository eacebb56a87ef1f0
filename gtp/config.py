"""Engine settings for ``azgo gtp`` and ``azgo genmove``: one frozen dataclass, from options or TOML.

A ``--config FILE`` TOML file holds the same keys as the command-line options (with ``_`` or ``-``),
e.g.::

    net = "/path/to/net.onnx"
    visits = 800
    threads = "auto"        # or a number of cores
    max_memory = 2048       # MB
    resign_threshold = 0.05
    ponder = true

Command-line options given explicitly override the file.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

# 800 visits: about 0.85 s of search (plus 0.35 s of process start for `azgo genmove`) with the default
# b6c64 network on 9x9 and one onnxruntime thread on this project's 2-core machines (~950 playouts/s).
DEFAULT_VISITS = 800
# Leaves per network call when the network runs on CUDA (EngineConfig.gpu_batch_size); not tuned on a
# GPU here (the project machines have none).
GPU_BATCH_SIZE = 32


EARLY_STOP = ("always", "banked")


@dataclass(frozen=True)
class EngineConfig:
    """Play settings. ``visits``/``seconds`` limit each move (None: ``DEFAULT_VISITS`` unless a time
    control is active, in which case the clock decides); ``resign_threshold`` is a winrate, 0 = never.

    ``device``: where the network runs, "auto" (CUDA when onnxruntime-gpu has it, else the CPU), "cpu",
    "cuda" or "cuda:N" (see ``azgo.nets.evaluator.choose_providers``). ``batch_size`` is the leaves per
    network call on the CPU; when the network runs on CUDA the search takes ``gpu_batch_size`` leaves
    per call instead (a GPU's time per call grows little with the batch at these sizes, so fewer, bigger
    calls are faster; the price is more virtual loss in the tree; not measured on a GPU here).
    """

    net: str | None = None
    visits: int | None = None
    seconds: float | None = None
    threads: int | str = "auto"  # cores to use: search threads x onnxruntime threads (azgo.engine.threads)
    max_memory: float | None = None  # resident-memory cap in MB (None: azgo.engine.memory.default_memory_mb)
    batch_size: int = 8
    resign_threshold: float = 0.05
    resign_moves: int = 3
    ponder: bool = False
    lag: float = 1.0
    lcb: bool = True
    ladders: bool = True  # ladder reading in the search (SearchConfig.ladder_prior, ladder_capture_prior)
    score_utility: float = 0.0  # weight of the score lead in the search's utility (SearchConfig.score_utility)
    # end a timed search once its move cannot change: "always", or "banked" (only where the clock keeps the
    # seconds saved: not in a byo-yomi period, not under --seconds); banked since docs/strength/earlystop19
    early_stop: str = "banked"
    dynamic_komi: str = "off"  # "linear" (White giving handicap) or "ahead" (a side far ahead): engine.dynkomi
    pass_after_move: bool = False  # False (the default): pass only after the opponent's pass (PlayerConfig.pass_replies_pass)
    symmetry: str = "random"
    cache_size: int = 100_000
    seed: int | None = None
    precision: str = "auto"  # int8 where <net>.int8.onnx is beside the net (on the CPU), else fp32
    device: str = "auto"
    gpu_batch_size: int = GPU_BATCH_SIZE
    lizzie: bool = False  # `version` in the form Lizzie 0.7.4 accepts (see gtp.engine.lizzie_version)
    ogs_chat: bool = False  # after every played genmove, a `MALKOVICH:` stderr line gtp2ogs posts (gtp.ogs_chat)

    def __post_init__(self) -> None:
        from azgo.nets.evaluator import parse_device
        parse_device(self.device)  # ValueError naming the bad device
        if self.visits is not None and self.visits < 1:
            raise ValueError("visits must be >= 1")
        if self.seconds is not None and not (self.seconds > 0 and math.isfinite(self.seconds)):
            raise ValueError("seconds must be a positive number")
        from azgo.engine.threads import parse_threads
        parse_threads(self.threads)  # ValueError naming the bad value
        if self.batch_size < 1 or self.gpu_batch_size < 1:
            raise ValueError("batch_size and gpu_batch_size must be >= 1")
        if self.max_memory is not None and not (self.max_memory > 0 and math.isfinite(self.max_memory)):
            raise ValueError("max_memory must be a positive number of MB")
        if not 0 <= self.resign_threshold < 1:
            raise ValueError("resign_threshold is a winrate in [0, 1)")
        if self.lag < 0:
            raise ValueError("lag must be >= 0")
        if not (self.score_utility >= 0 and math.isfinite(self.score_utility)):
            raise ValueError("score_utility must be a number >= 0")
        from azgo.engine.dynkomi import DynamicKomi
        DynamicKomi(self.dynamic_komi)  # ValueError naming the bad mode
        if self.early_stop not in EARLY_STOP:
            raise ValueError(f"early_stop must be one of {', '.join(EARLY_STOP)}, not {self.early_stop!r}")


def load_toml(path: str) -> dict:
    """Read a TOML settings file into a dict of EngineConfig fields; ValueError names bad keys."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ValueError(f"cannot read config file {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"config file {path} is not valid TOML: {e}") from None
    names = {f.name for f in dataclasses.fields(EngineConfig)}
    out = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in names:
            raise ValueError(f"config file {path}: unknown setting {key!r} (known: {', '.join(sorted(names))})")
        out[name] = value
    return out
