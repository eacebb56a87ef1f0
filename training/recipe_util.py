"""Small helpers of the recipe runner: file hashes, repository-relative paths, the ladder's columns."""

from __future__ import annotations

from azgo.nets.card import file_sha256

from .portable import portable_paths

LADDER_FIELDS = ("generation", "line", "opponent", "size", "seconds", "games", "wins", "losses", "draws",
                 "score", "elo", "promoted", "core_hours")
LINEAGE_FILE = "lineage.json"
TRAINING_CHECKPOINT = "training.pt"  # in the lineage folder: a generation's training checkpoint, stopped part way
STAGES = ("selfplay", "train", "export", "quantize", "gate", "anchors", "promote", "publish")  # of a generation


sha256 = file_sha256  # a file's sha256 (hex), as the cards give it


def relative_paths(obj, root: str, run_dir: str):
    """``obj`` (JSON-like) with every absolute path under ``run_dir`` written as ``<run>/...``, under ``root``
    made relative to it, under the home folder as ``~/...``; other absolute paths keep only their file name
    (`azgo.training.portable.portable_paths`)."""
    return portable_paths(obj, root, run_dir)
