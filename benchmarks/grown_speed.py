"""What a deeper network costs the search: 19x19 playouts per CPU second of a checkpoint and of the same
checkpoint grown deeper (``azgo grow``, `azgo.training.grow`), each as the int8 copy that play uses.

Usage::

    python benchmarks/grown_speed.py                      # campaign19's published best checkpoint (~2 min)
    python benchmarks/grown_speed.py --quick              # < 1 min
    python benchmarks/grown_speed.py --checkpoint run/checkpoint.pt --sizes b8c64,b10c64

Needs the training extras (torch, onnx). The checkpoint is grown to each size (outputs checked equal), every
network exported to ONNX and quantized to int8 on the same random legal 19x19 positions, and each searches
the same mid-game positions (120 random legal moves, seeds 1..k) with ``Limits(playouts=P)``, a fresh tree,
one search thread and one onnxruntime thread, the networks interleaved round by round. Playouts are counted
per second of this process's CPU time (``time.process_time``), so other load on the machine moves the figure
little; the ratio to the checkpoint's own network is the headline. A grown network plays exactly as its
parent before training, so this ratio is the whole price a larger network pays at equal time until training
makes it better.

Ends with ``RESULT grown_playouts_ratio_<size> <x>`` per grown size (1.00 = as fast as the parent) and
``RESULT parent_playouts_per_cpu_s <n>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", default=str(ROOT / "docs" / "runs" / "campaign19" / "best.pt"))
    ap.add_argument("--sizes", default="b8c64,b10c64", help="deeper sizes to grow into (comma-separated)")
    ap.add_argument("--quick", action="store_true", help="fewer positions and rounds (< 1 min)")
    ap.add_argument("--playouts", type=int, default=None, help="playouts per search (default 300, quick 150)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3, quick 2)")
    args = ap.parse_args(argv)
    import importlib.util
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("onnx") is None:
        print("grown_speed needs torch: python3 -m pip install torch==2.13.0 onnx", file=sys.stderr)
        return 2
    from search_speed import random_game

    from azgo.engine.mcts import SearchConfig
    from azgo.engine.search import Searcher
    from azgo.engine.search_types import Limits
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    from azgo.nets.quantize import quantize_int8
    from azgo.training.calibration import random_positions
    from azgo.training.checkpoints import load_checkpoint, save_atomic
    from azgo.training.export import export_checkpoint
    from azgo.training.grow import grow_checkpoint, max_output_difference

    playouts = args.playouts or (150 if args.quick else 300)
    rounds = args.rounds or (2 if args.quick else 3)
    games = [random_game(19, 120, s) for s in range(1, (2 if args.quick else 3) + 1)]
    parent = load_checkpoint(args.checkpoint)
    checkpoints = {parent["net"]: parent}
    for size in [s for s in args.sizes.split(",") if s]:
        grown = grow_checkpoint(parent, size)
        diff = max_output_difference(parent, grown)
        print(f"{parent['net']} -> {size}: largest output difference {diff:.2e}")
        checkpoints[size] = grown
    calib = random_positions(19, 64 if args.quick else 128, seed=0)
    evaluators = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, ck in checkpoints.items():
            fp32 = os.path.join(tmp, f"{name}.onnx")
            export_checkpoint(save_atomic(ck, os.path.join(tmp, f"{name}.pt")), fp32, check=False)
            int8 = quantize_int8(fp32, calib, os.path.join(tmp, f"{name}.int8.onnx"))
            evaluators[name] = OnnxEvaluator(str(int8), EvalConfig(threads=1, cache_size=0, precision="int8"))
        rates = {name: [] for name in evaluators}
        for r in range(rounds):
            for g in games:
                for name, ev in evaluators.items():
                    s = Searcher(ev, SearchConfig(threads=1), seed=r)
                    c0 = time.process_time()
                    res = s.search(g, Limits(playouts=playouts), reuse=False)
                    rates[name].append(res.playouts / max(time.process_time() - c0, 1e-9))
    base = statistics.median(rates[parent["net"]])
    for name, xs in rates.items():
        m = statistics.median(xs)
        print(f"{name}: {m:.0f} playouts per CPU second (19x19 mid-game, {playouts} playouts, int8, 1 thread), "
              f"{m / base:.2f}x {parent['net']}")
    print(f"RESULT parent_playouts_per_cpu_s {base:.0f}")
    for name in list(rates)[1:]:
        print(f"RESULT grown_playouts_ratio_{name} {statistics.median(rates[name]) / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
