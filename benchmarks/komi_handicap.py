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

The empty board's lead alone does not say whether its level is right: in self-play at the fair komi the
side that wins on average need not be Black. ``--selfplay FOLDER`` compares Black's raw lead with the final
margin over the games there of that size that began on the empty board (no forked start, no handicap) and were
played out to a score (any komi): its mean error at move 0 and over moves 0, 1, 2, 4, 8, 16, 30 is
``lead_bias_<N>x<N>`` (0 is right; positive: Black's lead too high).

Targets (the training-recipe issue): slope 0.6-1.4 on every size, winrate monotone, handicap leads as above.

Usage: python3 benchmarks/komi_handicap.py [--net NET.onnx] [--precision int8|fp32] [--sizes 9,13,19]
                                          [--selfplay FOLDER] [--quick]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from azgo.engine.board import BLACK, WHITE
from azgo.engine.features import encode_game
from azgo.engine.game import Game
from azgo.engine import planes as P
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.sgf import load_sgf
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


SAMPLE_MOVES = (0, 1, 2, 4, 8, 16, 30)


def lead_bias(ev: OnnxEvaluator, size: int, folder: str, limit: int = 400) -> tuple[float, float, int]:
    """(Mean of Black's raw lead - final margin at move 0, the same over `SAMPLE_MOVES`, games used): the
    first ``limit`` games of ``size`` in ``folder`` that began on the empty board (no ``AZO`` forked start,
    no handicap stones) and ended with a score (``B+3.5``, ``W+1``; draws as 0), at whatever komi."""
    first, every, used = [], [], 0
    for path in sorted(glob.glob(os.path.join(folder, "*.sgf"))):
        rec = load_sgf(path)
        props = rec.root_props
        scored = re.fullmatch(r"([BW])\+(\d+(?:\.\d+)?)", rec.result or "")
        if (rec.size != size or not rec.moves or "AZO" in props or rec.handicap or any(rec.setup)
                or rec.first_player == WHITE or not (scored or rec.result == "0")):
            continue
        final = 0.0 if not scored else float(scored.group(2)) * (1 if scored.group(1) == "B" else -1)
        moves = [k for k in SAMPLE_MOVES if k < len(rec.moves)]
        games = [rec.to_game(k) for k in moves]
        out = ev.evaluate(np.stack([encode_game(g) for g in games]), np.stack([g.board.legal_mask() for g in games]))
        black = [float(v) if g.to_move == BLACK else -float(v) for g, v in zip(games, out.score)]
        first.append(black[0] - final)
        every.extend(b - final for b in black)
        used += 1
        if used >= limit:
            break
    if not used:
        raise SystemExit(f"no played-out {size}x{size} game from the empty board in {folder}")
    return float(np.mean(first)), float(np.mean(every)), used


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--net", help="one network for every size (default: the packaged network of each size)")
    ap.add_argument("--precision", default="int8", choices=["int8", "fp32", "auto"])
    ap.add_argument("--sizes", default="9,13,19")
    ap.add_argument("--visits", type=int, default=200)
    ap.add_argument("--midgame", type=int, default=200, help="real positions per size for the mid-game slope")
    ap.add_argument("--selfplay", metavar="FOLDER", help="self-play games for the lead's level (lead_bias_<N>x<N>)")
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
        if args.selfplay:
            at0, over, used = lead_bias(ev, n, args.selfplay, 100 if args.quick else 400)
            print(f"{n}x{n}: over {used} played-out self-play games from the empty board, Black's raw lead minus the "
                  f"final margin: {at0:+.2f} at move 0, {over:+.2f} over moves {', '.join(map(str, SAMPLE_MOVES))}")
            results[f"lead_bias_{n}x{n}"] = f"{over:.2f}"
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
