"""Small helpers of the recipe runner: file hashes, repository-relative paths, the ladder's columns."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

LADDER_FIELDS = ("generation", "line", "opponent", "size", "seconds", "games", "wins", "losses", "draws",
                 "score", "elo", "promoted", "core_hours")
LINEAGE_FILE = "lineage.json"
STAGES = ("selfplay", "train", "export", "quantize", "gate", "anchors", "promote", "publish")  # of a generation


def sha256(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def relative_paths(obj, root: str, run_dir: str):
    """``obj`` (JSON-like) with every absolute path under ``root`` made relative to it and every path
    under ``run_dir`` written as ``<run>/...``; other absolute paths keep only their file name."""
    if isinstance(obj, dict):
        return {relative_paths(k, root, run_dir): relative_paths(v, root, run_dir) for k, v in obj.items()}
    if isinstance(obj, list):
        return [relative_paths(v, root, run_dir) for v in obj]
    if isinstance(obj, str):
        out = obj
        for prefix, repl in ((os.path.realpath(run_dir), "<run>/"), (os.path.abspath(run_dir), "<run>/"),
                             (os.path.realpath(root), ""), (os.path.abspath(root), "")):
            out = out.replace(prefix + os.sep, repl).replace(prefix, repl.rstrip("/") or ".")
        home = os.path.expanduser("~")
        if home not in ("/", "~"):
            out = out.replace(home + os.sep, "~/")
        return out
    return obj
