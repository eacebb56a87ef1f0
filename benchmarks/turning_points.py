"""Where azgo's lost games turned: the move after which its own winrate fell most, searched again deeper.

For every game azgo lost in the given folders (``PB``/``PW`` contains ``--player``), azgo's own winrate at each of
its moves is read from the ``engines.stderr.log`` beside the SGF files (the lines ``azgo match`` and ``azgo
strength`` write; see ``lost_leads.py --from-log``). The turning point is the pair of consecutive azgo moves whose
winrate fell most: azgo played X, the opponent answered Y, and azgo's next search saw the fall. Two questions:

* would more search have played something else? The position before X is searched afresh (one thread, a new tree)
  at each of ``--visits``; ``changed`` when the most-visited count picks a move other than X;
* did the network see the answer coming? The network's own prior for Y in the position after X (from the
  opponent's side), and Y's rank among the legal moves by that prior.

Prints one block per lost game. RESULT lines: ``turns`` (lost games with a turning point), ``turn_drop_median``
(median fall of azgo's winrate there), ``turn_changed_share`` (share where the deepest search leaves X),
``reply_top3_share`` (share where Y is among the network's three highest priors) and ``reply_prior_median``.
A high changed share says time (or a faster search) would have saved those games; a low reply prior with
unchanged X says the network does not see the opponent's answer at all (a blind spot search rarely reaches).

Usage: python3 benchmarks/turning_points.py FOLDER... [--player azgo] [--visits 1000,8000] [--net PATH] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ko_fights import folders_with_games, median  # noqa: E402
from lost_leads import decided_games, logged_curve, logged_leads  # noqa: E402

from azgo.engine.coords import move_to_gtp  # noqa: E402
from azgo.engine.features import encode_game  # noqa: E402
from azgo.engine.mcts import SearchConfig  # noqa: E402
from azgo.engine.search import Limits, Searcher  # noqa: E402


def turning_point(curve: list[tuple[int, float]]) -> tuple[int, float, float] | None:
    """(index of azgo's move X in the game, winrate before X, winrate at azgo's next move) where the winrate fell
    most between two consecutive azgo moves; None when it never fell (or fewer than two moves)."""
    best = None
    for (k0, w0), (_, w1) in zip(curve, curve[1:]):
        if w0 - w1 > 0 and (best is None or w0 - w1 > best[1] - best[2]):
            best = (k0, w0, w1)
    return best


def reply_prior(evaluator, game, move: int) -> tuple[float, int]:
    """(network prior of ``move`` for the side to move in ``game``, its rank among the legal moves, 1 = highest)."""
    planes = encode_game(game)[None]
    legal = game.board.legal_mask(game.to_move)[None]
    policy = evaluator.evaluate(planes, legal).policy[0]
    p = float(policy[move])
    return p, 1 + int((policy > p).sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="folders of a line's SGF files and engine logs (searched recursively)")
    ap.add_argument("--player", default="azgo", help="azgo's name in PB/PW (default azgo)")
    ap.add_argument("--visits", default="1000,8000", help="visit counts to search the turning position at")
    ap.add_argument("--net", default="", help="the network (default: the packaged one of the board size)")
    ap.add_argument("--quick", action="store_true", help="the first 3 lost games, at 200 and 800 visits")
    a = ap.parse_args()
    visits = [200, 800] if a.quick else sorted(int(v) for v in a.visits.split(","))
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    from azgo.nets.registry import default_net_path

    t0 = time.time()
    evaluators: dict = {}
    drops, changed, top3, priors = [], [], [], []
    for folder in folders_with_games(a.folders):
        if a.quick and len(drops) >= 3:
            break
        lines = logged_leads(folder)
        start = 0
        for path, rec, colour, won in decided_games([folder], a.player):
            curve, start = logged_curve(rec, colour, lines, start, field=2)
            if won or not curve:
                continue
            if a.quick and len(drops) >= 3:
                break
            turn = turning_point(curve)
            if turn is None or turn[0] + 1 >= len(rec.moves):
                continue
            k, w0, w1 = turn
            net = a.net or str(default_net_path(rec.size))
            if net not in evaluators:
                evaluators[net] = OnnxEvaluator(net, EvalConfig(threads=1, precision="auto"))
            ev = evaluators[net]
            x, y = rec.moves[k][1], rec.moves[k + 1][1]
            gtp = lambda m: move_to_gtp(m, rec.size)  # noqa: E731
            game = rec.to_game(k)
            picks = []
            for v in visits:
                r = Searcher(ev, SearchConfig(), seed=1).search(game, Limits(visits=v), reuse=False)
                wr = r.winrate if game.to_move == colour else 1.0 - r.winrate
                picks.append((v, r.move, wr))
            p, rank = reply_prior(ev, rec.to_game(k + 1), y)
            drops.append(w0 - w1)
            changed.append(picks[-1][1] != x)
            top3.append(rank <= 3)
            priors.append(p)
            print(f"{path}: move {k + 1} {gtp(x)} at {w0:.0%}, answer {gtp(y)}, then {w1:.0%}; "
                  + ", ".join(f"{v} visits: {gtp(m)} {wr:.0%}" for v, m, wr in picks)
                  + f"; {gtp(y)} prior {p:.3f} (rank {rank})", flush=True)
    n = len(drops)
    print(f"# {n} turning points of lost games; {time.time() - t0:.0f} s")
    print(f"RESULT turns {n}")
    print(f"RESULT turn_drop_median {median(drops):.3f}")
    print(f"RESULT turn_changed_share {sum(changed) / n if n else 0.0:.3f}")
    print(f"RESULT reply_top3_share {sum(top3) / n if n else 0.0:.3f}")
    print(f"RESULT reply_prior_median {median(priors):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
