"""int8 vs fp32 accuracy of a (trained) network on real positions, and the int8 speed-up.

Positions come from SGF games (e.g. a self-play archive): every position of every game, shuffled with a
fixed seed; the first ``--calibration`` positions calibrate the static QDQ int8 model, the next
``--positions`` are the test set. Reported: top-move agreement (legal moves only), mean and max
absolute value error, and positions/s of both models (1 thread, batch 16) in the same run.
The evaluator makes int8 the default where top-move agreement >= 97% and mean value error <= 0.02.

Usage: python benchmarks/int8_accuracy.py --net NET.onnx SGF_DIR [SGF_DIR...] [--quick]

``--shipped`` measures what users get instead: each packaged network (9x9, 13x13, 19x19) against the int8
copy that ``azgo analysis`` uses (``<net>.int8-vnni.onnx`` where it ships and the CPU has VNNI; on a CPU without
VNNI analysis then runs fp32, and that copy is measured emulated, its QDQ graph unfused; else ``<net>.int8.onnx``;
the 7-bit copy, which play uses, is measured too when it is not that one, as ``int8_7bit_...``; and
``RESULT analysis_precision_<N>x<N>`` says what analysis runs on this CPU), on ``--positions`` real positions of that size from the games in ``docs/strength/campaign*``
(closed folders, so the positions stay the same as new lines are played)
(default 500), and prints ``RESULT int8_winrate_mae_<N>x<N>``, ``int8_winrate_median_<N>x<N>``,
``int8_lead_mae_<N>x<N>``, ``int8_lead_median_<N>x<N>`` and ``int8_top1_agreement_<N>x<N>`` (the analysis
issue's bar: medians <= 0.01 winrate and <= 0.3 points of score lead), and for scale the fp32 network's own
spread under the 7 other board symmetries (``fp32_symmetry_winrate_median_<N>x<N>``,
``fp32_symmetry_lead_median_<N>x<N>``): play and analysis draw a random symmetry per evaluation.

Usage: python benchmarks/int8_accuracy.py --shipped [--positions 500] [--quick]
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from azgo.engine.features import encode_game
from azgo.engine.sgf import SgfError, load_sgf
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.quantize import compare_int8, quantize_int8


def _shuffled_files(sources: list[str], seed: int) -> tuple[list[str], random.Random]:
    files = []
    for s in sources:
        files += sorted(glob.glob(os.path.join(s, "**", "*.sgf"), recursive=True)) if os.path.isdir(s) else [s]
    rng = random.Random(seed)
    rng.shuffle(files)
    return files, rng


def _game_positions(path: str, size: int | None, picks_per_game: int | None, rng: random.Random):
    """(planes, legal) of positions of one game (all, or ``picks_per_game`` drawn), [] if unusable."""
    try:
        rec = load_sgf(path)
        if size is not None and rec.size != size:
            return []
        game = rec.to_game(0)
    except SgfError:
        return []
    n = len(rec.moves)
    picks = set(range(n)) if picks_per_game is None else set(rng.sample(range(n), min(picks_per_game, n)))
    out = []
    for i, (colour, move) in enumerate(rec.moves):
        if i in picks:
            out.append((encode_game(game), game.board.legal_mask()))
        try:
            game.play(move, colour)
        except ValueError:
            break
    return out


def positions(sources: list[str], limit: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    files, rng = _shuffled_files(sources, seed)
    found = []
    for path in files:
        found += _game_positions(path, None, None, rng)
        if len(found) >= limit * 3:
            break
    order = list(range(len(found)))
    rng.shuffle(order)
    order = order[:limit]
    return np.stack([found[i][0] for i in order]), np.stack([found[i][1] for i in order])


def speed(ev: OnnxEvaluator, x: np.ndarray, legal: np.ndarray, seconds: float) -> float:
    n, k = 0, 0
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        i = (k * 16) % max(1, len(x) - 16)
        ev.evaluate(x[i:i + 16], legal[i:i + 16])
        n += 16
        k += 1
    return n / (time.perf_counter() - t)


def positions_of_size(sources: list[str], size: int, limit: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``limit`` positions of ``size`` x ``size`` games under ``sources``, four from each of many games."""
    files, rng = _shuffled_files(sources, seed)
    found = []
    for path in files:
        found += _game_positions(path, size, 4, rng)
        if len(found) >= limit:
            break
    found = found[:limit]
    return np.stack([f[0] for f in found]), np.stack([f[1] for f in found])


def symmetry_spread(net, planes: np.ndarray, legal: np.ndarray) -> tuple[float, float]:
    """The fp32 network's own noise, for scale: median |change| of (winrate, score lead) when the position is
    seen under each of the 7 other board symmetries instead of as it stands."""
    from azgo.engine.symmetry import apply_planes
    ev = OnnxEvaluator(net, EvalConfig(precision="fp32"))
    base = ev.evaluate(planes, legal)
    dw, dl = [], []
    for k in range(1, 8):
        e = ev.evaluate(apply_planes(planes, k), np.ones_like(legal))  # values do not read the legal mask
        dw.append(np.abs(e.value - base.value) / 2)
        dl.append(np.abs(e.score - base.score))
    return float(np.median(np.concatenate(dw))), float(np.median(np.concatenate(dl)))


def shipped(args) -> int:
    from azgo.nets.evaluator import int8_vnni_sibling
    from azgo.nets.quantize import int8_path_for
    from azgo.nets.registry import default_net_path
    root = Path(__file__).resolve().parent.parent
    n_pos = min(args.positions, 200) if args.quick else args.positions
    # the hand-run campaign's games (closed folders): new lines of games elsewhere under docs/strength must not
    # change the positions, or figures of one network would wander from session to session
    frozen = sorted(glob.glob(str(root / "docs" / "strength" / "campaign*")))
    results = {}
    for size in (9, 13, 19):
        net = default_net_path(size)
        played = OnnxEvaluator(net, EvalConfig(precision="vnni")).path  # what azgo analysis uses on this CPU
        x, legal = positions_of_size(frozen, size, n_pos, seed=size)
        key = f"{size}x{size}"
        vnni_copy = int8_vnni_sibling(net)
        emulated = played == net and vnni_copy.is_file()  # a CPU without VNNI: analysis runs fp32
        if emulated:
            print(f"{key}: azgo analysis on this CPU (no VNNI) runs {net.name} in fp32; {vnni_copy.name}, which it "
                  "runs on a VNNI CPU, is measured emulated (its QDQ graph unfused: exact int8 products)")
        first = vnni_copy if emulated else played
        copies = [("int8", first)] + ([("int8_7bit", int8_path_for(net))] if first != int8_path_for(net) else [])
        results[f"analysis_precision_{key}"] = "fp32" if played == net else ("int8-vnni" if played == vnni_copy
                                                                             else "int8-7bit")
        for label, q in copies:
            emulate = emulated and q == vnni_copy
            acc = compare_int8(net, q, x, legal, emulate=emulate)
            where = " (azgo analysis on this CPU)" if q == played else " (emulated)" if emulate else ""
            print(f"{key} {net.name} vs {q.name}{where} on {len(x)} "
                  f"positions: winrate |int8 - fp32| median {acc['winrate_median_abs']:.4f} mean "
                  f"{acc['winrate_mae']:.4f}; score lead median {acc['lead_median_abs']:.3f} mean "
                  f"{acc['lead_mae']:.3f} max {acc['lead_max_abs']:.2f} points; top move agreement "
                  f"{acc['top1_agreement']:.3f}")
            results.update({f"{label}_winrate_mae_{key}": f"{acc['winrate_mae']:.4f}",
                            f"{label}_winrate_median_{key}": f"{acc['winrate_median_abs']:.4f}",
                            f"{label}_lead_mae_{key}": f"{acc['lead_mae']:.3f}",
                            f"{label}_lead_median_{key}": f"{acc['lead_median_abs']:.3f}",
                            f"{label}_top1_agreement_{key}": f"{acc['top1_agreement']:.4f}"})
        sym_w, sym_l = symmetry_spread(net, x, legal)
        print(f"  for scale, fp32 against itself under another board symmetry: winrate median {sym_w:.4f}, "
              f"score lead median {sym_l:.3f} points")
        results.update({f"fp32_symmetry_winrate_median_{key}": f"{sym_w:.4f}",
                        f"fp32_symmetry_lead_median_{key}": f"{sym_l:.3f}"})
    for k, v in results.items():
        print(f"RESULT {k} {v}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="*", help="SGF files or folders")
    ap.add_argument("--net")
    ap.add_argument("--shipped", action="store_true", help="the packaged networks against their shipped int8 copies")
    ap.add_argument("--calibration", type=int, default=256)
    ap.add_argument("--positions", type=int, default=2000)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.shipped:
        if args.positions == 2000:
            args.positions = 500
        return shipped(args)
    if not args.net or not args.sources:
        ap.error("--net and SGF sources are needed (or --shipped)")
    if args.quick:
        args.positions = min(args.positions, 500)
    x, legal = positions(args.sources, args.calibration + args.positions, seed=1)
    calib, test, test_legal = x[: args.calibration], x[args.calibration:], legal[args.calibration:]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        q = quantize_int8(args.net, [calib], Path(tmp) / "net.int8.onnx",
                          calibration_note=f"{len(calib)} positions from {', '.join(args.sources)}")
        made = time.perf_counter() - t
        acc = compare_int8(args.net, q, test, test_legal)
        fp = OnnxEvaluator(args.net, EvalConfig(threads=1))
        i8 = OnnxEvaluator(q, EvalConfig(threads=1, precision="int8"))
        secs = 1.0 if args.quick else 3.0
        s_fp, s_i8 = speed(fp, test, test_legal, secs), speed(i8, test, test_legal, secs)
    print(f"# int8_accuracy | net {args.net} | {len(calib)} calibration + {len(test)} test positions "
          f"({test.shape[-1]}x{test.shape[-1]}) | quantized in {made:.1f} s | load avg {os.getloadavg()[0]:.2f}")
    print(f"top-move agreement {acc['top1_agreement']:.4f}, value error mean {acc['value_mae']:.4f} "
          f"max {acc['value_max_abs']:.4f}, policy max abs diff {acc['policy_max_abs']:.4f}")
    print(f"speed (1 thread, batch 16): fp32 {s_fp:.0f}, int8 {s_i8:.0f} positions/s ({s_i8 / s_fp:.2f}x)")
    ok = acc["top1_agreement"] >= 0.97 and acc["value_mae"] <= 0.02
    print(f"int8 {'meets' if ok else 'does not meet'} the default bar (agreement >= 0.97, value error <= 0.02)")
    print(f"RESULT int8_top1_agreement {acc['top1_agreement']:.4f}")
    print(f"RESULT int8_value_mae {acc['value_mae']:.4f}")
    print(f"RESULT int8_speedup_trained {s_i8 / s_fp:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
