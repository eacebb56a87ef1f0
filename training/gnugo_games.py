"""Generate an SGF archive of GNU Go self-play games (the supervised start of a training run).

Each game: GNU Go 3.8 plays both sides (``--mode gtp --chinese-rules --capture-all-dead --level L
--seed S``, so that dead stones are taken off before it passes and the final board's area ownership is
the training target for ownership and score) from a few random opening moves (for variety: GNU Go is
nearly deterministic), until both pass; the result is GNU Go's own ``final_score`` (which removes dead
stones). Games are written one SGF file each, atomically, into the output folder; the root carries ``AZM[gnugo-levelL]`` and the seed in ``AZS``.
There are no search statistics, so ``azgo train`` uses the played moves as policy targets; the random
opening moves carry ``AZT[0]`` so that training skips them.

Usage: azgo gnugo-games OUTDIR --games 500 --level 10 --size 9 --komi 7 --workers 2
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import time

from azgo.engine.atomic import atomic_write
from azgo.engine.board import BLACK
from azgo.engine.coords import gtp_to_move, move_to_gtp
from azgo.engine.game import Game
from azgo.engine.sgf import record_from_game, write_sgf
from azgo.gtp.match import EngineError, GtpClient
from azgo.gtp.opponents import OpponentMissing
from azgo.gtp.opponents import gnugo_binary as _gnugo_binary


def gnugo_binary() -> str:
    try:
        return _gnugo_binary()
    except OpponentMissing as e:
        sys.exit(str(e))


def play_one(out_dir: str, seed: int, level: int, size: int, komi: float, opening: int) -> str | None:
    rng = random.Random(seed)
    eng = GtpClient(f"{gnugo_binary()} --mode gtp --chinese-rules --capture-all-dead --level {level} --seed {seed}",
                    "GNU Go")
    try:
        eng.send(f"boardsize {size}")
        eng.send("clear_board")
        eng.send(f"komi {komi:g}")
        game = Game(size, komi)
        lo, hi = 2, size - 3  # random opening moves on the 3rd to (size-2)th lines
        for _ in range(opening):
            while True:
                m = rng.randrange(lo, hi + 1) * size + rng.randrange(lo, hi + 1)
                if game.board.is_legal(m):
                    break
            color = game.to_move
            game.play(m)
            eng.send(f"play {'black' if color == BLACK else 'white'} {move_to_gtp(m, size)}")
        while not game.over and game.move_number < 3 * size * size:
            color = game.to_move
            reply = eng.send(f"genmove {'black' if color == BLACK else 'white'}").lower()
            if reply == "resign":
                result = ("W" if color == BLACK else "B") + "+R"
                break
            game.play(gtp_to_move(reply, size), color)
        else:
            result = eng.send("final_score").upper()
            if result.startswith("0"):
                result = "0"
        # the random opening moves are not GNU Go's choices: AZT[0] keeps them out of policy training
        move_props = [{"AZT": "0"}] * opening
        rec = record_from_game(game, black=f"GNU Go {level}", white=f"GNU Go {level}", result=result,
                               root_props={"AZM": f"gnugo-level{level}", "AZS": str(seed)},
                               move_props=move_props)
        name = f"gnugo-l{level}-{size}x{size}-{seed:08d}.sgf"
        atomic_write(os.path.join(out_dir, name), write_sgf(rec))
        return name
    except (EngineError, ValueError) as e:
        print(f"seed {seed}: {e}", file=sys.stderr)
        return None
    finally:
        eng.close()


def _worker(args) -> str | None:
    return play_one(*args)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="azgo gnugo-games", description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--games", type=int, default=100, help="target number of games in OUT")
    ap.add_argument("--level", type=int, default=10)
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.0)
    ap.add_argument("--opening", type=int, default=3, help="random opening moves")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    have = {f for f in os.listdir(args.out) if f.endswith(".sgf")}
    jobs, seed = [], args.seed * 1_000_000
    while len(jobs) + len(have) < args.games:
        name = f"gnugo-l{args.level}-{args.size}x{args.size}-{seed:08d}.sgf"
        if name not in have:
            jobs.append((args.out, seed, args.level, args.size, args.komi, args.opening))
        seed += 1
    t = time.time()
    done = 0
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for name in pool.imap_unordered(_worker, jobs):
            done += name is not None
            if done % 10 == 0 or done == len(jobs):
                print(f"{done}/{len(jobs)} games, {time.time() - t:.0f} s", file=sys.stderr, flush=True)
    print(f"{done} new games; {len(have) + done} in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
