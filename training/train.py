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
threads, same machine).

Logs: ``<out>/train_log.csv`` (one row per ``log_every`` steps, ``kind=train``, and one per validation,
``kind=val``; on resume the rows after the checkpoint's step are dropped so the file stays
consistent), TensorBoard event files in ``<out>/tb`` when the ``tensorboard`` package is installed,
and a tqdm progress bar on stderr.
"""

from __future__ import annotations

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

    def check(self) -> None:
        if self.net not in NET_SIZES:
            raise TrainError(f"unknown net size {self.net!r}; known: {', '.join(NET_SIZES)}")
        if self.steps < 0 or self.batch_size < 1:
            raise TrainError("steps must be >= 0 and batch_size >= 1")
        if len(self.loss_weights) != 4 or any(w < 0 for w in self.loss_weights):
            raise TrainError("loss_weights needs 4 non-negative numbers (policy, value, ownership, score)")
        if not 0 <= self.val_fraction < 1:
            raise TrainError("val_fraction must be in [0, 1)")

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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


def to_tensors(batch: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in batch.items()}


def compute_losses(outputs, batch: dict[str, torch.Tensor], weights=DEFAULT_LOSS_WEIGHTS):
    """``(objective, metrics)`` for network ``outputs`` on a batch (see the module docstring).

    ``metrics`` holds plain floats: ``loss``, the per-head means over samples having the target,
    ``policy_acc`` (top-1 agreement with the target's argmax) and the weight sums.
    """
    policy, value, ownership, score = outputs
    b = policy.shape[0]
    logp = F.log_softmax(policy, dim=1)
    pol = -(batch["policy"] * logp).sum(dim=1)
    vw, fw = batch["value_w"], batch["final_w"]
    val = (value - batch["value"]) ** 2
    own = ((ownership - batch["ownership"]) ** 2).mean(dim=1)
    sco = F.huber_loss(score / SCORE_SCALE, batch["score"] / SCORE_SCALE, reduction="none", delta=1.0)
    terms = (pol.mean(), (val * vw).sum() / b, (own * fw).sum() / b, (sco * fw).sum() / b)
    total = sum(w * t for w, t in zip(weights, terms))
    with torch.no_grad():
        vsum, fsum = float(vw.sum()), float(fw.sum())
        metrics = {
            "loss": float(total),
            "policy": float(terms[0]),
            "value": float((val * vw).sum()) / vsum if vsum else math.nan,
            "ownership": float((own * fw).sum()) / fsum if fsum else math.nan,
            "score": float((sco * fw).sum()) / fsum if fsum else math.nan,
            "policy_acc": float((policy.argmax(1) == batch["policy"].argmax(1)).float().mean()),
            "value_n": vsum, "final_n": fsum, "n": float(b),
        }
    return total, metrics


class MetricMeans:
    """Averages of per-batch metrics, weighted by the samples that had each target."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.weights: dict[str, float] = {}

    def add(self, m: dict[str, float]) -> None:
        w_of = {"value": m["value_n"], "ownership": m["final_n"], "score": m["final_n"]}
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
    return TrainConfig(**merged)


def run(config: TrainConfig, explicit: set[str] | None = None, command: str | None = None,
        log: Callable[[str], None] = _stderr) -> dict[str, Any]:
    """Train as ``config`` says; returns a summary dict (step, checkpoint path, data, last metrics).

    ``explicit``: the settings given on the command line; with ``resume`` the others come from the
    checkpoint (None: take ``config`` as it is). ``command`` is recorded in the provenance.
    """
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

    # ---- data
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
        candidates = files if files is not None else D.select_window(D.find_sgf_files(config.data), config.window)
        files = candidates
        bar = tqdm(total=len(files), desc="reading games", unit="game", file=sys.stderr,
                   disable=not config.progress, leave=False)
        train_set, val_set, summary = D.load_dataset(
            files=files, val_fraction=config.val_fraction, cache_dir=config.cache_dir,
            use_cache=config.cache, workers=config.workers, warn=lambda m: log(f"warning: {m}"),
            progress=bar.update)
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

    # ---- model, optimizer, RNG
    if resumed is not None:
        model = AzNet(config.net)
        model.load_state_dict(resumed["model"])
    elif init_ckpt is not None:
        model = AzNet(config.net)
        model.load_state_dict(init_ckpt["model"])
    else:
        model = build_model(config.net, seed=config.seed)
    model.train()
    optimizer = make_optimizer(model, config)
    rng = np.random.default_rng(config.seed)
    step = 0
    train_seconds = 0.0
    provenance_prev: dict[str, Any] = {}
    if resumed is not None:
        optimizer.load_state_dict(resumed["optimizer"])
        rng.bit_generator.state = resumed["rng"]["numpy"]
        torch.set_rng_state(resumed["rng"]["torch"])
        random.setstate(_as_random_state(resumed["rng"]["python"]))
        step = int(resumed["step"])
        prev = resumed.get("training")
        provenance_prev = prev if isinstance(prev, dict) else {}
        train_seconds = float(provenance_prev.get("train_seconds", 0.0))
    else:
        torch.manual_seed(config.seed)
        random.seed(config.seed)
    start_step = step

    # rows and events logged after the checkpoint (or by a fresh run killed before its first
    # checkpoint) are dropped, so the logs match the state we continue from
    csv_log = CsvLog(out / LOG_NAME)
    csv_log.truncate_after(step)
    tb = open_tensorboard(out / TB_DIR, step + 1, log) if config.tensorboard else None

    started_utc = provenance_prev.get("started_utc") or _utc()
    commands = list(provenance_prev.get("commands", []))
    if command:
        commands.append(command)
    lineage = list(provenance_prev.get("lineage", []))
    if init_ckpt is not None:
        raw = init_ckpt.get("training")
        parent = raw if isinstance(raw, dict) else {}
        lineage = list(parent.get("lineage", [])) + [{
            "checkpoint": os.path.abspath(config.init), "net": init_ckpt["net"],
            "steps": parent.get("steps", init_ckpt.get("step")), "samples": parent.get("samples"),
            "games": parent.get("games"), "positions": parent.get("positions"),
            "description": parent.get("summary") if parent else (str(raw) if raw else None),
        }]
    val_batches = val_set.fixed_batches(config.val_positions, config.batch_size) if len(val_set) else []
    last_val: dict[str, float] | None = provenance_prev.get("last_validation")
    run_t0 = time.perf_counter()
    elapsed_base = train_seconds

    def provenance() -> dict[str, Any]:
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
            "lineage": lineage,
            "started_utc": started_utc, "updated_utc": _utc(),
            "train_seconds": round(elapsed_base + time.perf_counter() - run_t0, 1),
            "commands": commands,
            "last_validation": last_val,
            "torch": str(torch.__version__), "threads": torch.get_num_threads(),
        }

    def save() -> None:
        ckpt = {
            "format": CHECKPOINT_FORMAT,
            "net": config.net,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "step": step,
            "rng": {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state(),
                    "python": _plain(random.getstate())},
            "args": config.as_dict(),
            "data_files": [os.path.abspath(f) for f in summary.files],
            "training": provenance(),
            "strength": "not measured",
        }
        save_atomic(ckpt, ckpt_file)

    def validate() -> dict[str, float]:
        model.eval()
        means = MetricMeans()
        with torch.no_grad():
            for vb in val_batches:
                t = to_tensors(vb)
                _, m = compute_losses(model(t["planes"]), t, config.loss_weights)
                means.add(m)
        model.train()
        return means.means()

    def write_logs(kind: str, metrics: dict[str, float], rate: float | None) -> None:
        row = {"time_utc": _utc(), "elapsed_s": round(elapsed_base + time.perf_counter() - run_t0, 2),
               "step": step, "kind": kind, "lr": lr_at(config, max(step - 1, 0)),
               "samples": step * config.batch_size, **metrics}
        if rate is not None:
            row["samples_per_s"] = round(rate, 1)
        csv_log.write(row)
        if tb is not None:
            for k, v in metrics.items():
                tb.add_scalar(f"{kind}/{k}", v, step)
            if kind == "train":
                tb.add_scalar("train/lr", row["lr"], step)
                if rate is not None:
                    tb.add_scalar("train/samples_per_s", rate, step)
            tb.flush()

    log(f"training {config.net} ({count_parameters(model)} parameters) from step {step} to {config.steps}, "
        f"batch {config.batch_size}, {torch.get_num_threads()} threads -> {ckpt_file}")
    means = MetricMeans()
    interval_t0, interval_steps = time.perf_counter(), 0
    stopped_by: int | None = None
    progress = None
    try:
        from tqdm import tqdm
        progress = tqdm(total=config.steps, initial=step, unit="step", file=sys.stderr,
                        disable=not config.progress, dynamic_ncols=True)
        with _StopFlag() as stop:
            while step < config.steps:
                lr = lr_at(config, step)
                for g in optimizer.param_groups:
                    g["lr"] = lr
                batch = to_tensors(train_set.sample(rng, config.batch_size))
                outputs = model(batch["planes"])
                loss, metrics = compute_losses(outputs, batch, config.loss_weights)
                if not math.isfinite(metrics["loss"]):
                    raise TrainError(f"loss is {metrics['loss']} at step {step + 1}; lower --lr")
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                step += 1
                interval_steps += 1
                means.add(metrics)
                progress.update(1)
                if step % max(config.log_every, 1) == 0 or step == config.steps:
                    dt = time.perf_counter() - interval_t0
                    rate = interval_steps * config.batch_size / dt if dt > 0 else None
                    m = means.means()
                    write_logs("train", m, rate)
                    progress.set_postfix(loss=f"{m.get('loss', math.nan):.3f}",
                                         sps=f"{rate or 0:.0f}", refresh=False)
                    means = MetricMeans()
                    interval_t0, interval_steps = time.perf_counter(), 0
                if val_batches and ((config.validate_every and step % config.validate_every == 0)
                                    or step == config.steps):
                    last_val = validate()
                    write_logs("val", last_val, None)
                    log(f"step {step}: validation " + ", ".join(f"{k} {v:.4f}" for k, v in last_val.items()))
                if (config.checkpoint_every and step % config.checkpoint_every == 0) or step == config.steps:
                    save()
                if stop.signal is not None:
                    stopped_by = stop.signal
                    break
    finally:
        if progress is not None:
            progress.close()
        if tb is not None:
            tb.close()
    if stopped_by is not None or step == start_step:
        save()
    if stopped_by is not None:
        log(f"stopped by signal {stopped_by} at step {step}; checkpoint saved, continue with --resume")
    return {"step": step, "steps": config.steps, "checkpoint": str(ckpt_file), "stopped": stopped_by,
            "data": summary.as_dict(), "validation": last_val, "config": config.as_dict()}


def _plain(obj: Any) -> Any:
    """Python's random state as nested lists/ints (loadable with ``weights_only=True``)."""
    if isinstance(obj, tuple):
        return [_plain(x) for x in obj]
    return obj


def _as_random_state(obj: Any) -> Any:
    if isinstance(obj, list):
        return tuple(_as_random_state(x) for x in obj)
    return obj
