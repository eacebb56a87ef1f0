"""Does a network understand komi and handicap? Its outputs on empty boards across komi, and on handicap starts.

For each board size (the packaged network of that size, or ``--net``): the empty board, Black to move, at
komi -10, -9, ..., 20 (``--quick``: every 2.5 points). Black's raw score lead should fall by about one point per
point of komi (the slope of a least-squares line, reported as a positive number: 1.0 is exact), and Black's
raw winrate should fall monotonically (reported: the number of komi steps where it rises by more than 0.005).
On 19x19 with komi 0.5: 2, 4 and 9 fixed handicap stones, White to move, searched with ``--visits`` (200)
visits; Black's lead is reported (a rough truth: ~7 points a stone, +8 or more with 2, +25 with 4, +60 with 9).

The empty board is one position. For a figure over many, ``--midgame N`` (default 200, 0 to skip) takes N real
positions of that size from the games under ``docs/strength`` and sets only their komi plane, so that the side to
move gets -10, 0, +10 and +20 points of komi; the mean rise of the side to move's raw lead per point of komi given
to it is ``komi_slope_midgame_<N>x<N>`` (1.0 exact; a network blind to komi scores 0).

Targets (the training-recipe issue): slope 0.6-1.4 on every size, winrate monotone, handicap leads as above.

Usage: python3 benchmarks/komi_handicap.py [--net NET.onnx] [--precision int8|fp32] [--sizes 9,13,19] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from azgo.engine.features import encode_game
from azgo.engine.game import Game
from azgo.engine import planes as P
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.registry import default_net_path


def evaluator(size: int, net: str | None, precision: str) -> OnnxEvaluator:
    return OnnxEvaluator(net or default_net_path(size), EvalConfig(threads=1, precision=precision, cache_size=0))


def komi_sweep(ev: OnnxEvaluator, size: int, komis: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Black's raw score lead and winrate on the empty board at each komi (Black to move: the side to move)."""
    games = [Game(size, k) for k in komis]
    planes = np.stack([encode_game(g) for g in games])
    legal = np.stack([g.board.legal_mask() for g in games])
    out = ev.evaluate(planes, legal)
    return np.asarray(out.score, np.float64), (np.asarray(out.value, np.float64) + 1) / 2


def midgame_slope(ev: OnnxEvaluator, size: int, count: int) -> tuple[float, int]:
    """(Rise of the side to move's raw lead per point of komi given to it, positions used), ``count`` positions.

    Only the komi plane changes: the side to move is given -10, 0, +10 and +20 points; the slope is the mean of
    (lead at +20 - lead at -10) / 30 over the positions (1.0: the lead counts the komi exactly).
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from int8_accuracy import positions_of_size
    root = Path(__file__).resolve().parent.parent
    planes, legal = positions_of_size([str(root / "docs" / "strength")], size, count, seed=3)
    planes = planes.astype(np.float32)
    leads = []
    for advantage in (-10.0, 0.0, 10.0, 20.0):
        x = planes.copy()
        x[:, P.KOMI_PLANE] = advantage / P.KOMI_SCALE
        leads.append(np.asarray(ev.evaluate(x, legal).score, np.float64))
    return float(np.mean(leads[3] - leads[0]) / 30.0), len(planes)


def handicap_lead(ev: OnnxEvaluator, stones: int, visits: int, size: int = 19) -> tuple[float, float]:
    """(Black's raw lead, Black's lead after ``visits`` visits) with ``stones`` handicap stones at komi 0.5."""
    game = Game(size, 0.5)
    game.place_fixed_handicap(stones)
    out = ev.evaluate(encode_game(game)[None], game.board.legal_mask()[None])
    raw = -float(out.score[0])  # White to move: its lead, negated
    result = Searcher(ev, SearchConfig(), seed=1).search(game, Limits(visits=visits))
    return raw, -float(result.score_lead)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--net", help="one network for every size (default: the packaged network of each size)")
    ap.add_argument("--precision", default="int8", choices=["int8", "fp32", "auto"])
    ap.add_argument("--sizes", default="9,13,19")
    ap.add_argument("--visits", type=int, default=200)
    ap.add_argument("--midgame", type=int, default=200, help="real positions per size for the mid-game slope")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    step = 2.5 if args.quick else 1.0
    komis = list(np.arange(-10.0, 20.0 + 1e-9, step))
    t0 = time.perf_counter()
    print(f"# komi_handicap | {args.precision} | komi {komis[0]:g}..{komis[-1]:g} step {step:g} | "
          f"handicap at {args.visits} visits")
    results = {}
    for n in sizes:
        ev = evaluator(n, args.net, args.precision)
        lead, win = komi_sweep(ev, n, komis)
        slope = -np.polyfit(komis, lead, 1)[0]
        rises = int(np.sum(np.diff(win) > 0.005))
        print(f"{n}x{n} ({ev.path.name}): Black's lead " + " ".join(f"{k:g}:{v:+.1f}" for k, v in zip(komis, lead)))
        print(f"{n}x{n}: Black's winrate " + " ".join(f"{k:g}:{w:.2f}" for k, w in zip(komis, win)))
        results[f"komi_slope_{n}x{n}"] = f"{slope:.3f}"
        results[f"komi_winrate_rises_{n}x{n}"] = str(rises)
        print(f"{n}x{n}: lead falls {slope:.2f} points per point of komi (target 0.6-1.4); "
              f"winrate rises at {rises} of {len(komis) - 1} steps (target 0)")
        if args.midgame > 0:
            mid, used = midgame_slope(ev, n, min(args.midgame, 100) if args.quick else args.midgame)
            print(f"{n}x{n}: over {used} real positions, the side to move's lead rises {mid:.2f} points per point "
                  f"of komi given to it (target 0.6-1.4)")
            results[f"komi_slope_midgame_{n}x{n}"] = f"{mid:.3f}"
    if 19 in sizes:
        ev = evaluator(19, args.net, args.precision)
        for stones in (2, 4, 9):
            raw, searched = handicap_lead(ev, stones, args.visits)
            print(f"19x19, {stones} stones, komi 0.5: Black's lead raw {raw:+.1f}, after {args.visits} visits "
                  f"{searched:+.1f}")
            results[f"handicap{stones}_lead_19x19"] = f"{searched:.1f}"
    print(f"# {time.perf_counter() - t0:.1f} s")
    for k, v in results.items():
        print(f"RESULT {k} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
