"""Records without machine paths: what a run writes into the tracked tree (checkpoints, network metadata,
lineage files) names files relative to the repository (or ``<run>/`` for the run folder, ``~/`` for the
home folder), never as this machine's absolute paths.

`portable_paths` rewrites strings inside JSON-like data; `portable_checkpoint` writes a copy of a training
checkpoint whose records (``training``, ``args``, ``data_files``) went through it; `portable_onnx` does the
same to a network's ``azgo_provenance`` metadata (weights untouched) and keeps its int8 copies pointing at
it (their ``fp32_sha256``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

# An absolute path inside free text: starts with "/" not glued to a word, a number, "~", another path or a
# URL's scheme, and runs to whitespace, a quote or punctuation that ends a path in a command or a sentence.
_ABSOLUTE = re.compile(r"(?<![\w.~<>/:-])/[^\s\"',;()\[\]{}=]+")

# Top folders whose paths belong to one machine (the checkout, root's home, scratch space): no tracked file
# names one.
MACHINE_FOLDERS = ("work", "root", "tmp")


def machine_path_re() -> re.Pattern:
    """An absolute path under one of `MACHINE_FOLDERS`, as `_ABSOLUTE` finds paths in text."""
    return re.compile(_ABSOLUTE.pattern.replace("/[", "/(?:" + "|".join(MACHINE_FOLDERS) + ")/[", 1))


def _prefixes(root: str | None, run_dir: str | None) -> list[tuple[str, str]]:
    out = []
    for path, repl in ((run_dir, "<run>"), (root, "")):
        if path:
            for p in {os.path.realpath(path), os.path.abspath(path)}:
                out.append((p.rstrip(os.sep), repl))
    home = os.path.expanduser("~")
    if home not in ("/", "~", ""):
        out.append((home.rstrip(os.sep), "~"))
    return out


def _portable_str(text: str, prefixes: list[tuple[str, str]]) -> str:
    def one(match: re.Match) -> str:
        path = match.group(0)
        tail = path.rstrip(".:")                  # a sentence's full stop or a colon is not part of the path
        rest = path[len(tail):]
        for prefix, repl in prefixes:
            if tail == prefix:
                return (repl or ".") + rest
            if tail.startswith(prefix + "/"):
                inner = tail[len(prefix) + 1:]
                return (f"{repl}/{inner}" if repl else inner) + rest
        return (os.path.basename(tail.rstrip("/")) or tail) + rest
    return _ABSOLUTE.sub(one, text)


def portable_paths(obj, root: str | None, run_dir: str | None = None):
    """``obj`` (JSON-like: dicts, lists, strings; keys too) with every absolute path in its strings rewritten:
    under ``run_dir`` as ``<run>/...``, under ``root`` relative to it, under the home folder as ``~/...``, and
    any other absolute path reduced to its file name. Other values are returned as they are."""
    return _portable(obj, _prefixes(root, run_dir))


def _portable(obj, prefixes):
    if isinstance(obj, dict):
        return {_portable(k, prefixes): _portable(v, prefixes) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_portable(v, prefixes) for v in obj)
    if isinstance(obj, str):
        return _portable_str(obj, prefixes)
    return obj


CHECKPOINT_RECORDS = ("training", "args", "data_files", "strength")


def portable_checkpoint(ckpt: dict, root: str | None, run_dir: str | None = None) -> dict:
    """A shallow copy of checkpoint ``ckpt`` whose records (`CHECKPOINT_RECORDS`) carry no machine path. The
    weights, optimiser and RNG states are the same objects. (``data_files`` then no longer resumes an
    interrupted run elsewhere: a published checkpoint starts generations, it does not resume one.)"""
    out = dict(ckpt)
    for key in CHECKPOINT_RECORDS:
        if key in out:
            out[key] = portable_paths(out[key], root, run_dir)
    return out


def write_portable_checkpoint(src: str | os.PathLike, dst: str | os.PathLike, root: str | None,
                              run_dir: str | None = None) -> bool:
    """Write `portable_checkpoint` of the checkpoint file ``src`` to ``dst`` (whole or not at all,
    `azgo.engine.atomic.atomic_write`); ``dst`` is left alone when it already holds the same bytes.
    Returns whether it was written."""
    import io

    import torch

    from azgo.engine.atomic import atomic_write
    buf = io.BytesIO()
    torch.save(portable_checkpoint(torch.load(src, map_location="cpu", weights_only=False), root, run_dir), buf)
    data = buf.getvalue()
    dst = Path(dst)
    if dst.exists() and dst.read_bytes() == data:
        return False
    atomic_write(dst, data)
    return True


def portable_onnx(path: str | os.PathLike, root: str | None, fp32_sha256: dict[str, str] | None = None) -> bool:
    """Rewrite network ``path``'s ``azgo_provenance`` metadata and an int8 copy's ``azgo_calibration`` record
    with `portable_paths` (weights untouched), and in the latter replace an old ``fp32_sha256`` by
    ``fp32_sha256[old]`` (the new hash of its rewritten source). Written whole or not at all; returns whether it changed."""
    import onnx

    from azgo.engine.atomic import atomic_target
    path = Path(path)
    model = onnx.load(str(path))
    changed = False
    for prop in model.metadata_props:
        value = json.loads(prop.value) if prop.key in ("azgo_provenance", "azgo_calibration") else None
        if prop.key == "azgo_provenance":
            new = portable_paths(value, root)
        elif prop.key == "azgo_calibration":
            new = portable_paths(value, root)
            if fp32_sha256 and value.get("fp32_sha256") in fp32_sha256:
                new["fp32_sha256"] = fp32_sha256[value["fp32_sha256"]]
        else:
            continue
        if new != value:
            prop.value = json.dumps(new, sort_keys=True)
            changed = True
    if changed:
        with atomic_target(path) as tmp:
            onnx.save(model, str(tmp))
    return changed
