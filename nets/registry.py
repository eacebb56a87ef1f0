"""Where azgo's networks live: the packaged default network, path resolution, net cards, `NetError`.

Light at import time (standard library only); nothing here loads a network.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DEFAULT_NET_NAME = "default.onnx"
REGISTRY_NAME = "registry.json"


class NetError(ValueError):
    """A network file is missing, unreadable, not an azgo network, or does not fit the request.

    The message always names the file and the problem (e.g. the feature-version mismatch). Defined
    here (standard library only) so that callers can catch it without importing onnxruntime; it is
    re-exported by :mod:`azgo.nets.evaluator`.
    """


def _package_dir() -> Path:
    try:
        from importlib.resources import files

        path = Path(str(files("azgo.nets")))
    except (ImportError, ModuleNotFoundError, TypeError):  # pragma: no cover - unusual installs
        path = Path(__file__).resolve().parent
    if not (path / DEFAULT_NET_NAME).is_file():
        path = Path(__file__).resolve().parent
    return path


def packaged_registry() -> list[dict[str, Any]]:
    """The packaged networks by board size: ``registry.json``'s entries ``{"file", "sizes": [lo, hi]}``
    (empty when there is no registry: then ``default.onnx`` plays every size)."""
    path = _package_dir() / REGISTRY_NAME
    if not path.is_file():
        return []
    try:
        entries = json.loads(path.read_text())["networks"]
        return [e for e in entries if isinstance(e.get("file"), str) and len(e.get("sizes", ())) == 2]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise NetError(f"the packaged network registry {path} is unreadable: {exc}") from exc


def default_net_path(size: int | None = None) -> Path:
    """Path of the packaged network for ``size`` x ``size`` boards: the registry entry whose size
    range holds it, else (and for ``size`` None) ``nets/default.onnx``; see each net's card.
    Raises `NetError` if the package data is missing."""
    folder = _package_dir()
    path = folder / DEFAULT_NET_NAME
    if size is not None:
        for entry in packaged_registry():
            lo, hi = entry["sizes"]
            if lo <= size <= hi:
                path = folder / entry["file"]
                break
    if not path.is_file():
        raise NetError(f"the packaged network is missing: {path} "
                       "(make one with: python -m azgo.training.export --random --net b6c64 "
                       "--seed 0 --out nets/default.onnx)")
    return path


def resolve_net(path_or_none: str | os.PathLike | None) -> Path:
    """The network file to use: ``None`` (or ``""``) means the packaged default, otherwise the given
    path with ``~`` expanded. Raises `NetError` naming the path if the file does not exist."""
    if path_or_none is None or str(path_or_none) == "":
        return default_net_path()
    path = Path(path_or_none).expanduser()
    if path.is_dir():
        raise NetError(f"network path is a directory, not an .onnx file: {path}")
    if not path.is_file():
        raise NetError(f"network file not found: {path}")
    return path


def card_path(onnx_path: str | os.PathLike) -> Path:
    """The net card of ``<name>.onnx`` is ``<name>.json`` in the same folder."""
    return Path(onnx_path).with_suffix(".json")


def load_card(onnx_path: str | os.PathLike, missing_ok: bool = False) -> dict[str, Any] | None:
    """The net card (parsed JSON) of the network at ``onnx_path``.

    Raises `NetError` if the card is missing (unless ``missing_ok``, then returns None) or is not
    valid JSON object.
    """
    path = card_path(onnx_path)
    if not path.is_file():
        if missing_ok:
            return None
        raise NetError(f"no net card next to {onnx_path}: expected {path}")
    try:
        card = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NetError(f"net card {path} is not readable JSON: {exc}") from exc
    if not isinstance(card, dict):
        raise NetError(f"net card {path} is not a JSON object")
    return card
