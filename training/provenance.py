"""The ``training`` record of a checkpoint (``azgo export`` copies it into the net card): commands, data,
optimiser, lineage of ``--init`` checkpoints, training seconds and the last validation, carried over resumes."""

from __future__ import annotations

import os
import time
from typing import Any

import torch

from azgo.engine.planes import FEATURE_VERSION

from .runlogs import utc_now


class Provenance:
    """The ``training`` record of a checkpoint (read by ``azgo export`` into the net card).

    Carries over a resumed run's start time, commands, lineage, training seconds and last validation.
    """

    def __init__(self, start, command: str | None) -> None:
        prev = start.resumed.get("training") if start.resumed is not None else None
        prev = prev if isinstance(prev, dict) else {}
        self.started_utc = prev.get("started_utc") or utc_now()
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

    def record(self, config, step: int, summary, device) -> dict[str, Any]:
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
            "started_utc": self.started_utc, "updated_utc": utc_now(),
            "train_seconds": round(self.elapsed(), 1),
            "commands": self.commands,
            "last_validation": self.last_val,
            "torch": str(torch.__version__), "threads": torch.get_num_threads(),
            "device": str(device) + (" (float16 autocast)" if device.type == "cuda" else ""),
        }
