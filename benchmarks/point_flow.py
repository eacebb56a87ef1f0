"""Where azgo's games against GNU Go gain and lose their points, by GNU Go's own count.

For every game of the given folders that azgo played (``PB``/``PW`` contains ``--player``), GNU Go 3.8's
``estimate_score`` is asked for the position before every ``--every``-th move (one GNU Go process a game,
``loadsgf FILE N`` then ``estimate_score``; handicap stones count), giving azgo's lead in points by GNU Go's
reading (from azgo's side: + = azgo ahead). The change of that lead from one sample to the next is credited to
the phase of the game it happened in; the phases are shares of the board's points, so that they mean the same on
9x9 and 19x19 (19x19: moves 0-54, 55-126, 127-198, 199-270, 271 and after):

    opening  < 15%,  early middle  15-35%,  middle  35-55%,  late middle  55-75%,  endgame  >= 75%

With the ``engines.stderr.log`` beside the SGF files (written by ``azgo match`` / ``azgo strength``), the lead
azgo's own search reported at its move nearest each sample (at most one move later) is set beside GNU Go's:
``overestimate`` is azgo's lead minus GNU Go's, averaged over the phase (how far the network counts itself
ahead of what GNU Go reads; GNU Go's estimate is rough in the middle game and close to the result late).

Printed: per phase, the games that reached it, the mean points azgo gained there (negative: gave away) in all,
won and lost games, and the mean overestimate in all and in lost games (in won games the network's lead is
often below GNU Go's: a dead group is worth more points than a score head trained on resigned games says). A diagnosis of where to spend compute, not a strength figure: a
line is decided by games.

RESULT lines: ``points_<phase>`` (mean points gained per game in the phase, all games), ``lost_points_<phase>``
(lost games only), ``overestimate_<phase>`` and ``lost_overestimate_<phase>`` (when logs were found; all
games and lost games), phases ``opening``, ``early_middle``,
``middle``, ``late_middle``, ``endgame``; ``games``.

Usage: python3 benchmarks/point_flow.py FOLDER... [--player azgo] [--every 10] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lost_leads import decided_games, logged_curve, logged_leads, referee_curve  # noqa: E402

from azgo.gtp.opponents import OpponentMissing, gnugo_binary  # noqa: E402

PHASES = ("opening", "early_middle", "middle", "late_middle", "endgame")
EDGES = (0.15, 0.35, 0.55, 0.75)  # shares of the board's points where each phase after the first begins


def phase_of(move: int, size: int) -> int:
    """Index into PHASES of the position before move ``move`` (0-based) on a ``size`` board."""
    share = move / float(size * size)
    return sum(share >= e for e in EDGES)


def flow(curve: list[tuple[int, float]], size: int) -> list[float | None]:
    """Points gained in each phase: the sum of the lead's changes between consecutive samples, each credited to
    the phase of the later sample; None for a phase the game has no change in."""
    out: list[float | None] = [None] * len(PHASES)
    for (_, a), (k, b) in zip(curve, curve[1:]):
        p = phase_of(k, size)
        out[p] = (out[p] or 0.0) + (b - a)
    return out


def overestimates(referee: list[tuple[int, float]], own: list[tuple[int, float]], size: int) -> list[list[float]]:
    """Per phase, azgo's own lead minus GNU Go's at each sample that has an azgo move at most one move later."""
    by_move = dict(own)
    out: list[list[float]] = [[] for _ in PHASES]
    for k, gl in referee:
        mine = by_move.get(k, by_move.get(k + 1))
        if mine is not None:
            out[phase_of(k, size)].append(mine - gl)
    return out


def mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--player", default="azgo")
    ap.add_argument("--every", type=int, default=10, help="moves between the positions GNU Go estimates")
    ap.add_argument("--quick", action="store_true", help="at most 4 games, every 30 moves")
    args = ap.parse_args()
    try:
        exe = gnugo_binary()
    except OpponentMissing as e:
        ap.error(str(e))
    every = 30 if args.quick else args.every
    t0 = time.perf_counter()
    logs: dict[str, list] = {}
    at: dict[str, int] = {}
    rows = []  # (won, flow per phase, overestimates per phase)
    for f, rec, colour, won in decided_games(args.folders, args.player):
        d = os.path.dirname(f)
        if d not in logs:
            logs[d], at[d] = logged_leads(d), 0
        own, at[d] = logged_curve(rec, colour, logs[d], at[d])
        if args.quick and len(rows) >= 4:
            continue  # the logs are still read in order
        samples = list(range(0, len(rec.moves) + 1, every))
        if samples[-1] != len(rec.moves):
            samples.append(len(rec.moves))
        ref = referee_curve(f, samples, colour, exe)
        if len(ref) < 2:
            continue
        rows.append((won, flow(ref, rec.size), overestimates(ref, own, rec.size)))
        print(f"{os.path.relpath(f)}: {rec.result}, azgo {'won' if won else 'lost'}; GNU Go's lead for azgo "
              + " ".join(f"{k}:{v:+.0f}" for k, v in ref[:: max(1, len(ref) // 12)]), flush=True)
    print(f"# {len(rows)} games, GNU Go's estimate_score every {every} moves ({time.perf_counter() - t0:.0f} s)")
    print(f"# {'phase':<13} {'games':>5} {'points all':>10} {'won':>7} {'lost':>7} {'overestimate':>12} {'(lost games)':>12}")
    results = []
    for p, name in enumerate(PHASES):
        allp = [r[1][p] for r in rows]
        wonp = [r[1][p] for r in rows if r[0]]
        lostp = [r[1][p] for r in rows if not r[0]]
        over = mean([x for r in rows for x in r[2][p]])
        lost_over = mean([x for r in rows if not r[0] for x in r[2][p]])
        reached = sum(x is not None for x in allp)
        print(f"# {name:<13} {reached:>5} {fmt(mean(allp)):>10} {fmt(mean(wonp)):>7} {fmt(mean(lostp)):>7} "
              f"{fmt(over):>12} {fmt(lost_over):>12}")
        results.append((name, mean(allp), mean(lostp), over, lost_over))
    print(f"RESULT games {len(rows)}")
    for name, a, lost, over, lost_over in results:
        if a is not None:
            print(f"RESULT points_{name} {a:.2f}")
        if lost is not None:
            print(f"RESULT lost_points_{name} {lost:.2f}")
        if over is not None:
            print(f"RESULT overestimate_{name} {over:.2f}")
        if lost_over is not None:
            print(f"RESULT lost_overestimate_{name} {lost_over:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
