"""Compare networks on the same positions: their policy and value against the targets of SGF games.

Usage::

    python3 scripts/net_eval.py GAMES... --net A.onnx [--net B.onnx ...] [--positions 4000] [--precision int8]

GAMES are folders, globs or files (read as ``azgo train`` reads them: self-play archives give the
search's visit distribution as the policy target, other games the played move; the value target is
the game's result from the side to move's view). Up to ``--positions`` positions, spread evenly over
the games of each board size, are evaluated by every network (no symmetry, one thread). Per board size
and network it prints:

* ``top1``: how often the network's most likely move is the target's most likely move;
* ``policy_ce``: cross-entropy of the network's policy against the target (nats, lower is better);
* ``value_mse``: mean squared error of the value (side to move's view, in [-1, 1]) against the result;
* ``confident``: positions where the network gave one side 80% or more (``|value| >= 0.6``), and
  ``held``: the share of them that side went on to win (1.0 for a network whose confidence is earned;
  a value head that calls games won that are then lost shows here, e.g. on games against GNU Go).

It reads no torch: the positions come from :mod:`azgo.training.dataset` (numpy) and the networks run on
onnxruntime, so stages can be compared on one fixed set of games (e.g. the games of a strength line).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from azgo.engine import planes as P
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.training.dataset import DatasetError, PositionSet, find_sgf_files, load_games

CONFIDENT = 0.6  # |value| for an 80% winrate


def legal_from_planes(planes: np.ndarray, policy: np.ndarray) -> np.ndarray:
    """bool ``[B, N*N+1]``: the empty points and pass (superko and suicide are not excluded), plus every
    move the target gives weight (so that the target is never masked away)."""
    b, _, n, _ = planes.shape
    stones = (planes[:, P.OWN_STONES] + planes[:, P.OPP_STONES]).reshape(b, n * n)
    legal = np.ones((b, n * n + 1), bool)
    legal[:, :-1] = stones == 0
    return legal | (policy > 0)


def evaluate_net(ev, batches) -> dict[str, float]:
    """The figures of one network over ``batches`` (from :meth:`PositionSet.fixed_batches`)."""
    top1 = ce = 0.0
    positions = 0
    se, valued, confident, held = 0.0, 0, 0, 0
    for b in batches:
        legal = legal_from_planes(b["planes"], b["policy"])
        out = ev.evaluate(b["planes"], legal)
        target = b["policy"]
        top1 += float(np.sum(np.argmax(out.policy, 1) == np.argmax(target, 1)))
        ce += float(-np.sum(target * np.log(np.maximum(out.policy, 1e-12))))
        positions += len(target)
        w = b["value_w"] > 0
        v, z = out.value[w].astype(np.float64), b["value"][w].astype(np.float64)
        se += float(np.sum((v - z) ** 2))
        valued += int(w.sum())
        sure = np.abs(v) >= CONFIDENT
        confident += int(sure.sum())
        held += int(np.sum(np.sign(v[sure]) == z[sure]))
    return {"positions": positions, "top1": top1 / max(positions, 1), "policy_ce": ce / max(positions, 1),
            "value_mse": se / valued if valued else math.nan, "confident": confident,
            "held": held / confident if confident else math.nan}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("games", nargs="+", help="SGF folders, globs or files")
    ap.add_argument("--net", action="append", required=True, help="an ONNX network (repeat to compare)")
    ap.add_argument("--positions", type=int, default=4000, help="positions per board size, spread evenly")
    ap.add_argument("--precision", choices=["fp32", "int8", "auto"], default="fp32")
    ap.add_argument("--workers", type=int, default=1, help="processes decoding games not yet cached")
    args = ap.parse_args(argv)
    try:
        files = find_sgf_files(args.games)
    except DatasetError as e:
        print(f"no SGF files: {e}", file=sys.stderr)
        return 2
    if not files:
        print(f"no SGF files in {' '.join(args.games)}", file=sys.stderr)
        return 2
    games = [g for g in load_games(files, use_cache=False, workers=args.workers,
                                   warn=lambda m: print(m, file=sys.stderr)) if g]
    positions = PositionSet(games)
    if len(positions) == 0:
        print("no positions with targets in these games", file=sys.stderr)
        return 2
    print(f"{len(files)} files, {positions.games} games, {len(positions)} positions "
          f"({', '.join(f'{n}x{n}: {c}' for n, c in zip(positions.sizes, positions.counts))})")
    print("| network | board | positions | top1 | policy_ce | value_mse | confident | held |")
    print("|---|---|---|---|---|---|---|---|")
    nets = [OnnxEvaluator(path, EvalConfig(precision=args.precision)) for path in args.net]
    for n in positions.sizes:
        one = PositionSet([g for g in games if g.size == n])
        batches = one.fixed_batches(args.positions, 256)
        for path, ev in zip(args.net, nets):
            r = evaluate_net(ev, batches)
            print(f"| {path} | {n}x{n} | {r['positions']} | {r['top1']:.3f} | {r['policy_ce']:.3f} | "
                  f"{r['value_mse']:.3f} | {r['confident']} | {r['held']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
