"""Policy targets at few visits: Gumbel root search (sequential halving, improved policy) against PUCT with
Dirichlet noise, forced playouts and pruning (what self-play records today), both measured against a long
PUCT search of the same position.

Usage::

    python benchmarks/gumbel_target.py            # 9x9, 60 positions, reference 1600 visits
    python benchmarks/gumbel_target.py --quick    # < 1 min: 12 positions, reference 400 visits

Positions: every 4th position of the 9x9 games in ``docs/strength`` (shuffled, fixed seed), with the
packaged 9x9 network (fp32, one thread). For each budget (16, 32, 64 visits) and each method, one search
from a fresh tree per position gives a target distribution over the moves; the reference is the visit
distribution of a noiseless PUCT search of ``--reference`` visits. Printed per budget and method: the mean
KL divergence KL(reference || target) (nats; lower is closer) and how often the target's top move is the
reference's. A proxy for what a target teaches, not strength: whether Gumbel targets pay is for games of
networks trained on them to say.

Ends with ``RESULT gumbel_kl_<budget>`` and ``RESULT puct_kl_<budget>`` for each budget, then
``RESULT gumbel_vs_puct_kl_16`` (the ratio at 16 visits; below 1: Gumbel's target is closer).
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.sgf import SgfError, load_sgf
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.registry import default_net_path
from azgo.training.targets import policy_target

ROOT = Path(__file__).resolve().parent.parent


def positions(n: int, seed: int = 1):
    files = sorted(glob.glob(str(ROOT / "docs" / "strength" / "**" / "*.sgf"), recursive=True))
    rng = random.Random(seed)
    rng.shuffle(files)
    out = []
    for f in files:
        try:
            rec = load_sgf(f)
            if rec.size != 9:
                continue
            for k in range(4, len(rec.moves) - 4, 4):
                game = rec.to_game(k)
                if not game.over:
                    out.append(game)
        except (SgfError, ValueError):
            continue
        if len(out) >= 4 * n:
            break
    rng.shuffle(out)
    return out[:n]


def distribution(s: Searcher, counts_on_moves: np.ndarray) -> np.ndarray:
    out = np.zeros(s.root.board.size ** 2 + 1)
    out[s.root.moves] = counts_on_moves
    total = out.sum()
    return out / total if total > 0 else out


def kl(ref: np.ndarray, target: np.ndarray) -> float:
    eps = 1e-6
    t = (target + eps) / (target + eps).sum()
    nz = ref > 0
    return float(np.sum(ref[nz] * np.log(ref[nz] / t[nz])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=60)
    ap.add_argument("--reference", type=int, default=1600)
    ap.add_argument("--budgets", default="16,32,64")
    ap.add_argument("--gumbel-m", type=int, default=16)
    ap.add_argument("--c-scale", type=float, default=SearchConfig.gumbel_c_scale)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.positions, args.reference = min(args.positions, 12), min(args.reference, 400)
    budgets = [int(b) for b in args.budgets.split(",")]
    net = default_net_path(9)
    ev = OnnxEvaluator(net, EvalConfig(threads=1, precision="fp32", cache_size=0))
    games = positions(args.positions)
    print(f"# gumbel_target | net {net.name} | {len(games)} 9x9 positions | reference {args.reference} visits "
          f"| budgets {budgets} | gumbel m {args.gumbel_m} c_scale {args.c_scale:g} | load avg {os.getloadavg()[0]:.2f}", flush=True)
    t0 = time.perf_counter()
    # self-play's full-search settings for PUCT (noise, forced playouts, root temperature)
    puct_cfg = SearchConfig(batch_size=4, noise_fraction=0.25, dirichlet_total=10.83, forced_playouts_k=2.0,
                            root_policy_temperature=1.1, lcb=False)
    results: dict[tuple[str, int], list[tuple[float, bool]]] = {}
    for k, game in enumerate(games):
        ref_s = Searcher(ev, SearchConfig(batch_size=8, lcb=False), seed=k)
        ref_s.search(game, Limits(visits=args.reference), reuse=False)
        ref = distribution(ref_s, ref_s.root.N)
        best = int(np.argmax(ref))
        for budget in budgets:
            s = Searcher(ev, puct_cfg, seed=1000 + k)
            s.search(game, Limits(visits=budget), noise=True, reuse=False)
            t = policy_target(s, prune=True)
            t = t / t.sum() if t.sum() > 0 else t
            results.setdefault(("puct", budget), []).append((kl(ref, t), int(np.argmax(t)) == best))
            s = Searcher(ev, SearchConfig(batch_size=4, lcb=False, gumbel_c_scale=args.c_scale), seed=2000 + k)
            s.search(game, Limits(visits=budget), reuse=False, gumbel=args.gumbel_m)
            t = distribution(s, s.gumbel.policy_target(s.root)) if s.gumbel is not None else ref
            results.setdefault(("gumbel", budget), []).append((kl(ref, t), int(np.argmax(t)) == best))
    print(f"{len(games)} positions in {time.perf_counter() - t0:.0f} s")
    print(f"{'visits':>6} {'method':>7} {'KL(ref||target)':>16} {'top move = ref':>15}")
    means = {}
    for budget in budgets:
        for method in ("puct", "gumbel"):
            rows = results[(method, budget)]
            means[(method, budget)] = float(np.mean([r[0] for r in rows]))
            print(f"{budget:>6} {method:>7} {means[(method, budget)]:>16.3f} {np.mean([r[1] for r in rows]):>15.2f}")
    for budget in budgets:
        print(f"RESULT gumbel_kl_{budget} {means[('gumbel', budget)]:.3f}")
        print(f"RESULT puct_kl_{budget} {means[('puct', budget)]:.3f}")
    b0 = budgets[0]
    print(f"RESULT gumbel_vs_puct_kl_{b0} {means[('gumbel', b0)] / means[('puct', b0)]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
