"""A deterministic evaluator for search tests, computed from the input planes alone (no network).

Value: tanh(material / scale) for the side to move, material = own stones - opponent stones + the
side to move's komi (plane 25). Policy: every legal move weight 1, and weight ``tactic`` for moves next
to a chain in atari (either colour) or next to an opponent chain with two liberties (ataris), so
the search reads capture sequences out while the prior cannot tell a working atari from a failing one.
"""

from types import SimpleNamespace

import numpy as np

from azgo.engine import planes as P


class ScriptedEvaluator:
    def __init__(self, scale: float = 4.0, tactic: float = 30.0, score: bool = True, cost: float = 0.0,
                 clock=None):
        self.scale = scale
        self.tactic = tactic
        self.score = score
        self.calls = 0
        self.positions = 0
        self.cost = cost  # simulated seconds per call, added to ``clock`` (a FakeClock) if given
        self.clock = clock

    def evaluate(self, planes, legal, keys=None):
        self.calls += 1
        b, _, n, _ = planes.shape
        self.positions += b
        own = planes[:, P.OWN_STONES].reshape(b, -1)
        opp = planes[:, P.OPP_STONES].reshape(b, -1)
        komi = planes[:, P.KOMI_PLANE, 0, 0] * P.KOMI_SCALE
        material = own.sum(1) - opp.sum(1) + komi
        value = np.tanh(material / self.scale).astype(np.float32)
        hot = (planes[:, P.OWN_LIBERTIES] + planes[:, P.OPP_LIBERTIES] + planes[:, P.OPP_LIBERTIES + 1]) > 0
        pad = np.pad(hot, ((0, 0), (1, 1), (1, 1)))
        near = pad[:, :-2, 1:-1] | pad[:, 2:, 1:-1] | pad[:, 1:-1, :-2] | pad[:, 1:-1, 2:]
        w = np.ones((b, n * n + 1), dtype=np.float32)
        w[:, :-1] += (self.tactic - 1) * near.reshape(b, -1)
        w[:, -1] = 0.2
        w *= legal
        policy = w / w.sum(1, keepdims=True)
        if self.clock is not None:
            self.clock.t += self.cost
        return SimpleNamespace(policy=policy, value=value,
                               ownership=np.zeros((b, n * n), np.float32) if self.score else None,
                               score=material.astype(np.float32) if self.score else None)


class FakeClock:
    """A monotonic clock that the test moves forward (plus, optionally, the CPU time this process has spent since:
    the search's own work counts, other processes on a loaded machine do not)."""

    def __init__(self, real: bool = False):
        import time
        self._real = time.process_time if real else None
        self._start = self._real() if real else 0.0
        self.t = 0.0

    def __call__(self):
        return self.t + (self._real() - self._start if self._real else 0.0)
