"""Life and death of big groups: does azgo's ownership call them as the game (and GNU Go) did?

Positions come from the games azgo lost (``PB``/``PW`` contains ``--player``): the position ``--before`` moves
(default 100, 60 and 30) before each game's end. Every chain of ``--min-stones`` (10) or more stones there is
labelled by what became of it: **dead** when its stones were captured before the end or GNU Go 3.8's
``final_status_list dead`` names them on the final position (GNU Go reads the ending; a resigned game ends
unsettled), else **alive**. azgo's call is the root ownership of a ``--visits`` (100) search of that position,
averaged over the chain, from the chain's own side: above 0 alive, below dead.

Prints the groups and ``RESULT ld_big_groups``, ``ld_accuracy`` (share called right), ``ld_dead_groups`` and
``ld_dead_called_alive`` (share of the dead groups azgo called alive: the collapses of the lost games).

Usage: python3 benchmarks/life_and_death.py FOLDER... [--player azgo] [--net NET] [--precision fp32] [--quick]
(``--net``: one network for every size, e.g. an earlier generation's, to compare generations on the same games.)
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

import numpy as np

from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import move_to_gtp
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.sgf import SgfError, load_sgf
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.registry import default_net_path


def gnugo_dead(rec, moves: int) -> set[int]:
    """GNU Go's dead stones on the position after ``moves`` moves of ``rec`` (move indices)."""
    exe = shutil.which("gnugo") or "/usr/games/gnugo"
    n = rec.size
    lines = [f"boardsize {n}", "clear_board", f"komi {rec.komi:g}"]
    black_setup, white_setup = rec.setup[0], rec.setup[1]  # handicap stones (AB) and any other setup
    lines += [f"play b {move_to_gtp(m, n)}" for m in black_setup]
    lines += [f"play w {move_to_gtp(m, n)}" for m in white_setup]
    for colour, move in rec.moves[:moves]:
        v = move_to_gtp(move, n)
        lines.append(f"play {'b' if colour == BLACK else 'w'} {v}")
    lines += ["final_status_list dead", "quit"]
    out = subprocess.run([exe, "--mode", "gtp", "--chinese-rules"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=300).stdout
    replies = [r for r in out.split("\n\n") if r.strip()]
    dead_reply = replies[-2].strip().lstrip("=").strip() if len(replies) >= 2 else ""
    from azgo.engine.coords import gtp_to_move
    return {gtp_to_move(v, n) for v in dead_reply.split()}


def chains(board, min_stones: int) -> list[tuple[int, list[int]]]:
    """(colour, stones) of every chain of at least ``min_stones`` stones."""
    return [(board.color_at(ch[0]), ch) for ch in board.chains() if len(ch) >= min_stones]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--player", default="azgo")
    ap.add_argument("--min-stones", type=int, default=10)
    ap.add_argument("--before", default="100,60,30", help="moves before the end, comma-separated")
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--net", default=None, help="one network for every size (default: the packaged network of each)")
    ap.add_argument("--precision", default="auto", choices=["auto", "int8", "fp32", "vnni"])
    ap.add_argument("--quick", action="store_true", help="at most 3 games, one position each")
    args = ap.parse_args()
    befores = [int(x) for x in args.before.split(",")] if not args.quick else [60]
    files = sorted(f for d in args.folders for f in glob.glob(os.path.join(d, "**", "*.sgf"), recursive=True))
    evaluators: dict[int, OnnxEvaluator] = {}
    t0 = time.perf_counter()
    total = right = dead = dead_alive = games = 0
    for f in files:
        try:
            rec = load_sgf(f)
        except SgfError:
            continue
        p = args.player.lower()
        colour = BLACK if p in (rec.black or "").lower() else WHITE if p in (rec.white or "").lower() else None
        winner = rec.result[:1].upper()
        if colour is None or winner not in ("B", "W") or (winner == "B") == (colour == BLACK):
            continue
        if args.quick and games >= 3:
            break
        games += 1
        n = rec.size
        if n not in evaluators:
            evaluators[n] = OnnxEvaluator(args.net or default_net_path(n), EvalConfig(threads=1, precision=args.precision))
        end = len(rec.moves)
        final = rec.to_game(end).board
        gone_dead = gnugo_dead(rec, end)
        for back in befores:
            k = end - back
            if k < 20:
                continue
            game = rec.to_game(k)
            r = Searcher(evaluators[n], SearchConfig(), seed=1).search(game, Limits(visits=args.visits), reuse=False)
            if r.ownership is None:
                continue
            own = np.asarray(r.ownership, np.float64).reshape(-1)  # side to move's view
            for c, ch in chains(game.board, args.min_stones):
                captured = any(final.color_at(m) != c for m in ch)
                is_dead = captured or any(m in gone_dead for m in ch)
                view = own[ch] * (1.0 if c == game.to_move else -1.0)
                called_alive = float(view.mean()) > 0
                total += 1
                right += called_alive != is_dead
                if is_dead:
                    dead += 1
                    dead_alive += called_alive
                    print(f"{os.path.relpath(f)} move {k}: {'B' if c == BLACK else 'W'} group of {len(ch)} at "
                          f"{move_to_gtp(ch[0], n)}: dead, azgo's ownership {view.mean():+.2f}"
                          + ("  <- called alive" if called_alive else ""), flush=True)
    print(f"# {games} lost games, {total} groups of {args.min_stones}+ stones {', '.join(map(str, befores))} moves "
          f"before the end; {time.perf_counter() - t0:.0f} s")
    print(f"RESULT ld_big_groups {total}")
    print(f"RESULT ld_accuracy {right / total if total else 0:.3f}")
    print(f"RESULT ld_dead_groups {dead}")
    print(f"RESULT ld_dead_called_alive {dead_alive / dead if dead else 0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
