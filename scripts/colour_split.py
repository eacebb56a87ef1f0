"""Wins, losses and draws of one player by colour, from finished SGF games.

    python3 scripts/colour_split.py runs/n13a runs/n13b --opponent "GNU Go"

A game counts for the player that is *not* the opponent (matched as a case-insensitive substring of
PB/PW); games whose RE is missing, void or unknown are skipped (``azgo.engine.sgf.parse_result`` reads
it). Prints one line per colour and a total, with draws counted half in the score. ``--copy-lost DIR``
also copies the games the player lost into DIR (named ``<parent folder>_<file>``, more of the path in
front where two folders share a name), e.g. as ``azgo selfplay --openings`` for self-play that starts
from the positions of those games.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from sgfmill import sgf

from azgo.engine.sgf import parse_result


def _results(paths, opponent: str, size: int | None = None):
    """Yield (SGF path, colour of the player, outcome 'W'/'L'/'D') per game."""
    opponent = opponent.lower()
    for root in paths:
        root = Path(root)
        files = [root] if root.is_file() else sorted(root.rglob("*.sgf"))
        for path in files:
            game = sgf.Sgf_game.from_bytes(path.read_bytes())
            if size is not None and game.get_size() != size:
                continue
            props = game.get_root()
            names = {c: (props.get(p) if props.has_property(p) else "") for c, p in (("b", "PB"), ("w", "PW"))}
            mine = [c for c, n in names.items() if opponent not in n.lower()]
            if len(mine) != 1:
                continue  # both or neither side is the opponent
            colour = mine[0]
            outcome = parse_result(props.get("RE") if props.has_property("RE") else "")
            if outcome is None:
                continue
            if outcome == 0:
                yield path, colour, "D"
            else:
                yield path, colour, "W" if (outcome > 0) == (colour == "b") else "L"


def _free_name(folder: Path, path: Path, taken: set) -> Path:
    """``<parent>_<file>`` in ``folder``; where this run already used that name (two folders of the same
    name, e.g. campaign7/gnugo19 and campaign8/gnugo19), more of the path goes in front, then a counter."""
    parts = path.resolve().parts[:-1]
    candidates = ["_".join((*parts[len(parts) - depth:], path.name)) for depth in range(1, len(parts) + 1)]
    n = 2
    while True:
        for name in candidates:
            if name not in taken:
                taken.add(name)
                return folder / name
        candidates = [f"{n}_{path.name}"]
        n += 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="SGF files or folders (searched recursively)")
    ap.add_argument("--opponent", required=True, help="substring of the opponent's PB/PW name")
    ap.add_argument("--size", type=int, help="only games on this board size")
    ap.add_argument("--copy-lost", metavar="DIR", help="copy the games the player lost into DIR")
    args = ap.parse_args(argv)
    table = {c: {"W": 0, "L": 0, "D": 0} for c in "bw"}
    lost_dir = Path(args.copy_lost) if args.copy_lost else None
    taken: set = set()
    if lost_dir:
        lost_dir.mkdir(parents=True, exist_ok=True)
    for path, colour, outcome in _results(args.paths, args.opponent, args.size):
        table[colour][outcome] += 1
        if lost_dir and outcome == "L":
            shutil.copy(path, _free_name(lost_dir, path, taken))
    total = {k: table["b"][k] + table["w"][k] for k in "WLD"}
    for name, row in (("as Black", table["b"]), ("as White", table["w"]), ("total", total)):
        n = sum(row.values())
        score = row["W"] + row["D"] / 2
        share = f"{100 * score / n:.1f}%" if n else "-"
        print(f"{name:9s} {row['W']}-{row['L']}-{row['D']} of {n}: {score:g} points, {share}")
    return 0 if sum(total.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
