"""What networks think of one player's chances, game by game: the mean value for that player over move ranges.

Usage::

    python3 scripts/value_by_game.py GAMES... --net A.onnx [--net B.onnx ...] [--player azgo]
        [--ranges 20-60,60-120,120-200,200-300]

For each game (SGF files, folders or globs) whose ``PB`` or ``PW`` contains ``--player``, it prints whether
that player won and, per network, the mean value *for that player* (in [-1, 1]; +1 = it wins) of the
positions in each move range (the position before move k, k counted from 0; "-" when the game is shorter).

Why: a network trained on games of azgo against one opponent can lower its value error on held-out games
of the same pairing just by recognising the opponent's style and calling it the winner. ``net_eval.py``'s
mean figures cannot tell that from knowledge; the games the player *won* can: a network that knows
something keeps its value for the winner there, one that learned the pairing's usual result turns against it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from net_eval import legal_from_planes  # noqa: E402

from azgo.engine.board import BLACK  # noqa: E402
from azgo.engine.sgf import SgfError, load_sgf  # noqa: E402
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator  # noqa: E402
from azgo.training.dataset import PositionSet, find_sgf_files, load_games  # noqa: E402


def parse_ranges(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.append((int(a), int(b)))
    return out


def player_values(path: str, player: str, nets: list[OnnxEvaluator]) -> tuple[bool, bool, list[np.ndarray]] | None:
    """``(player_is_black, player_won, [values for the player per position, per net])``, or None when the
    player is not in the game, the result is unknown, or positions were left out (cheap searches)."""
    rec = load_sgf(path)
    if player in rec.black:
        is_black = True
    elif player in rec.white:
        is_black = False
    else:
        return None
    g = load_games([path], use_cache=False, workers=1)[0]
    colors = np.array([c for c, _ in rec.moves])
    if g is None or len(g) != len(colors) or not g.value_w.any():
        return None
    ps = PositionSet([g])
    b = ps.batch(g.size, np.arange(len(g)))
    mover = np.where(colors == BLACK, 1.0, -1.0) * (1.0 if is_black else -1.0)  # +1 where the player moves
    won = bool(b["value"][0] * mover[0] > 0)
    out = []
    for ev in nets:
        res = ev.evaluate(b["planes"], legal_from_planes(b["planes"], b["policy"]))
        out.append(res.value.astype(np.float64) * mover)
    return is_black, won, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("games", nargs="+")
    ap.add_argument("--net", action="append", required=True)
    ap.add_argument("--player", default="azgo", help="a substring of PB or PW")
    ap.add_argument("--ranges", default="20-60,60-120,120-200,200-300", type=parse_ranges)
    args = ap.parse_args(argv)
    nets = [OnnxEvaluator(p, EvalConfig(precision="fp32")) for p in args.net]
    heads = " | ".join(" ".join(f"{a}-{b}" for a, b in args.ranges) for _ in nets)
    print(f"nets: {', '.join(args.net)}")
    print(f"| game | {args.player} | result | moves | {heads} |")
    sums: dict[tuple[bool, int, int], list[float]] = {}
    for f in find_sgf_files(args.games):
        try:
            r = player_values(f, args.player, nets)
        except SgfError as e:
            print(f"skipping {f}: {e}", file=sys.stderr)
            continue
        if r is None:
            continue
        is_black, won, values = r
        cells = []
        for k, v in enumerate(values):
            part = []
            for j, (a, b) in enumerate(args.ranges):
                s = v[a:b]
                part.append(f"{s.mean():+.2f}" if len(s) else "-")
                if len(s):
                    sums.setdefault((won, k, j), []).append(float(s.mean()))
            cells.append(" ".join(part))
        print(f"| {Path(f).name} | {'B' if is_black else 'W'} | {'won' if won else 'lost'} | {len(values[0])} | "
              + " | ".join(cells) + " |")
    for won in (True, False):
        rows = [" ".join(f"{np.mean(sums[(won, k, j)]):+.2f}" if (won, k, j) in sums else "-"
                         for j in range(len(args.ranges))) for k in range(len(nets))]
        n = len(sums.get((won, 0, 0), []))
        print(f"mean over the games {args.player} {'won' if won else 'lost'} ({n}): " + " | ".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
