"""The training loop behind ``azgo train``: SGF archives -> `AzNet` checkpoints (torch; CPU or CUDA).

One run in stages: what it continues from (a new run, ``--init``, or ``--resume`` of its own checkpoint),
the data (:mod:`azgo.training.dataset`: a window of recent games, ~5% held out by file-name hash, 8-fold random
symmetry per sample, source weights and shares, a board-size mix, policy surprise weighting), the model,
optimiser and random state, the steps with their validations, checkpoints and logs. The parts live in their
own modules: the objective and optimiser in :mod:`~azgo.training.losses`, checkpoints in
:mod:`~azgo.training.checkpoints`, provenance in :mod:`~azgo.training.provenance`, weight averaging in
:mod:`~azgo.training.swa`, logs in :mod:`~azgo.training.runlogs`, the device in :mod:`~azgo.training.device`,
signals in :mod:`~azgo.training.signals`.

Device (``device``, ``azgo train --device``): "auto" (CUDA when ``torch.cuda.is_available()``, else the CPU),
"cpu", "cuda" or "cuda:N". On CUDA the forward pass runs under ``torch.autocast`` (float16) with a
``GradScaler`` (the losses in float32); on the CPU everything is float32. Checkpoints always hold CPU
tensors, so a checkpoint written on a GPU resumes, exports and loads on a machine without one.

Checkpoints (``<out>/checkpoint.pt``) are written every ``checkpoint_every`` steps, at the end and on
SIGINT/SIGTERM (at a step boundary), atomically. A checkpoint holds ``net``, ``model``, ``optimizer``,
``step``, the RNG states (numpy sampler, torch, python), ``args``, ``data_files`` (the exact game files, so
``--resume`` reloads the same data) and ``training`` (provenance). Resuming from a checkpoint written at step
S and training to step N gives bit-for-bit the weights of an uninterrupted run to N (same threads, same
machine, on the CPU). The device is not taken from the checkpoint: ``--resume`` runs on the ``--device``
given now.

Board-size mix (``size_mix``), ``max_final_margin``, source weights (``source_weights``: sample and policy
weight per source) and source shares (``source_shares``: a source's share of its size's draws,
``azgo.training.dataset.share_weights``) shape what each batch draws; the policy loss is
``sum(policy_w * ce) / batch``.

Logs: ``<out>/train_log.csv`` (one row per ``log_every`` steps, ``kind=train``, and one per validation,
``kind=val``; on resume the rows after the checkpoint's step are dropped), TensorBoard event files in
``<out>/tb`` when the ``tensorboard`` package is installed, and a tqdm progress bar on stderr.
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from azgo.engine.atomic import remove_orphans
from azgo.training import dataset as D
from azgo.training.model import NET_SIZES, AzNet, build_model, count_parameters

from .checkpoints import (CHECKPOINT_FORMAT, CHECKPOINT_NAME, _as_random_state, _plain,  # noqa: F401
                          checkpoint_path, load_checkpoint, save_atomic)
from .device import device_text, parse_device, resolve_device  # noqa: F401
from .errors import TrainError
from .losses import (DEFAULT_LOSS_WEIGHTS, HEADS, MetricMeans, _cpu, compute_losses, lr_at,  # noqa: F401
                     make_optimizer, to_tensors)
from .provenance import Provenance
from .runlogs import LOG_FIELDS, LOG_NAME, TB_DIR, CsvLog, open_tensorboard, utc_now  # noqa: F401
from .signals import StopFlag
from .swa import SWA_NAME, swa_due, swa_model, swa_update  # noqa: F401


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
    komi_augment: float = 0.0  # this share of played-out positions trained at another komi (PositionSet.set_komi_augment)
    handicap_weight: float = 1.0  # games begun with 2+ handicap stones drawn this many times as often (load_dataset)
    komi_inputs: bool = False  # turn on the model's komi inputs (AzNet.set_komi_inputs); a checkpoint keeps them on
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
        if not 0 <= self.komi_augment <= 1:
            raise TrainError("komi_augment must be in [0, 1]")
        if self.handicap_weight < 0:
            raise TrainError("handicap_weight must be >= 0")
        for item in self.source_weights:
            if len(item) != 3 or float(item[1]) < 0 or not 0 <= float(item[2]) <= 1:
                raise TrainError(f"source_weights needs [source, sample >= 0, policy in 0..1] items, got {item!r}")
        for item in self.source_shares:
            if len(item) not in (2, 3) or not 0 <= float(item[1]) <= 1:
                raise TrainError(f"source_shares needs [source, share in 0..1(, group)] items, got {item!r}")

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ------------------------------------------------------------------------------------- the run

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
    for stale in remove_orphans(ckpt_file.parent, ckpt_file.name):
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
            source_weights=config.source_weights, source_shares=config.source_shares,
            handicap_weight=config.handicap_weight)
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
    if config.handicap_weight != 1.0:
        log(f"handicap weight {config.handicap_weight:g}: {summary.handicap_games} training games "
            f"({summary.handicap_positions} positions) begun with 2+ handicap stones")
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
    if config.komi_augment > 0:
        have = train_set.set_komi_augment(config.komi_augment)
        log(f"komi augmentation {config.komi_augment:g}: {have} played-out training positions may be drawn at "
            f"another komi ({train_set.komi_range[0]:g} to {train_set.komi_range[1]:g})")
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
    if config.komi_inputs and resumed is None:
        model.set_komi_inputs(True)
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


# ---- stage 5: provenance and checkpoint

def make_checkpoint(state: TrainState, config: TrainConfig, summary, provenance: Provenance) -> dict[str, Any]:
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


def make_swa_checkpoint(state: TrainState, config: TrainConfig, summary, provenance: Provenance,
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

    def __init__(self, config: TrainConfig, step: int, provenance: Provenance, log: Callable[[str], None]):
        out = Path(config.out)
        self.config = config
        self.provenance = provenance
        self.csv = CsvLog(out / LOG_NAME)
        self.csv.truncate_after(step)
        self.tb = open_tensorboard(out / TB_DIR, step + 1, log) if config.tensorboard else None

    def write(self, kind: str, step: int, metrics: dict[str, float], rate: float | None) -> None:
        """One ``kind`` ("train" or "val") row at ``step``; ``rate`` in samples/s (train rows)."""
        row = {"time_utc": utc_now(), "elapsed_s": round(self.provenance.elapsed(), 2),
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
    provenance = Provenance(start, command)
    logs = _RunLogs(config, state.step, provenance, log)
    val_batches = val_set.fixed_batches(config.val_positions, config.batch_size) if len(val_set) else []

    def save() -> None:
        save_atomic(make_checkpoint(state, config, summary, provenance), start.ckpt_file)

    log(f"training {config.net} ({count_parameters(state.model)} parameters) from step {state.step} to "
        f"{config.steps}, batch {config.batch_size}, on {device_text(device)} -> {start.ckpt_file}")
    interval = _Interval()
    stopped_by: int | None = None
    progress = None
    try:
        from tqdm import tqdm
        progress = tqdm(total=config.steps, initial=state.step, unit="step", file=sys.stderr,
                        disable=not config.progress, dynamic_ncols=True)
        with StopFlag() as stop:
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


