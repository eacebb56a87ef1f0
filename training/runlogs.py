"""The logs of a training run: ``train_log.csv`` (truncated to the resumed step) and TensorBoard events."""

from __future__ import annotations

import csv
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from azgo.engine.atomic import atomic_write

LOG_NAME = "train_log.csv"
TB_DIR = "tb"
LOG_FIELDS = ("time_utc", "elapsed_s", "step", "kind", "lr", "samples", "loss", "policy", "value",
              "ownership", "score", "policy_acc", "samples_per_s")


def utc_now() -> str:
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
        atomic_write(self.path, "".join(keep))

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
