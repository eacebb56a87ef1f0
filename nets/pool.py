"""`EvaluatorPool`: the network for each board size, loaded once on first use and then shared.

With an explicit network file every size uses it; otherwise each size gets the packaged network that
the registry names for it (:func:`azgo.nets.registry.default_net_path`). Two sizes served by the same
file share one `OnnxEvaluator` (and its cache).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .evaluator import EvalConfig, OnnxEvaluator
from .registry import default_net_path, resolve_net


class EvaluatorPool:
    """``for_size(n)`` -> the evaluator for n x n boards; ``loaded()`` -> the evaluators made so far."""

    def __init__(self, net: str | os.PathLike | None, config: EvalConfig):
        self.net = net
        self.config = config
        self._by_path: dict[Path, OnnxEvaluator] = {}
        self._lock = threading.Lock()

    def path_for(self, size: int) -> Path:
        return resolve_net(self.net) if self.net else default_net_path(size)

    def for_size(self, size: int) -> OnnxEvaluator:
        path = self.path_for(size).resolve()
        with self._lock:
            ev = self._by_path.get(path)
            if ev is None:
                ev = self._by_path[path] = OnnxEvaluator(path, self.config)
            return ev

    def loaded(self) -> list[OnnxEvaluator]:
        with self._lock:
            return list(self._by_path.values())
