"""How each network did in its lineage's self-play games against the outside opponent (``[selfplay.opponent]``).

A recipe with ``[selfplay.opponent]`` has a share of each generation's self-play played against Pachi or GNU Go,
at self-play's visits (mostly the cheap search) against the opponent's fixed strength. Those games are hundreds per
generation, against the 50 of an anchor line, so the network that played them gets a large-sample figure against
the same opponent, on other terms than the line's (a different clock, the cheap search, the recipe's komi spread):
a diagnostic of the trend, not a strength line.

For each self-play folder (``RUN/genNNNN/selfplay/<size>/``, or any folder of self-play SGF files), every game
whose ``PB`` or ``PW`` names the opponent (``--opponent``, default ``pachi``, case-insensitive) is read with
sgfmill: the network is the other player (its ``PB``/``PW`` name, the int8 file and hash), its colour, the
result, and whether the game began from the empty board or from a forked start (the root's ``AZO``: that many
opening moves played from another game without search, `azgo.engine.sgf`). Forked starts come from lost games
and are not even positions, so the headline counts only games from the empty board.

Prints one line per folder (games from the empty board as Black and as White, forked starts, all) and one per
network across folders; points are wins + draws / 2. RESULT lines: ``games`` (games read against the opponent),
``empty_board_games`` and, for the network that played the last folder given, ``last_net_empty_board_score``
(its points from the empty board over its games) and ``last_net_empty_board_se`` (the binomial standard error).

Usage: python3 benchmarks/selfplay_opponent.py FOLDER... [--opponent pachi] [--quick]
       python3 benchmarks/selfplay_opponent.py runs/campaign9p/gen00*/selfplay/9
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import sys
from collections import defaultdict

from sgfmill import sgf


def read_game(path: str, opponent: str) -> dict | None:
    """The game at ``path`` as {net, colour, points, forked} for the network, or None when the opponent is not
    in it (or the game has no result)."""
    with open(path, "rb") as f:
        game = sgf.Sgf_game.from_bytes(f.read())
    root = game.get_root()
    names = {c: (root.get(p) if root.has_property(p) else "") for c, p in (("b", "PB"), ("w", "PW"))}
    opp = [c for c, n in names.items() if opponent.lower() in n.lower()]
    if len(opp) != 1 or not root.has_property("RE"):
        return None
    colour = "w" if opp[0] == "b" else "b"
    result = root.get("RE").strip().upper()
    if result.startswith(colour.upper() + "+"):
        points = 1.0
    elif result in ("0", "DRAW", "D", "JIGO"):
        points = 0.5
    elif result[:2] in ("B+", "W+"):
        points = 0.0
    else:
        return None  # void or unknown
    return {"net": names[colour], "colour": colour, "points": points, "forked": root.has_property("AZO")}


def tally(games: list[dict]) -> dict:
    """Points and games by (forked, colour)."""
    out = defaultdict(lambda: [0.0, 0])
    for g in games:
        k = ("fork" if g["forked"] else "empty", g["colour"])
        out[k][0] += g["points"]
        out[k][1] += 1
    return out


def empty_board(games: list[dict]) -> tuple[float, int]:
    """Points and games from the empty board."""
    fresh = [g for g in games if not g["forked"]]
    return sum(g["points"] for g in fresh), len(fresh)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--opponent", default="pachi")
    ap.add_argument("--quick", action="store_true", help="at most 200 games a folder")
    a = ap.parse_args(argv)
    total, fresh_total, by_net, last_net = 0, 0, defaultdict(list), None
    for folder in a.folders:
        files = sorted(glob.glob(os.path.join(folder, "*.sgf")))
        if a.quick:
            files = files[:200]
        games = [g for g in (read_game(f, a.opponent) for f in files) if g is not None]
        if not games:
            print(f"{folder}: no game against {a.opponent} in {len(files)} files")
            continue
        t = tally(games)
        pts, n = empty_board(games)
        nets = sorted({g["net"] for g in games})
        for g in games:
            by_net[g["net"]].append(g)
        last_net = max(nets, key=lambda x: sum(1 for g in games if g["net"] == x))
        total += len(games)
        fresh_total += n
        cells = " ".join(f"{k[0]} as {k[1].upper()} {v[0]:g}/{v[1]}" for k, v in sorted(t.items()))
        print(f"{folder}: {len(games)} of {len(files)} games against {a.opponent} by {', '.join(nets)}: {cells}; "
              f"from the empty board {pts:g}/{n} = {pts / max(n, 1):.3f}")
    print("# by network, from the empty board (points / games, +- one standard error):")
    for net, games in by_net.items():
        pts, n = empty_board(games)
        p = pts / max(n, 1)
        print(f"{net}: {pts:g}/{n} = {p:.3f} +- {math.sqrt(p * (1 - p) / max(n, 1)):.3f}")
    print(f"RESULT games {total}")
    print(f"RESULT empty_board_games {fresh_total}")
    if last_net is not None:
        pts, n = empty_board(by_net[last_net])
        p = pts / max(n, 1)
        print(f"RESULT last_net_empty_board_score {p:.3f}")
        print(f"RESULT last_net_empty_board_se {math.sqrt(p * (1 - p) / max(n, 1)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
