"""Were azgo's resignations right? Play each game azgo resigned on from the position where it resigned, with
resignation off, against the same opponent, and count what it still gets.

    python benchmarks/resigned_games.py docs/strength/pachi9banked/pachi9 \
        --engine "azgo gtp --threads 1 --visits 1400 --resign-threshold 0" \
        --opponent "~/.cache/azgo/pachi-lag0.2/pachi -t =10000 threads=1,pondering=0,pass_all_alive" --tries 2

Reads every ``*.sgf`` under the folder (``part*/`` too), keeps the games whose player named ``--name`` (a substring
of PB/PW, default ``azgo``) lost by resignation on its own move, and plays each ``--tries`` times from the final
position (azgo to move) to the end: two passes, Tromp-Taylor area score, or the opponent's resignation. A fixed
visit/playout budget (as above) keeps the result independent of what else runs on the machine; ``--time`` gives
both engines a clock instead. Each continuation is written as SGF under ``--sgf-dir`` when given.

A resignation is right when azgo loses the continuation; a continuation azgo wins or draws is a game the rule
gave away (against this opponent, at this budget). Ends with ``RESULT resigned_games N`` (games azgo resigned),
``RESULT resigned_continuations N``, ``RESULT resigned_points P`` (azgo's points in them, draws halved) and
``RESULT resigned_salvaged_share X`` (P / continuations). ``--quick``: the first 2 games, 1 try each.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

from azgo.engine.atomic import atomic_write
from azgo.engine.board import BLACK, WHITE
from azgo.engine.sgf import load_sgf, record_from_game, write_sgf
from azgo.gtp.match import GtpClient, parse_time_control, play_game


def resigned_games(folder: str, name: str) -> list[dict]:
    """The even games in ``folder`` that the player named ``name`` lost by resigning on its own move: path, size,
    komi, azgo's colour and the moves ``[(color, move index)]`` up to the resignation."""
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "**", "*.sgf"), recursive=True)):
        if f"{os.sep}void{os.sep}" in path:
            continue
        rec = load_sgf(path)
        if name in rec.black and name not in rec.white:
            ours = BLACK
        elif name in rec.white and name not in rec.black:
            ours = WHITE
        else:
            continue
        if rec.result.upper() != ("W+R" if ours == BLACK else "B+R") or rec.handicap or any(rec.setup):
            continue
        moves = rec.moves
        to_move = BLACK if not moves else 3 - moves[-1][0]
        if to_move == ours:
            found.append({"path": path, "size": rec.size, "komi": rec.komi, "ours": ours, "moves": moves})
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder")
    p.add_argument("--engine", default="azgo gtp --threads 1 --visits 1400 --resign-threshold 0",
                   help="azgo's GTP command, resignation off")
    p.add_argument("--opponent", required=True, help="the opponent's GTP command")
    p.add_argument("--name", default="azgo", help="azgo's name in the SGFs' PB/PW")
    p.add_argument("--tries", type=int, default=2, help="continuations of each resigned game")
    p.add_argument("--time", default=None, help="a clock for both, as azgo match --time (default: none)")
    p.add_argument("--sgf-dir", default=None)
    p.add_argument("--quick", action="store_true", help="the first 2 games, 1 try each")
    args = p.parse_args(argv)
    games = resigned_games(args.folder, args.name)
    tries = args.tries
    if args.quick:
        games, tries = games[:2], 1
    if not games:
        print(f"no game in {args.folder} that {args.name} resigned on its move", file=sys.stderr)
        return 1
    settings = parse_time_control(args.time) if args.time else None
    if args.sgf_dir:
        os.makedirs(args.sgf_dir, exist_ok=True)
    ours_eng = GtpClient(args.engine, args.name)
    other = GtpClient(args.opponent, "opponent")
    points = 0.0
    played = 0
    try:
        for i, g in enumerate(games):
            black, white = (ours_eng, other) if g["ours"] == BLACK else (other, ours_eng)
            got = []
            for t in range(tries):
                out = play_game(black, white, g["size"], g["komi"], settings, opening=g["moves"])
                score = 0.5 if out.winner is None else 1.0 if out.winner == g["ours"] else 0.0
                points += score
                played += 1
                got.append(f"{out.result} ({score:g})")
                if args.sgf_dir and out.game is not None:
                    stem = os.path.splitext(os.path.relpath(g["path"], args.folder))[0].replace(os.sep, "-")
                    rec = record_from_game(out.game, black=black.name, white=white.name, result=out.result)
                    atomic_write(os.path.join(args.sgf_dir, f"{stem}-try{t}.sgf"), write_sgf(rec))
            print(f"{os.path.relpath(g['path'], args.folder)}: azgo {'B' if g['ours'] == BLACK else 'W'} resigned "
                  f"at move {len(g['moves']) + 1}; played on: {', '.join(got)}", flush=True)
    finally:
        ours_eng.close()
        other.close()
    print(f"RESULT resigned_games {len(games)}")
    print(f"RESULT resigned_continuations {played}")
    print(f"RESULT resigned_points {points:g}")
    print(f"RESULT resigned_salvaged_share {points / played:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
