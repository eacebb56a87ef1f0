"""The training loop behind ``azgo train``: SGF archives -> `AzNet` checkpoints (torch, CPU).

Data: :mod:`azgo.training.dataset` (window of recent games, ~5% held out by file-name hash, 8-fold
random symmetry per sample, decoded-position cache).

Losses (``loss_weights``, default ``1, 1, 0.5, 0.2``)::

    loss = w_p * policy + w_v * value + w_o * ownership + w_s * score      (+ L2 via weight decay)

* policy: cross-entropy with the soft target, ``-sum(pi * log_softmax(logits))``, mean over the batch;
* value: squared error of the tanh value against the game result (+1/0/-1, side to move), only for
  samples with a known result (others weigh 0);
* ownership: squared error per point, mean over the board, only for games played to the end;
* score: Huber loss (delta 1) on ``score / 20`` against the final area margin / 20, same samples.

Weighted terms are summed over the batch and divided by the batch size, so a sample without a
target contributes nothing. The logged per-head values are means over the samples that have the
target; ``loss`` is the objective above.

Device (``device``, ``azgo train --device``): "auto" (CUDA when ``torch.cuda.is_available()``, else
the CPU), "cpu", "cuda" or "cuda:N". On CUDA the forward pass runs under ``torch.autocast`` (float16)
with a ``GradScaler`` (mixed precision; the losses are computed in float32); on the CPU everything is
float32 as before. Checkpoints always hold CPU tensors, so a checkpoint written on a GPU resumes, exports
and loads on a machine without one, and the other way round.

Optimizer: SGD, momentum 0.9, weight decay 1e-4 (on convolution and linear weights; not on batch-norm
parameters and biases), learning rate ``lr`` (default 0.02) times ``lr_decay`` for every step
milestone in ``lr_steps`` already passed (the rate is a pure function of the step, so a resumed run
follows the same schedule). Default batch 256.

Checkpoints (``<out>/checkpoint.pt``) are written every ``checkpoint_every`` steps, at the end and on
SIGINT/SIGTERM (at a step boundary), atomically: ``torch.save`` to a hidden temporary file in the
same folder, ``fsync``, then ``os.replace``; a kill at any moment leaves the previous complete
checkpoint. A checkpoint holds ``net``, ``model``, ``optimizer``, ``step``, the RNG states
(numpy sampler, torch, python), ``args``, ``data_files`` (the exact game files, so ``--resume``
reloads the same data) and ``training`` (provenance, read by ``azgo export`` into the net card).
Everything in it loads with ``torch.load(weights_only=True)``. Resuming from a checkpoint written at
step S and training to step N gives bit-for-bit the weights of an uninterrupted run to N (same
threads, same machine, on the CPU; CUDA kernels and mixed precision are not bit-reproducible). A CUDA
run also saves its ``GradScaler`` state (``scaler``). The device is not taken from the checkpoint:
``--resume`` runs on the ``--device`` given now.

Stochastic weight averaging (``swa_from`` > 0; KataGo exports such averages): the weights after every
``swa_every``-th step from ``swa_from`` on (batch-norm statistics included) join a running mean, which
checkpoints carry (``swa``: ``model``, ``count``), so a resumed run averages the same snapshots. At the
last step the average is validated on the held-out batches and written to ``<out>/swa.pt``, a
checkpoint without optimiser that ``azgo export`` and ``--init`` read like any other.

Policy surprise weighting (``surprise_weight`` > 0, KataGo's "policy surprise"): positions that self-play
marked with ``AZK`` (the KL of its search target from the network's prior) are drawn in proportion to
``1 - w + w * AZK / mean AZK`` (per board size), so training sees more of the positions where the search
corrected the network; the validation batches stay unweighted.

Board-size mix (``size_mix``, e.g. ``{19: 0.6, 13: 0.3, 9: 0.1}``): each batch's board size is drawn with
these weights instead of in proportion to the positions of each size, so the size the strength table
needs most can get more steps than its share of the data. ``max_final_margin`` > 0 removes the
ownership and score targets of games that ended with an area margin above that share of the board
(played out until the loser had nothing left), in training and validation alike.

Source weights (``source_weights``, ``[[source, sample, policy], ...]``): the training games under a source
are drawn ``sample`` times as often as others (position for position) and their policy loss is scaled by
``policy`` (e.g. games against GNU Go, wanted for the value of the positions its play leads into, not
for its moves); the policy loss is ``sum(policy_w * ce) / batch``, its logged mean is over ``policy_w``.
Source shares (``source_shares``, ``[[source, share], ...]``) state the same as shares instead: the
positions under a source make ``share`` of the draws of each board size's batches, whatever their count
(``azgo.training.dataset.share_weights``); they replace the sample weights, not the policy weights.

Logs: ``<out>/train_log.csv`` (one row per ``log_every`` steps, ``kind=train``, and one per validation,
``kind=val``; on resume the rows after the checkpoint's step are dropped so the file stays
consistent), TensorBoard event files in ``<out>/tb`` when the ``tensorboard`` package is installed,
and a tqdm progress bar on stderr.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import math
import os
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from azgo.engine.planes import FEATURE_VERSION
from azgo.training import dataset as D
from azgo.training.model import NET_SIZES, SCORE_SCALE, AzNet, build_model, count_parameters

CHECKPOINT_NAME = "checkpoint.pt"
LOG_NAME = "train_log.csv"
TB_DIR = "tb"
CHECKPOINT_FORMAT = 1
DEFAULT_LOSS_WEIGHTS = (1.0, 1.0, 0.5, 0.2)
HEADS = ("policy", "value", "ownership", "score")
LOG_FIELDS = ("time_utc", "elapsed_s", "step", "kind", "lr", "samples", "loss", "policy", "value",
              "ownership", "score", "policy_acc", "samples_per_s")


class TrainError(RuntimeError):
    """A training run cannot start or continue (the message says why)."""


@dataclass
class TrainConfig:
    """Settings of one training run (the fields of ``azgo train``)."""

    data: list[str] = field(default_factory=list)
    out: str = "train"
    net: str = "b6c64"
    init: str | None = None
    resume: bool = False
    steps: int = 1000
    batch_size: int = 256
    lr: float = 0.02
    lr_steps: list[int] = field(default_factory=list)
    lr_decay: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 1e-4
    loss_weights: list[float] = field(default_factory=lambda: list(DEFAULT_LOSS_WEIGHTS))
    window: int | None = None
    val_fraction: float = 0.05
    val_positions: int = 4096
    checkpoint_every: int = 500
    log_every: int = 50
    validate_every: int = 500
    seed: int = 0
    threads: int | None = None
    workers: int = 0
    cache: bool = True
    cache_dir: str | None = None
    tensorboard: bool = True
    progress: bool = True
    device: str = "auto"
    swa_from: int = 0       # 0: off; else average the weights of every swa_every-th step from this step on
    swa_every: int = 50
    surprise_weight: float = 0.0  # KataGo's policy surprise weighting (AZK): this share of the sampling weight
    size_mix: dict[int, float] = field(default_factory=dict)  # batch board-size weights ({}: by positions)
    max_final_margin: float = 0.0  # drop ownership/score targets of games won by > this share of the board
    source_weights: list = field(default_factory=list)  # [source, sample weight, policy weight] per source
    source_shares: list = field(default_factory=list)  # [source, share of its size's draws(, group)] per source

    def check(self) -> None:
        parse_device(self.device)
        if self.swa_from < 0 or self.swa_every < 1:
            raise TrainError("swa_from must be >= 0 and swa_every >= 1")
        if self.net not in NET_SIZES:
            raise TrainError(f"unknown net size {self.net!r}; known: {', '.join(NET_SIZES)}")
        if self.steps < 0 or self.batch_size < 1:
            raise TrainError("steps must be >= 0 and batch_size >= 1")
        if len(self.loss_weights) != 4 or any(w < 0 for w in self.loss_weights):
            raise TrainError("loss_weights needs 4 non-negative numbers (policy, value, ownership, score)")
        if not 0 <= self.val_fraction < 1:
            raise TrainError("val_fraction must be in [0, 1)")
        if not 0 <= self.surprise_weight <= 1:
            raise TrainError("surprise_weight must be in [0, 1]")
        if any(not 7 <= int(n) <= 19 or w < 0 for n, w in self.size_mix.items()):
            raise TrainError("size_mix needs board sizes 7-19 with weights >= 0")
        if self.max_final_margin < 0:
            raise TrainError("max_final_margin must be >= 0")
        for item in self.source_weights:
            if len(item) != 3 or float(item[1]) < 0 or not 0 <= float(item[2]) <= 1:
                raise TrainError(f"source_weights needs [source, sample >= 0, policy in 0..1] items, got {item!r}")
        for item in self.source_shares:
            if len(item) not in (2, 3) or not 0 <= float(item[1]) <= 1:
                raise TrainError(f"source_shares needs [source, share in 0..1(, group)] items, got {item!r}")

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def parse_device(spec: str) -> tuple[str, int | None]:
    """``("auto"|"cpu"|"cuda", index or None)`` from "auto", "cpu", "cuda" or "cuda:N"; TrainError else."""
    from azgo.nets.evaluator import parse_device as parse
    try:
        return parse(spec)
    except ValueError as e:
        raise TrainError(str(e)) from None


def resolve_device(spec: str) -> torch.device:
    """The torch device for a ``--device`` setting ("auto": CUDA when torch sees a GPU, else the CPU).

    Raises TrainError with the reason when CUDA is asked for and torch cannot use it.
    """
    kind, index = parse_device(spec)
    if kind == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if kind == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = (f"this torch {torch.__version__} was built without CUDA" if torch.version.cuda is None
                 else f"torch {torch.__version__} (CUDA {torch.version.cuda}) finds no usable GPU or driver")
        raise TrainError(f"--device {spec}: torch sees no CUDA GPU ({build}). Use --device cpu (or auto), "
                         "or install a CUDA build of torch on a machine with an NVIDIA GPU")
    count = torch.cuda.device_count()
    if index is not None and index >= count:
        raise TrainError(f"--device {spec}: torch sees {count} CUDA device(s), numbered 0..{count - 1}")
    return torch.device("cuda", index if index is not None else torch.cuda.current_device())


def lr_at(config: TrainConfig, step: int) -> float:
    """Learning rate for the update that makes step ``step + 1`` (step decay at ``lr_steps``)."""
    passed = sum(1 for m in config.lr_steps if step >= m)
    return config.lr * config.lr_decay ** passed


def make_optimizer(model: torch.nn.Module, config: TrainConfig) -> torch.optim.SGD:
    """SGD with momentum; weight decay on conv/linear weights only (not on BN parameters or biases)."""
    decay, no_decay = [], []
    for p in model.parameters():
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


# ------------------------------------------------------------------------------------- checkpoints

def save_atomic(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` to a hidden temporary file beside ``path``, fsync, then ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    try:
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass
    return path


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Delete temporary files a killed `save_atomic` left beside ``path``; returns them."""
    path = Path(path)
    stale = sorted(path.parent.glob(f".{path.name}.*.tmp"))
    for p in stale:
        try:
            p.unlink()
        except OSError:
            pass
    return stale


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


# ------------------------------------------------------------------------------------- logs

def _utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class CsvLog:
    """``train_log.csv``: header once, rows appended and flushed; `truncate_after` for resumes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def truncate_after(self, step: int) -> None:
        """Drop rows logged after ``step`` (and any torn last line), atomically."""
        if not self.path.exists():
            return
        text = self.path.read_text(errors="replace")
        lines = text.splitlines(keepends=True)
        if not lines or lines[0].strip() != ",".join(LOG_FIELDS):
            self.path.replace(self.path.with_name(self.path.name + ".old"))
            return
        keep = [lines[0]]
        for line in lines[1:]:
            if not line.endswith("\n"):
                break
            row = next(csv.reader([line]), [])
            if len(row) != len(LOG_FIELDS):
                continue
            try:
                if int(row[2]) > step:
                    continue
            except ValueError:
                continue
            keep.append(line)
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text("".join(keep))
        os.replace(tmp, self.path)

    def write(self, row: dict[str, Any]) -> None:
        new = not self.path.exists() or self.path.stat().st_size == 0
        with open(self.path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=LOG_FIELDS, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
            f.flush()


def open_tensorboard(folder: Path, purge_step: int | None, log: Callable[[str], None]):
    """A ``SummaryWriter`` or None (with a note) when ``tensorboard`` is not installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except Exception as e:  # ImportError, or a broken tensorboard install
        log(f"note: TensorBoard logs off ({type(e).__name__}: {e}); CSV only")
        return None
    return SummaryWriter(str(folder), purge_step=purge_step)


# ------------------------------------------------------------------------------------- the run

class _StopFlag:
    """Turns SIGINT/SIGTERM into a flag checked at step boundaries (restored on exit)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self):
        for s in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[s] = signal.signal(s, self._handle)
            except (ValueError, OSError):  # not the main thread
                pass
        return self

    def _handle(self, signum, frame) -> None:
        if self.signal is not None:  # second signal: give up at once
            raise KeyboardInterrupt
        self.signal = signum

    def __exit__(self, *exc) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)


def _stderr(msg: str) -> None:
    try:
        from tqdm import tqdm
        tqdm.write(msg, file=sys.stderr)
    except ImportError:  # pragma: no cover
        print(msg, file=sys.stderr)


def _merge_resume_args(config: TrainConfig, saved: dict[str, Any], explicit: set[str] | None) -> TrainConfig:
    """Saved run settings, overridden by the fields given explicitly now (None: all of ``config``)."""
    if explicit is None:
        return dataclasses.replace(config, resume=True)
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    merged = {k: v for k, v in saved.items() if k in fields}
    for name in explicit & fields:
        merged[name] = getattr(config, name)
    merged["resume"] = True
    merged["out"] = config.out
    merged["device"] = config.device  # where to run is this machine's choice, not the checkpoint's
    return TrainConfig(**merged)


# ---- stage 1: what this run continues from

@dataclass
class _Start:
    """Where a run starts: its settings (merged with a resumed run's), and the checkpoint it continues
    (``resumed``) or takes its weights from (``init``), each None when there is none."""

    config: TrainConfig
    ckpt_file: Path
    resumed: dict[str, Any] | None
    init: dict[str, Any] | None


def _open_run(config: TrainConfig, explicit: set[str] | None, log: Callable[[str], None]) -> _Start:
    """Check ``--resume``/``--init`` against the run folder, merge resumed settings, clear stale temps."""
    out = Path(config.out)
    ckpt_file = checkpoint_path(out)
    resumed: dict[str, Any] | None = None
    if config.resume:
        if not ckpt_file.exists():
            raise TrainError(f"--resume: no checkpoint at {ckpt_file}")
        resumed = load_checkpoint(ckpt_file)
        config = _merge_resume_args(config, resumed.get("args", {}), explicit)
        if resumed["net"] != config.net:
            raise TrainError(f"the checkpoint is a {resumed['net']} network, not {config.net}")
    elif ckpt_file.exists():
        raise TrainError(f"{ckpt_file} exists: continue it with --resume, or choose another --out")
    init_ckpt = None
    if config.init and resumed is None:
        init_ckpt = load_checkpoint(config.init)
        if explicit is not None and "net" in explicit and config.net != init_ckpt["net"]:
            raise TrainError(f"--init {config.init} is a {init_ckpt['net']} network, not --net {config.net}")
        config = dataclasses.replace(config, net=init_ckpt["net"])
    config.check()
    out.mkdir(parents=True, exist_ok=True)
    for stale in remove_stale_temporaries(ckpt_file):
        log(f"removed {stale} (an unfinished checkpoint write)")
    if config.threads:
        torch.set_num_threads(config.threads)
    return _Start(config, ckpt_file, resumed, init_ckpt)


# ---- stage 2: data

def _load_data(start: _Start, explicit: set[str] | None, log: Callable[[str], None]):
    """``(train_set, val_set, summary)``: the resumed run's exact files, else the window of ``data``."""
    config, resumed = start.config, start.resumed
    t0 = time.perf_counter()
    files = None
    if resumed is not None and (explicit is None or "data" not in explicit) and resumed.get("data_files"):
        files = [f for f in resumed["data_files"] if os.path.exists(f)]
        missing = len(resumed["data_files"]) - len(files)
        if missing:
            log(f"warning: {missing} game files of the resumed run are gone")
    elif not config.data:
        raise TrainError("no SGF sources given")
    bar = None
    try:
        from tqdm import tqdm
        if files is None:
            files = D.select_window(D.find_sgf_files(config.data), config.window)
        bar = tqdm(total=len(files), desc="reading games", unit="game", file=sys.stderr,
                   disable=not config.progress, leave=False)
        train_set, val_set, summary = D.load_dataset(
            files=files, val_fraction=config.val_fraction, cache_dir=config.cache_dir,
            use_cache=config.cache, workers=config.workers, warn=lambda m: log(f"warning: {m}"),
            progress=bar.update,
            source_weights=config.source_weights, source_shares=config.source_shares)
    except D.DatasetError as e:
        raise TrainError(str(e)) from None
    finally:
        if bar is not None:
            bar.close()
    if len(train_set) == 0:
        raise TrainError(f"no training positions in {len(files)} game files "
                         f"({summary.skipped_files} unusable, {summary.val_games} held out)")
    log(f"data: {summary.train_games} games / {summary.train_positions} positions for training, "
        f"{summary.val_games} / {summary.val_positions} held out, {summary.skipped_files} files skipped, "
        f"{summary.cheap_skipped} cheap-search positions left out "
        f"({time.perf_counter() - t0:.1f} s)")
    for src, w, pw in config.source_weights:
        log(f"source weight {src}: sample x{float(w):g}, policy x{float(pw):g} "
            f"({summary.weighted.get(str(src), 0)} training games)")
    for n, shares in summary.shares.items():
        log(f"source shares of the {n}x{n} draws: " + ", ".join(f"{k} {v:.3f}" for k, v in shares.items()))
    dropped = train_set.drop_final_targets(config.max_final_margin)
    val_set.drop_final_targets(config.max_final_margin)
    if config.max_final_margin > 0:
        log(f"final margin above {config.max_final_margin:g} of the board: {dropped} training positions "
            f"lose their ownership/score targets ({int(train_set.count('final_w'))} keep them)")
    if config.size_mix:
        try:
            mix = train_set.set_size_mix({int(n): float(w) for n, w in config.size_mix.items()})
        except D.DatasetError as e:
            raise TrainError(str(e)) from None
        log("board-size mix: " + ", ".join(f"{n}x{n} {p:.2f}" for n, p in mix.items()))
    have = train_set.set_surprise_weight(config.surprise_weight)
    if config.surprise_weight > 0:
        log(f"policy surprise weighting {config.surprise_weight:g}: {have} of {len(train_set)} training positions "
            f"carry AZK (the others keep weight 1)")
    return train_set, val_set, summary


# ---- stage 3: model, optimiser, random state

@dataclass
class TrainState:
    """Everything a step changes and a checkpoint keeps: weights, optimiser, sampler RNG, step count.

    ``device`` is where the model and optimiser live; ``scaler`` is the mixed-precision GradScaler
    (CUDA only, else None).
    """

    model: AzNet
    optimizer: torch.optim.SGD
    rng: np.random.Generator
    device: torch.device
    scaler: Any = None
    step: int = 0
    swa: dict[str, torch.Tensor] | None = None  # running mean of the snapshots (CPU float32), or None
    swa_count: int = 0

    @property
    def amp(self) -> bool:
        """Whether steps run under float16 autocast (on CUDA)."""
        return self.device.type == "cuda"


def _build_state(start: _Start, device: torch.device) -> TrainState:
    """The model (resumed, ``--init`` or fresh from ``seed``) on ``device``, its optimiser and the RNGs.

    A resumed run restores the optimiser, the step and all three RNGs (numpy sampler, torch, python);
    a new one seeds them from ``config.seed``.
    """
    config, resumed = start.config, start.resumed
    if resumed is not None or start.init is not None:
        model = AzNet(config.net)
        model.load_state_dict((resumed or start.init)["model"])
    else:
        model = build_model(config.net, seed=config.seed)
    model.to(device).train()
    scaler = torch.amp.GradScaler("cuda") if device.type == "cuda" else None
    state = TrainState(model, make_optimizer(model, config), np.random.default_rng(config.seed), device, scaler)
    if resumed is not None:
        state.optimizer.load_state_dict(resumed["optimizer"])  # moves the state to the parameters' device
        if scaler is not None and resumed.get("scaler"):
            scaler.load_state_dict(resumed["scaler"])
        state.rng.bit_generator.state = resumed["rng"]["numpy"]
        torch.set_rng_state(resumed["rng"]["torch"])
        random.setstate(_as_random_state(resumed["rng"]["python"]))
        state.step = int(resumed["step"])
        if resumed.get("swa"):
            state.swa, state.swa_count = dict(resumed["swa"]["model"]), int(resumed["swa"]["count"])
    else:
        torch.manual_seed(config.seed)
        random.seed(config.seed)
    return state


# ---- stage 4: one step, and validation

def _forward(state: TrainState, batch: dict[str, torch.Tensor], weights):
    """``compute_losses`` of the model on ``batch``: float16 autocast for the network on CUDA, the
    losses in float32 (on the CPU: plain float32, exactly as without a device choice)."""
    if not state.amp:
        return compute_losses(state.model(batch["planes"]), batch, weights)
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        outputs = state.model(batch["planes"])
    return compute_losses(tuple(o.float() for o in outputs), batch, weights)


def train_step(state: TrainState, train_set, config: TrainConfig) -> dict[str, float]:
    """One SGD update on a freshly sampled batch (learning rate ``lr_at(step)``); returns its metrics.

    Raises TrainError (and changes nothing) when the loss is not finite.
    """
    for g in state.optimizer.param_groups:
        g["lr"] = lr_at(config, state.step)
    batch = to_tensors(train_set.sample(state.rng, config.batch_size), state.device)
    loss, metrics = _forward(state, batch, config.loss_weights)
    if not math.isfinite(metrics["loss"]):
        raise TrainError(f"loss is {metrics['loss']} at step {state.step + 1}; lower --lr")
    state.optimizer.zero_grad(set_to_none=True)
    if state.scaler is None:
        loss.backward()
        state.optimizer.step()
    else:  # skips the update when the float16 gradients overflowed, and adapts the scale
        state.scaler.scale(loss).backward()
        state.scaler.step(state.optimizer)
        state.scaler.update()
    state.step += 1
    return metrics


def validate(state: TrainState, val_batches: list[dict[str, np.ndarray]], weights) -> dict[str, float]:
    """Mean metrics of the model (in eval mode, no gradients) over the fixed held-out batches."""
    state.model.eval()
    means = MetricMeans()
    with torch.no_grad():
        for vb in val_batches:
            _, m = _forward(state, to_tensors(vb, state.device), weights)
            means.add(m)
    state.model.train()
    return means.means()


# ---- stage 4b: stochastic weight averaging (as KataGo exports averaged snapshots)

def swa_due(config: TrainConfig, step: int) -> bool:
    """Whether the weights after ``step`` join the average (every ``swa_every``-th step from ``swa_from``)."""
    return config.swa_from > 0 and step >= config.swa_from and (step - config.swa_from) % config.swa_every == 0


def swa_update(state: TrainState) -> None:
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


def swa_model(state: TrainState) -> AzNet:
    """A copy of the model holding the averaged weights (on the state's device, eval mode)."""
    model = copy.deepcopy(state.model)
    dtypes = {k: v.dtype for k, v in model.state_dict().items()}
    model.load_state_dict({k: v.to(dtype=dtypes[k]) for k, v in state.swa.items()})
    return model.eval()


# ---- stage 5: provenance and checkpoint

class _Provenance:
    """The ``training`` record of a checkpoint (read by ``azgo export`` into the net card).

    Carries over a resumed run's start time, commands, lineage, training seconds and last validation.
    """

    def __init__(self, start: _Start, command: str | None) -> None:
        prev = start.resumed.get("training") if start.resumed is not None else None
        prev = prev if isinstance(prev, dict) else {}
        self.started_utc = prev.get("started_utc") or _utc()
        self.commands = list(prev.get("commands", [])) + ([command] if command else [])
        self.lineage = list(prev.get("lineage", []))
        if start.init is not None:
            raw = start.init.get("training")
            parent = raw if isinstance(raw, dict) else {}
            self.lineage = list(parent.get("lineage", [])) + [{
                "checkpoint": os.path.abspath(start.config.init), "net": start.init["net"],
                "steps": parent.get("steps", start.init.get("step")), "samples": parent.get("samples"),
                "games": parent.get("games"), "positions": parent.get("positions"),
                "description": parent.get("summary") if parent else (str(raw) if raw else None),
            }]
        self.last_val: dict[str, float] | None = prev.get("last_validation")
        self.elapsed_base = float(prev.get("train_seconds", 0.0))
        self.run_t0 = time.perf_counter()

    def elapsed(self) -> float:
        """Training seconds over all runs of this checkpoint so far."""
        return self.elapsed_base + time.perf_counter() - self.run_t0

    def record(self, config: TrainConfig, step: int, summary, device: torch.device) -> dict[str, Any]:
        w = config.loss_weights
        return {
            "summary": (f"azgo train: {step} steps x batch {config.batch_size} = {step * config.batch_size} "
                        f"samples from {summary.train_positions} positions of {summary.train_games} games; "
                        f"SGD momentum {config.momentum}, lr {config.lr:g}, weight decay {config.weight_decay:g}"),
            "steps": step, "batch_size": config.batch_size, "samples": step * config.batch_size,
            "games": summary.train_games, "positions": summary.train_positions,
            "validation_games": summary.val_games, "validation_positions": summary.val_positions,
            "data": list(config.data), "window": config.window, "data_summary": summary.as_dict(),
            "feature_version": FEATURE_VERSION,
            "optimizer": {"type": "SGD", "momentum": config.momentum, "weight_decay": config.weight_decay,
                          "lr": config.lr, "lr_steps": list(config.lr_steps), "lr_decay": config.lr_decay},
            "loss_weights": {"policy": w[0], "value": w[1], "ownership": w[2], "score": w[3]},
            "augmentation": "random one of 8 board symmetries per sample",
            "seed": config.seed,
            "init": os.path.abspath(config.init) if config.init else f"random initialisation (seed {config.seed})",
            "lineage": self.lineage,
            "started_utc": self.started_utc, "updated_utc": _utc(),
            "train_seconds": round(self.elapsed(), 1),
            "commands": self.commands,
            "last_validation": self.last_val,
            "torch": str(torch.__version__), "threads": torch.get_num_threads(),
            "device": str(device) + (" (float16 autocast)" if device.type == "cuda" else ""),
        }


def make_checkpoint(state: TrainState, config: TrainConfig, summary, provenance: _Provenance) -> dict[str, Any]:
    """The checkpoint dict (see the module docstring), CPU tensors only; loadable with
    ``weights_only=True`` on any machine."""
    ckpt = {
        "format": CHECKPOINT_FORMAT,
        "net": config.net,
        "model": _cpu(state.model.state_dict()),
        "optimizer": _cpu(state.optimizer.state_dict()),
        "step": state.step,
        "rng": {"numpy": state.rng.bit_generator.state, "torch": torch.get_rng_state(),
                "python": _plain(random.getstate())},
        "args": config.as_dict(),
        "data_files": [os.path.abspath(f) for f in summary.files],
        "training": provenance.record(config, state.step, summary, state.device),
        "strength": "not measured",
    }
    if state.scaler is not None:
        ckpt["scaler"] = state.scaler.state_dict()
    if state.swa is not None:
        ckpt["swa"] = {"model": state.swa, "count": state.swa_count, "from": config.swa_from,
                       "every": config.swa_every}
    return ckpt


SWA_NAME = "swa.pt"


def make_swa_checkpoint(state: TrainState, config: TrainConfig, summary, provenance: _Provenance,
                        validation: dict[str, float] | None) -> dict[str, Any]:
    """A checkpoint of the averaged weights (``azgo export`` and ``--init`` read it like any other; it
    has no optimiser, so it does not resume): the run's provenance plus what was averaged."""
    record = provenance.record(config, state.step, summary, state.device)
    record["swa"] = (f"stochastic weight averaging: the mean of {state.swa_count} snapshots, every "
                     f"{config.swa_every} steps from step {config.swa_from} to {state.step}")
    record["summary"] += f"; {record['swa']}"
    record["last_validation"] = validation
    return {"format": CHECKPOINT_FORMAT, "net": config.net, "model": {k: v.clone() for k, v in state.swa.items()},
            "step": state.step, "args": config.as_dict(), "data_files": [os.path.abspath(f) for f in summary.files],
            "training": record, "strength": "not measured"}


# ---- stage 6: logging

class _RunLogs:
    """``train_log.csv`` and TensorBoard (if on); rows logged after ``step`` (by a run killed after its
    last checkpoint) are dropped at start so the logs match the state the run continues from."""

    def __init__(self, config: TrainConfig, step: int, provenance: _Provenance, log: Callable[[str], None]):
        out = Path(config.out)
        self.config = config
        self.provenance = provenance
        self.csv = CsvLog(out / LOG_NAME)
        self.csv.truncate_after(step)
        self.tb = open_tensorboard(out / TB_DIR, step + 1, log) if config.tensorboard else None

    def write(self, kind: str, step: int, metrics: dict[str, float], rate: float | None) -> None:
        """One ``kind`` ("train" or "val") row at ``step``; ``rate`` in samples/s (train rows)."""
        row = {"time_utc": _utc(), "elapsed_s": round(self.provenance.elapsed(), 2),
               "step": step, "kind": kind, "lr": lr_at(self.config, max(step - 1, 0)),
               "samples": step * self.config.batch_size, **metrics}
        if rate is not None:
            row["samples_per_s"] = round(rate, 1)
        self.csv.write(row)
        if self.tb is not None:
            for k, v in metrics.items():
                self.tb.add_scalar(f"{kind}/{k}", v, step)
            if kind == "train":
                self.tb.add_scalar("train/lr", row["lr"], step)
                if rate is not None:
                    self.tb.add_scalar("train/samples_per_s", rate, step)
            self.tb.flush()

    def close(self) -> None:
        if self.tb is not None:
            self.tb.close()


class _Interval:
    """Metric means and the sample rate since the last train row."""

    def __init__(self) -> None:
        self.means = MetricMeans()
        self.t0, self.steps = time.perf_counter(), 0

    def add(self, metrics: dict[str, float]) -> None:
        self.means.add(metrics)
        self.steps += 1

    def rate(self, batch_size: int) -> float | None:
        dt = time.perf_counter() - self.t0
        return self.steps * batch_size / dt if dt > 0 else None


# ---- the run

def _device_text(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)}, float16 autocast)"
    return f"the CPU ({torch.get_num_threads()} threads)"


def _every(step: int, n: int, last: int) -> bool:
    """Whether ``step`` is a multiple of ``n`` (``n`` 0: never) or the last step."""
    return (n > 0 and step % n == 0) or step == last


def run(config: TrainConfig, explicit: set[str] | None = None, command: str | None = None,
        log: Callable[[str], None] = _stderr) -> dict[str, Any]:
    """Train as ``config`` says; returns a summary dict (step, checkpoint path, data, last metrics).

    ``explicit``: the settings given on the command line; with ``resume`` the others come from the
    checkpoint (None: take ``config`` as it is). ``command`` is recorded in the provenance.
    """
    device = resolve_device(config.device)  # first: a missing GPU fails before anything is written
    start = _open_run(config, explicit, log)
    config = start.config
    train_set, val_set, summary = _load_data(start, explicit, log)
    state = _build_state(start, device)
    start_step = state.step
    provenance = _Provenance(start, command)
    logs = _RunLogs(config, state.step, provenance, log)
    val_batches = val_set.fixed_batches(config.val_positions, config.batch_size) if len(val_set) else []

    def save() -> None:
        save_atomic(make_checkpoint(state, config, summary, provenance), start.ckpt_file)

    log(f"training {config.net} ({count_parameters(state.model)} parameters) from step {state.step} to "
        f"{config.steps}, batch {config.batch_size}, on {_device_text(device)} -> {start.ckpt_file}")
    interval = _Interval()
    stopped_by: int | None = None
    progress = None
    try:
        from tqdm import tqdm
        progress = tqdm(total=config.steps, initial=state.step, unit="step", file=sys.stderr,
                        disable=not config.progress, dynamic_ncols=True)
        with _StopFlag() as stop:
            while state.step < config.steps:
                interval.add(train_step(state, train_set, config))
                step = state.step
                if swa_due(config, step):
                    swa_update(state)
                progress.update(1)
                if _every(step, max(config.log_every, 1), config.steps):
                    rate, m = interval.rate(config.batch_size), interval.means.means()
                    logs.write("train", step, m, rate)
                    progress.set_postfix(loss=f"{m.get('loss', math.nan):.3f}", sps=f"{rate or 0:.0f}",
                                         refresh=False)
                    interval = _Interval()
                if val_batches and _every(step, config.validate_every, config.steps):
                    provenance.last_val = validate(state, val_batches, config.loss_weights)
                    logs.write("val", step, provenance.last_val, None)
                    log(f"step {step}: validation "
                        + ", ".join(f"{k} {v:.4f}" for k, v in provenance.last_val.items()))
                if _every(step, config.checkpoint_every, config.steps):
                    save()
                if stop.signal is not None:
                    stopped_by = stop.signal
                    break
    finally:
        if progress is not None:
            progress.close()
        logs.close()
    if stopped_by is not None or state.step == start_step:
        save()
    swa_val = None
    if stopped_by is None and state.swa is not None and state.step >= config.steps:
        averaged = swa_model(state)
        if val_batches:
            swa_val = validate(TrainState(averaged, state.optimizer, state.rng, device), val_batches,
                               config.loss_weights)
            log(f"step {state.step}: validation of the average of {state.swa_count} snapshots (swa) "
                + ", ".join(f"{k} {v:.4f}" for k, v in swa_val.items()))
        path = save_atomic(make_swa_checkpoint(state, config, summary, provenance, swa_val),
                           Path(config.out) / SWA_NAME)
        log(f"wrote {path} (the averaged weights; azgo export {path} --out NET.onnx)")
    if stopped_by is not None:
        log(f"stopped by signal {stopped_by} at step {state.step}; checkpoint saved, continue with --resume")
    return {"step": state.step, "steps": config.steps, "checkpoint": str(start.ckpt_file), "stopped": stopped_by,
            "data": summary.as_dict(), "validation": provenance.last_val, "config": config.as_dict()}


def _plain(obj: Any) -> Any:
    """Python's random state as nested lists/ints (loadable with ``weights_only=True``)."""
    if isinstance(obj, tuple):
        return [_plain(x) for x in obj]
    return obj


def _as_random_state(obj: Any) -> Any:
    if isinstance(obj, list):
        return tuple(_as_random_state(x) for x in obj)
    return obj
