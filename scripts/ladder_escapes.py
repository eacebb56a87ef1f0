"""Count, per player, the moves in SGF games that ran out of atari into a ladder the runner loses.

Each move is checked with the engine's own reader (``azgo.engine.ladder.losing_escapes`` on the position
before the move, with the mover to move), so the figure is what ``--ladders`` acts on. Used to show what
ladder reading changed in the campaign's games (docs/runs/campaign/README.md).

Usage: python3 scripts/ladder_escapes.py FOLDER_OR_GLOB [...] [--list]
"""

from __future__ import annotations

import argparse

from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import move_to_gtp
from azgo.engine.ladder import losing_escapes
from azgo.engine.sgf import load_sgf
from azgo.training.dataset import DatasetError, find_sgf_files


def count(paths: list[str], listing: bool = False) -> dict[str, list[int]]:
    """{player: [games, wins, losing escapes played, games with one]} over the records in ``paths``."""
    stats: dict[str, list[int]] = {}
    for path in paths:
        rec = load_sgf(path)
        names = {BLACK: rec.black or "Black", WHITE: rec.white or "White"}
        winner = {"B": BLACK, "W": WHITE}.get(rec.result[:1].upper())
        played = {BLACK: 0, WHITE: 0}
        b = rec.to_game(0).board.copy()  # setup stones (handicap) included
        for i, (colour, move) in enumerate(rec.moves):
            if move != b.pass_move:
                b.to_move = colour
                if move in losing_escapes(b):
                    played[colour] += 1
                    if listing:
                        print(f"{path}: move {i + 1} {names[colour]} {move_to_gtp(move, rec.size)} ({rec.result})")
            b.play(move, colour)
        for colour in (BLACK, WHITE):
            s = stats.setdefault(names[colour], [0, 0, 0, 0])
            s[0] += 1
            s[1] += winner == colour
            s[2] += played[colour]
            s[3] += played[colour] > 0
    return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="+", help="folders of SGF files, or globs")
    ap.add_argument("--list", action="store_true", help="print every such move")
    args = ap.parse_args()
    try:
        paths = find_sgf_files(args.sources)
    except DatasetError as e:
        raise SystemExit(str(e)) from None
    if not paths:
        raise SystemExit("no SGF files found")
    for name, (games, wins, escapes, in_games) in sorted(count(paths, args.list).items()):
        print(f"{name}: {games} games, {wins} won, {escapes} losing ladder escapes played (in {in_games} games)")


if __name__ == "__main__":
    main()
