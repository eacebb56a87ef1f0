"""Training positions of many games (`PositionSet`), concatenated per board size, and batches from them.

Batches (`PositionSet.sample`) draw positions uniformly (or, with a surprise weight, partly in proportion to
``AZK``), one board size per batch, and apply one of the 8 symmetries per sample, consistently to planes,
policy and ownership. Each game's positions are `azgo.training.game_arrays.GameArrays`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from azgo.engine import planes as P
from azgo.engine import symmetry as sym

from .game_arrays import DatasetError, GameArrays, STORED_PLANES, unpack_planes


class PositionSet:
    """Positions of many games, concatenated per board size, with batch builders."""

    def __init__(self, games: Sequence[GameArrays] = (),
                 weights: Sequence[tuple[float, float]] | None = None) -> None:
        """``weights``: per game, ``(sample, policy)``: its positions' relative sampling weight and the
        weight of their policy loss (default ``(1, 1)`` for every game)."""
        if weights is not None and len(weights) != len(games):
            raise DatasetError("weights needs one (sample, policy) pair per game")
        by_size: dict[int, list[tuple[GameArrays, tuple[float, float]]]] = {}
        for i, g in enumerate(games):
            if len(g):
                w = (1.0, 1.0) if weights is None else (float(weights[i][0]), float(weights[i][1]))
                if w[0] < 0 or not 0 <= w[1] <= 1:
                    raise DatasetError(f"sample weight must be >= 0 and policy weight in [0, 1], got {w}")
                by_size.setdefault(g.size, []).append((g, w))
        self.arrays: dict[int, dict[str, np.ndarray]] = {}
        for n in sorted(by_size):
            group = by_size[n]
            self.arrays[n] = {name: np.concatenate([getattr(g, name) for g, _ in group])
                              for name in GameArrays.ARRAYS}
            self.arrays[n]["sample_w"] = np.concatenate(
                [np.full(len(g), w[0], np.float64) for g, w in group])
            self.arrays[n]["policy_w"] = np.concatenate(
                [np.full(len(g), w[1], np.float32) for g, w in group])
        self.games = sum(1 for g in games if len(g))
        self.sizes = sorted(self.arrays)
        self.counts = np.array([len(self.arrays[n]["value"]) for n in self.sizes], np.int64)
        self._cum: dict[int, np.ndarray] = {}  # per size: cumulative sampling weights (source, surprise)
        self._size_p = np.zeros(0)  # per size: probability of a batch (set_size_mix)
        self.set_size_mix(None)
        self.set_surprise_weight(0.0)
        self.komi_augment = 0.0
        self.komi_range = (-10.0, 20.0)

    def set_komi_augment(self, fraction: float, komi_range: tuple[float, float] = (-10.0, 20.0)) -> int:
        """Counterfactual komi for ``fraction`` of the sampled positions of games played out (``final_w``):
        the final board's area margin does not depend on komi, so the position is also a sample at another
        komi (a multiple of 0.5 drawn uniformly from ``komi_range``): its komi plane, score target and value
        target (the sign of that score; 0 for a draw) follow, ownership and policy stay. The score head
        then learns komi from every played-out game, not only from the few at unusual komi. Returns the
        positions that can be changed so."""
        if not 0 <= fraction <= 1:
            raise DatasetError(f"komi augmentation must be in [0, 1], got {fraction}")
        lo, hi = float(komi_range[0]), float(komi_range[1])
        if hi < lo:
            raise DatasetError(f"komi range must be [low, high], got {komi_range}")
        self.komi_augment, self.komi_range = float(fraction), (lo, hi)
        return int(sum(int((a["final_w"] > 0).sum()) for a in self.arrays.values()))

    def _augment_komi(self, rng: np.random.Generator, batch: dict[str, np.ndarray]) -> None:
        """`set_komi_augment`'s change, in place, on a sampled batch."""
        b = len(batch["value"])
        pick = (batch["final_w"] > 0) & (rng.random(b) < self.komi_augment)
        if not pick.any():
            return
        planes = batch["planes"]
        black = planes[pick, P.BLACK_TO_MOVE, 0, 0] > 0.5
        adv = planes[pick, P.KOMI_PLANE, 0, 0] * P.KOMI_SCALE  # the side to move's komi advantage now
        lo, hi = (round(2 * x) for x in self.komi_range)
        komi = rng.integers(lo, hi + 1, size=int(pick.sum())) / 2.0
        new_adv = np.where(black, -komi, komi)
        score = batch["score"][pick] - adv + new_adv  # the side to move's final margin at the new komi
        batch["score"][pick] = score
        batch["value"][pick] = np.sign(score)
        planes[pick, P.KOMI_PLANE] = (new_adv / P.KOMI_SCALE)[:, None, None]

    def set_size_mix(self, mix: dict[int, float] | None) -> dict[int, float]:
        """Choose each batch's board size with these relative weights (``{19: 0.6, 13: 0.3, 9: 0.1}``)
        instead of in proportion to the positions of each size; sizes in the data but not in ``mix`` are
        never drawn, sizes in ``mix`` but not in the data are an error. ``None`` or ``{}`` restores the
        proportional mix. Returns the probabilities now used, by size."""
        if not mix:
            self._size_p = self.counts / self.counts.sum() if len(self.sizes) else self.counts.astype(np.float64)
        else:
            missing = sorted(set(mix) - set(self.sizes))
            if missing:
                raise DatasetError(f"size mix names board sizes with no positions: {missing} "
                                   f"(the data has {self.sizes})")
            if any(w < 0 for w in mix.values()):
                raise DatasetError("size mix weights must be >= 0")
            w = np.array([float(mix.get(n, 0.0)) for n in self.sizes])
            if w.sum() <= 0:
                raise DatasetError("size mix weights sum to 0")
            self._size_p = w / w.sum()
        return {n: float(p) for n, p in zip(self.sizes, self._size_p)}

    def drop_final_targets(self, max_margin: float) -> int:
        """Remove the ownership and score targets (``final_w`` = 0) of positions whose game ended with an
        area margin above ``max_margin`` times the board's area: games played out until one side's
        stones were all dead (a loser that filled its own eyes rather than pass) teach that everything
        dies. 0 keeps every target. Returns how many positions lost their final targets."""
        if max_margin < 0:
            raise DatasetError(f"max final margin must be >= 0, got {max_margin}")
        if max_margin == 0:
            return 0
        dropped = 0
        for n in self.sizes:
            a = self.arrays[n]
            bad = (a["final_w"] > 0) & (np.abs(a["score"]) > max_margin * n * n)
            dropped += int(bad.sum())
            a["final_w"][bad] = 0.0
        return dropped

    def set_surprise_weight(self, weight: float) -> int:
        """Sample by policy surprise (KataGo's policy surprise weighting): of every position's sampling
        weight, ``1 - weight`` is uniform and ``weight`` is in proportion to its ``surprise`` (AZK)
        relative to the mean surprise of the positions of its board size that have one, so the mean
        weight stays 1; positions without AZK keep weight 1. 0 turns it off. Returns how many
        positions carry a surprise. The source weights (see `__init__`) multiply these weights."""
        if not 0.0 <= weight <= 1.0:
            raise DatasetError(f"surprise weight must be in [0, 1], got {weight}")
        self._cum = {}
        have = 0
        for n in self.sizes:
            k = self.arrays[n]["surprise"].astype(np.float64)
            base = self.arrays[n]["sample_w"]
            known = np.isfinite(k)
            have += int(known.sum())
            w = np.ones(len(k))
            if weight > 0.0 and known.any():
                mean = float(k[known].mean())
                if mean > 0:
                    w[known] = (1.0 - weight) + weight * k[known] / mean
            w = w * base
            if np.all(w == 1.0):
                continue  # uniform: plain integers are faster
            if w.sum() <= 0:
                raise DatasetError(f"every {n}x{n} position has sampling weight 0")
            self._cum[n] = np.cumsum(w)
        return have

    def __len__(self) -> int:
        return int(self.counts.sum())

    def count(self, key: str) -> float:
        """Sum of an array over all sizes (e.g. ``value_w`` = positions with a value target)."""
        return float(sum(a[key].sum() for a in self.arrays.values()))

    def batch(self, size: int, index: np.ndarray, symmetries: np.ndarray | int = 0) -> dict[str, np.ndarray]:
        """The batch of positions ``index`` of board size ``size`` with symmetry ``symmetries[i]``.

        Returns float32 arrays: ``planes`` [B, 26, N, N] (komi plane filled in), ``policy`` [B, N*N+1],
        ``value``, ``value_w``, ``ownership`` [B, N*N], ``score``, ``final_w``, ``policy_w`` (the
        policy loss weight of the position's source).
        """
        a = self.arrays[size]
        index = np.asarray(index, np.int64)
        b = len(index)
        ks = np.broadcast_to(np.asarray(symmetries, np.int64), (b,))
        n = size
        planes = np.empty((b, P.NUM_PLANES, n, n), np.float32)
        policy = np.empty((b, n * n + 1), np.float32)
        ownership = np.empty((b, n * n), np.float32)
        src_planes = unpack_planes(a["planes"][index], n)
        src_policy, src_own = a["policy"][index], a["ownership"][index]
        for k in np.unique(ks):
            sel = np.flatnonzero(ks == k)
            perm = sym.policy_permutation(int(k), n)
            planes[sel, :STORED_PLANES] = sym.apply_planes(src_planes[sel], int(k))
            policy[sel] = src_policy[sel][:, perm]
            ownership[sel] = src_own[sel][:, perm[:-1]]
        planes[:, P.KOMI_PLANE] = a["komi"][index][:, None, None]
        return {
            "planes": planes, "policy": policy, "ownership": ownership,
            "value": a["value"][index], "value_w": a["value_w"][index],
            "score": a["score"][index], "final_w": a["final_w"][index],
            "policy_w": a["policy_w"][index],
        }

    def sample(self, rng: np.random.Generator, batch_size: int, augment: bool = True) -> dict[str, np.ndarray]:
        """A random batch: one board size (in proportion to its positions, or by `set_size_mix`), positions drawn
        with replacement (uniformly, or by the source weights and `set_surprise_weight`), one random symmetry per sample
        when ``augment``."""
        if len(self) == 0:
            raise DatasetError("no positions to sample from")
        j = int(rng.choice(len(self.sizes), p=self._size_p)) if len(self.sizes) > 1 else 0
        n = self.sizes[j]
        cum = self._cum.get(n)
        if cum is None:
            index = rng.integers(0, int(self.counts[j]), size=batch_size)
        else:
            index = np.searchsorted(cum, rng.random(batch_size) * cum[-1], side="right")
            index = np.minimum(index, int(self.counts[j]) - 1)
        ks = rng.integers(0, sym.NUM_SYMMETRIES, size=batch_size) if augment else 0
        batch = self.batch(n, index, ks)
        if augment and self.komi_augment > 0:
            self._augment_komi(rng, batch)
        return batch

    def fixed_batches(self, limit: int, batch_size: int, seed: int = 12345) -> list[dict[str, np.ndarray]]:
        """Up to ``limit`` positions spread evenly over the set (identity symmetry), in batches; the
        same every call (for validation)."""
        total = len(self)
        if total == 0:
            return []
        out = []
        for n, count in zip(self.sizes, self.counts):
            take = int(min(count, max(1, round(limit * count / total))))
            index = np.unique(np.linspace(0, count - 1, take).round().astype(np.int64))
            for s in range(0, len(index), batch_size):
                out.append(self.batch(n, index[s:s + batch_size], 0))
        return out
