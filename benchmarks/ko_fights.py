"""Ko in a line's games: how often azgo wins the games that had a ko, and the games that had none.

For every decided game of the given folders that azgo played (``PB``/``PW`` contains ``--player``; draws and
unfinished games are left out), the record is replayed on azgo's board (its setup stones first, then every move)
and each move that leaves a simple-ko point the other side may not take back at once is a ko capture, counted for
the side that played it. A game "with a ko" has at least one; a "ko fight" has at least ``--fight`` (default 3: a
take, a retake, a take). Nothing is searched: instant, and no network is loaded.

Prints every game with a ko (its result for azgo, the move of the first ko capture, the captures by azgo and by
the opponent, and with ``--from-log`` azgo's own winrate at its last move before the first ko capture, from the
``azgo: MOVE winrate ...`` lines of the ``engines.stderr.log(.gz)`` beside the SGF files, as
``benchmarks/lost_leads.py --from-log`` reads them).

RESULT lines: ``games`` (decided games read), ``ko_games_share`` (of them, with a ko), ``won_share_without_ko``,
``won_share_with_ko``, ``won_share_ko_fight`` (each azgo's share of those games; 0 where there are none),
``lost_with_ko_share`` (of the games azgo lost, the share that had a ko) and ``ko_captures_opponent_share`` (of
the ko captures in the games azgo lost, the share the opponent made). With ``--from-log`` also
``won_share_ko_from_ahead``: the ko games where azgo counted itself at 50% or more before the first capture, and
the share of them it won (``ko_from_ahead_games`` beside it).

With ``--deeper 300,1200,4800`` the position of azgo's last move at or before the first ko capture of each game
with a ko is searched afresh at each visit count (one thread, ``--net``, default the packaged network of the board
size) and azgo's winrate there is printed beside the game: RESULT ``deeper_lost_winrate_<visits>``, the median
over the lost ko games. A winrate that stays high with more search says the network, not the search, misjudged the
position the ko came from.

A line where the games with a ko are won far less often than the others points at ko; read it beside
``won_share_ko_from_ahead``: where azgo was already behind before most of its lost ko games began, the ko is the
losing side's fight, not the cause of the loss.

Usage: python3 benchmarks/ko_fights.py FOLDER... [--player azgo] [--fight 3] [--from-log] [--deeper V1,V2,...]
       [--net PATH] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lost_leads import decided_games, logged_curve, logged_leads  # noqa: E402

from azgo.engine.mcts import SearchConfig  # noqa: E402
from azgo.engine.search import Limits, Searcher  # noqa: E402
from azgo.training.fork_peaks import ko_captures  # noqa: E402  (numpy only: no torch)


def deeper_winrates(rec, k: int, colour: int, evaluator, visits: list[int]) -> list[float]:
    """``colour``'s winrate before move ``k`` of ``rec``, searched afresh at each of ``visits`` (one thread)."""
    game = rec.to_game(k)
    out = []
    for v in visits:
        r = Searcher(evaluator, SearchConfig(), seed=1).search(game, Limits(visits=v), reuse=False)
        out.append(r.winrate if game.to_move == colour else 1.0 - r.winrate)
    return out


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return 0.0 if n == 0 else (xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2]))


def share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def folders_with_games(folders: list[str]) -> list[str]:
    """Each folder that holds SGF files directly (one engine log each), found under ``folders``."""
    out = []
    for top in folders:
        for d, _, files in sorted(os.walk(top)):
            if any(f.endswith(".sgf") for f in files):
                out.append(d)
    return sorted(set(out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="folders of a line's SGF files (searched recursively)")
    ap.add_argument("--player", default="azgo", help="azgo's name in PB/PW (default azgo)")
    ap.add_argument("--fight", type=int, default=3, help="ko captures that make a game a ko fight (default 3)")
    ap.add_argument("--from-log", action="store_true",
                    help="azgo's own winrate before the first ko capture, from the engines.stderr.log beside the games")
    ap.add_argument("--deeper", default="", help="visit counts (comma-separated) to search the position before "
                    "each game's first ko capture at")
    ap.add_argument("--net", default="", help="with --deeper: the network (default: the packaged one of the size)")
    ap.add_argument("--quick", action="store_true",
                    help="the first 20 games of each folder (with --deeper: 3 games, at most 800 visits a search)")
    args = ap.parse_args()
    if args.fight < 1:
        ap.error("--fight must be at least 1")
    try:
        deeper = [int(v) for v in args.deeper.split(",") if v.strip()]
    except ValueError:
        ap.error(f"--deeper takes visit counts like 300,1200,4800, not {args.deeper!r}")
    if any(v < 1 for v in deeper):
        ap.error("--deeper visit counts must be at least 1")
    if args.quick and deeper:
        deeper = sorted({min(v, 800) for v in deeper})
    per_folder = (3 if deeper else 20) if args.quick else None
    evaluators: dict = {}
    deeper_lost: dict[int, list[float]] = {v: [] for v in deeper}

    t0 = time.time()
    games = won = 0
    by_kind = {"without": [0, 0], "with": [0, 0], "fight": [0, 0]}  # [games, won]
    lost = lost_with_ko = 0
    lost_caps_ours = lost_caps_theirs = 0
    ahead = [0, 0]
    for folder in folders_with_games(args.folders):
        lines = logged_leads(folder) if args.from_log else []
        start = 0
        for n, (path, rec, colour, won_game) in enumerate(decided_games([folder], args.player)):
            if per_folder is not None and n >= per_folder:
                break
            if lines:
                # every decided game is matched in order, so that the log's runs stay in step
                curve, nxt = logged_curve(rec, colour, lines, start, 2)
                if curve:
                    start = nxt
            else:
                curve = []
            try:
                first, ours, theirs = ko_captures(rec, colour)
            except ValueError as exc:  # an illegal move or setup in the record: say so, count nothing
                print(f"{path}: skipped ({exc})", file=sys.stderr)
                continue
            games += 1
            won += won_game
            kinds = ["without"] if first is None else ["with"] + (["fight"] if ours + theirs >= args.fight else [])
            for kind in kinds:
                by_kind[kind][0] += 1
                by_kind[kind][1] += won_game
            if not won_game:
                lost += 1
                if first is not None:
                    lost_with_ko += 1
                    lost_caps_ours += ours
                    lost_caps_theirs += theirs
            if first is None:
                continue
            before = [w for k, w in curve if k <= first]
            wr = f", azgo's winrate before it {100 * before[-1]:.1f}%" if before else ""
            if deeper:
                from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
                from azgo.nets.registry import default_net_path

                net = args.net or default_net_path(rec.size)
                if net not in evaluators:
                    evaluators[net] = OnnxEvaluator(net, EvalConfig(threads=1, precision="auto"))
                k = max(i for i, (c, _) in enumerate(rec.moves[:first + 1]) if c == colour) if any(
                    c == colour for c, _ in rec.moves[:first + 1]) else first
                wrs = deeper_winrates(rec, k, colour, evaluators[net], deeper)
                wr += "; searched before move " + f"{k + 1}: " + ", ".join(
                    f"{v} visits {100 * w:.1f}%" for v, w in zip(deeper, wrs))
                if not won_game:
                    for v, w in zip(deeper, wrs):
                        deeper_lost[v].append(w)
            if before and before[-1] >= 0.5:
                ahead[0] += 1
                ahead[1] += won_game
            print(f"{path}: {'won' if won_game else 'lost'}, {len(rec.moves)} moves; first ko capture at move "
                  f"{first + 1}, ko captures azgo {ours}, opponent {theirs}{wr}")

    print(f"# {games} decided games ({won} won), {by_kind['with'][0]} with a ko, {by_kind['fight'][0]} with "
          f"{args.fight}+ ko captures; {time.time() - t0:.1f} s")
    print(f"RESULT games {games}")
    print(f"RESULT ko_games_share {share(by_kind['with'][0], games):.3f}")
    print(f"RESULT won_share_without_ko {share(by_kind['without'][1], by_kind['without'][0]):.3f}")
    print(f"RESULT won_share_with_ko {share(by_kind['with'][1], by_kind['with'][0]):.3f}")
    print(f"RESULT won_share_ko_fight {share(by_kind['fight'][1], by_kind['fight'][0]):.3f}")
    print(f"RESULT lost_with_ko_share {share(lost_with_ko, lost):.3f}")
    print(f"RESULT ko_captures_opponent_share {share(lost_caps_theirs, lost_caps_ours + lost_caps_theirs):.3f}")
    if args.from_log:
        print(f"RESULT ko_from_ahead_games {ahead[0]}")
        print(f"RESULT won_share_ko_from_ahead {share(ahead[1], ahead[0]):.3f}")
    for v in deeper:
        print(f"RESULT deeper_lost_winrate_{v} {median(deeper_lost[v]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
