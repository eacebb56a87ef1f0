"""What ladder reading costs the search (``SearchConfig.ladder_prior``, ``azgo.engine.ladder``).

Usage::

    python benchmarks/ladder_cost.py            # ~2 min
    python benchmarks/ladder_cost.py --quick    # < 1 min

Positions: moves 40, 80 and 120 of azgo's 13x13 games against GNU Go kept in
``docs/strength/campaign5/gnugo13_1s`` (real games, so chains in atari turn up as often as they do in
play), and moves 60, 120 and 180 of the 19x19 games in ``docs/strength/campaign5/gnugo19``. The packaged
big-board network (int8, one onnxruntime thread) searches each position to a fixed number of visits
with a fresh tree, ladder reading off (``LADDERS_OFF``: neither knob) and on (the defaults), alternately, and the
summed wall times are compared: the slowdown is ``seconds on / seconds off`` in one run. The reader
alone (``losing_escapes`` on every position of those games, both colours to move) is also timed.

The run ends with ``RESULT ladder_search_slowdown_13x13 <x>`` and ``RESULT ladder_search_slowdown_19x19
<x>`` (1.00 = free).
"""

from __future__ import annotations

import argparse
import glob
import os
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def games(folder: str, count: int):
    from azgo.engine.sgf import load_sgf
    return [load_sgf(p) for p in sorted(glob.glob(os.path.join(ROOT, folder, "*.sgf")))[:count]]


def reader_us(records) -> tuple[float, int, int]:
    """Mean microseconds of ``losing_escapes`` per position, positions read, positions with a hit."""
    from azgo.engine.board import Board
    from azgo.engine.ladder import losing_escapes
    spent, calls, hits = 0.0, 0, 0
    for rec in records:
        b = Board(rec.size)
        for colour, move in rec.moves:
            for side in (1, 2):
                b.to_move = side
                t = time.perf_counter()
                found = losing_escapes(b)
                spent += time.perf_counter() - t
                calls += 1
                hits += bool(found)
            b.play(move, colour)
    return spent / max(calls, 1) * 1e6, calls, hits


def search_seconds(evaluator, records, moves, visits, rounds) -> dict[str, float]:
    """Summed search seconds with ladder reading off (``LADDERS_OFF``) and on (the defaults), alternately."""
    from azgo.engine.mcts import LADDERS_OFF, SearchConfig
    from azgo.engine.search import Limits, Searcher
    configs = {"off": SearchConfig(**LADDERS_OFF), "on": SearchConfig()}
    total = dict.fromkeys(configs, 0.0)
    for _ in range(rounds):
        for rec in records:
            for mv in moves:
                if mv >= len(rec.moves):
                    continue
                game = rec.to_game(mv)
                for name, cfg in configs.items():
                    s = Searcher(evaluator, cfg, seed=1)
                    t = time.perf_counter()
                    s.search(game, Limits(visits=visits))
                    total[name] += time.perf_counter() - t
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer games and visits (< 1 min)")
    args = ap.parse_args()
    from azgo.engine.mcts import SearchConfig
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    from azgo.nets.registry import default_net_path

    cfg = SearchConfig()
    results = {}
    for size, folder, moves in ((13, "docs/strength/campaign5/gnugo13_1s", (40, 80, 120)),
                                (19, "docs/strength/campaign5/gnugo19", (60, 120, 180))):
        records = games(folder, 3 if args.quick else 6)
        us, calls, hits = reader_us(records)
        print(f"{size}x{size}: reader {us:.1f} us per position ({calls} positions, {hits} with a losing escape)")
        ev = OnnxEvaluator(default_net_path(size), EvalConfig(precision="int8"))
        visits = 200 if args.quick else 400
        total = search_seconds(ev, records, moves, visits, 1 if args.quick else 2)
        ratio = total["on"] / total["off"]
        print(f"{size}x{size}: search {visits} visits x positions: off {total['off']:.2f} s, on (ladder_prior "
              f"{cfg.ladder_prior:g}, ladder_capture_prior {cfg.ladder_capture_prior:g}) {total['on']:.2f} s, "
              f"slowdown {ratio:.3f}")
        results[size] = ratio
    print(f"RESULT ladder_search_slowdown_13x13 {results[13]:.2f}")
    print(f"RESULT ladder_search_slowdown_19x19 {results[19]:.2f}")


if __name__ == "__main__":
    main()
