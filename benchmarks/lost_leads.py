"""Games azgo lost from positions it counted as won: its own score lead along each lost game.

For every game of the given folders that azgo played (``PB``/``PW`` contains ``--player``) and lost, the
position before every ``--every``-th move is searched with the packaged network of the board size (int8,
``--visits`` visits, as ``azgo analysis`` would) and azgo's score lead (points, from its side) is kept. A lost
game whose largest lead reached ``--lead`` points or more is a game lost from a won position: the network
counted groups alive (or territory safe) that the opponent then took. Prints every lost game's largest lead
and the move where it was reached.

RESULT lines: ``lost_games``, ``lost_after_lead`` (how many of them passed a lead of ``--lead`` or more) and
``lost_after_lead_share``; with ``--won`` also ``won_games`` and ``won_with_lead_share`` (the same for the games
azgo won: how often its lead passes the mark at all, the base rate to read the first share against).

Usage: python3 benchmarks/lost_leads.py FOLDER... [--player azgo] [--lead 15] [--every 10] [--visits 100] [--quick]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

from azgo.engine.board import BLACK, WHITE
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.sgf import SgfError, load_sgf
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.registry import default_net_path


def azgo_colour(rec, player: str) -> int | None:
    p = player.lower()
    if p in (rec.black or "").lower():
        return BLACK
    if p in (rec.white or "").lower():
        return WHITE
    return None


def lead_curve(rec, colour: int, evaluator, every: int, visits: int) -> list[tuple[int, float]]:
    """(move number, azgo's score lead) before every ``every``-th move of the game."""
    out = []
    searcher = Searcher(evaluator, SearchConfig(), seed=1)
    for k in range(every, len(rec.moves), every):
        game = rec.to_game(k)
        r = searcher.search(game, Limits(visits=visits), reuse=False)
        if r.score_lead is None:
            continue
        lead = r.score_lead if game.to_move == colour else -r.score_lead
        out.append((k, lead))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--player", default="azgo")
    ap.add_argument("--lead", type=float, default=15.0)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="at most 3 lost games, every 30 moves")
    ap.add_argument("--won", action="store_true", help="also the games azgo won (the base rate)")
    args = ap.parse_args()
    files = sorted(f for d in args.folders for f in glob.glob(os.path.join(d, "**", "*.sgf"), recursive=True))
    evaluators: dict[int, OnnxEvaluator] = {}
    lost = passed = won = won_hit = 0
    t0 = time.perf_counter()
    every = 30 if args.quick else args.every
    for f in files:
        try:
            rec = load_sgf(f)
        except SgfError:
            continue
        colour = azgo_colour(rec, args.player)
        winner = rec.result[:1].upper()
        if colour is None or winner not in ("B", "W"):
            continue
        won_game = (winner == "B") == (colour == BLACK)
        if won_game and not args.won:
            continue
        if args.quick and lost >= 3:
            break
        n = rec.size
        if n not in evaluators:
            evaluators[n] = OnnxEvaluator(default_net_path(n), EvalConfig(threads=1, precision="auto"))
        curve = lead_curve(rec, colour, evaluators[n], every, args.visits)
        if won_game:
            won += 1
            won_hit += bool(curve) and max(v for _, v in curve) >= args.lead
            continue
        lost += 1
        if not curve:
            continue
        k, best = max(curve, key=lambda x: x[1])
        hit = best >= args.lead
        passed += hit
        print(f"{os.path.relpath(f)}: {rec.result}, {len(rec.moves)} moves; azgo's largest lead {best:+.1f} at move {k}"
              + (f"  <- lost after leading by {args.lead:g}+" if hit else ""), flush=True)
    print(f"# {lost} lost games, {passed} of them after a lead of {args.lead:g} points or more "
          f"({args.visits} visits every {every} moves; {time.perf_counter() - t0:.0f} s)")
    print(f"RESULT lost_games {lost}")
    print(f"RESULT lost_after_lead {passed}")
    print(f"RESULT lost_after_lead_share {passed / lost if lost else 0:.3f}")
    if args.won:
        print(f"RESULT won_games {won}")
        print(f"RESULT won_with_lead_share {won_hit / won if won else 0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
