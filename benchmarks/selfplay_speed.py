"""Self-play speed: positions/s and network evaluations/s on one core, next to the raw evaluator.

One process, one onnxruntime thread (the self-play worker setting), the default network shape
(the packaged b6c64; random weights are fine for speed), 9x9. The raw evaluator throughput is measured
in the same run, interleaved, on batches of real positions of the same size as self-play's average
network call. Efficiency = self-play network evaluations/s / raw evaluator positions/s.

Ray mode (``--ray``, needs the ``azgo[cluster]`` extra): the same self-play settings played twice into
fresh folders, once by ``--workers`` (2) local worker processes (``run_selfplay``, as ``azgo selfplay
--workers 2``) and once by as many Ray actors on a one-machine Ray started here (``RaySelfPlay``, as
``azgo selfplay --ray local --workers 2``; the Ray start itself is not timed, the actors' start is),
interleaved, ``--rounds`` times each. Positions/s = moves of the games written / wall seconds of the
command's work; ``ray_selfplay_vs_local`` = Ray's median over local's median (1.0 = no cost).

Int8 mode (``--int8``): the same self-play settings on one core with the fp32 network and with its
static int8 sibling (``<net>.int8.onnx``, as ``azgo selfplay --precision int8``), interleaved, the same
runner seeds for both; ``selfplay_int8_vs_fp32`` = int8's median positions/s over fp32's.

Usage: python benchmarks/selfplay_speed.py [--quick] [--net PATH] [--size N] [--ray [--workers N] | --int8]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

import numpy as np

from azgo.engine.features import encode_game
from azgo.engine.game import Game
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.registry import resolve_net
from azgo.training.selfplay import SelfPlayConfig, SelfPlayRunner


def real_positions(size: int, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = random.Random(seed)
    planes, legal = [], []
    while len(planes) < count:
        g = Game(size, 7.0)
        for _ in range(rng.randrange(0, size * size)):
            moves = g.board.legal_moves()
            if len(moves) <= 1:
                break
            g.play(rng.choice(moves[:-1]))
        planes.append(encode_game(g))
        legal.append(g.board.legal_mask())
    return np.stack(planes), np.stack(legal)


def raw_rate(ev: OnnxEvaluator, planes: np.ndarray, legal: np.ndarray, batch: int, seconds: float) -> float:
    done, k = 0, 0
    ev.evaluate(planes[:batch], legal[:batch])
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        i = (k * batch) % (len(planes) - batch)
        ev.evaluate(planes[i:i + batch], legal[i:i + batch])
        done += batch
        k += 1
    return done / (time.perf_counter() - t)


def archive_positions(folder: str) -> int:
    """Moves in the finished games of an archive folder."""
    from azgo.engine.sgf import load_sgf
    from azgo.training.workers import archive_games
    return sum(len(load_sgf(p).nodes) for p in archive_games(folder))


def ray_vs_local(args) -> int:
    """The Ray mode: local worker processes vs Ray actors, same settings (see the module docstring)."""
    import shutil
    import tempfile

    import ray

    from azgo.training.ray_selfplay import RaySelfPlay
    from azgo.training.workers import run_selfplay
    net = str(resolve_net(args.net))
    if args.quick:  # about 15 s a run on 2 idle cores
        cfg = SelfPlayConfig(size=args.size, full_visits=48, cheap_visits=12, concurrent_games=2)
        games, rounds = 6 * args.workers, args.rounds or 1
    else:
        cfg = SelfPlayConfig(size=args.size, concurrent_games=4)
        games, rounds = 8 * args.workers, args.rounds or 2
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    print(f"# selfplay_speed --ray{' --quick' if args.quick else ''} | net {os.path.basename(net)} | "
          f"{args.size}x{args.size} | {args.workers} local processes vs {args.workers} Ray actors, 1 onnxruntime "
          f"thread each | {games} games per run, {cfg.concurrent_games} games x {cfg.leaves_per_game} leaves per "
          f"call | full {cfg.full_visits} / cheap {cfg.cheap_visits} visits | load avg {os.getloadavg()[0]:.2f}")
    rates: dict[str, list[float]] = {"local": [], "ray": []}
    tmp = tempfile.mkdtemp(prefix="azgo-bench-")
    try:
        for r in range(rounds):
            for mode in ("local", "ray"):
                out = os.path.join(tmp, f"{mode}{r}")
                t = time.perf_counter()
                if mode == "local":
                    run_selfplay(out, games, args.workers, cfg, net=net, seed=100 + r, show_progress=False)
                else:
                    pool = RaySelfPlay("local", cfg, workers=args.workers, log=lambda m: None)
                    try:
                        pool.play(out, games, net=net, seed=100 + r, show_progress=False)
                    finally:
                        pool.close()
                dt = time.perf_counter() - t
                pos = archive_positions(out)
                rates[mode].append(pos / dt)
                print(f"round {r + 1} {mode:5s}: {games} games, {pos} positions in {dt:.1f} s: "
                      f"{pos / dt:.1f} positions/s")
    finally:
        ray.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    local, on_ray = statistics.median(rates["local"]), statistics.median(rates["ray"])
    print(f"local {args.workers} processes: {local:.1f} positions/s; Ray {args.workers} actors: {on_ray:.1f} positions/s")
    print(f"RESULT ray_selfplay_positions_per_s {on_ray:.1f}")
    print(f"RESULT local_selfplay_positions_per_s {local:.1f}")
    print(f"RESULT ray_selfplay_vs_local {on_ray / local:.3f}")
    return 0


def int8_vs_fp32(args) -> int:
    """The int8 mode: fp32 vs int8 self-play positions/s on one core (see the module docstring)."""
    net = resolve_net(args.net)
    evs = {p: OnnxEvaluator(net, EvalConfig(threads=1, symmetry="random", cache_size=0, precision=p))
           for p in ("fp32", "int8")}
    cfg = SelfPlayConfig(size=args.size, concurrent_games=16, leaves_per_game=4)
    rounds, seconds = (2, 12.0) if args.quick else (3, 40.0)
    print(f"# selfplay_speed --int8{' --quick' if args.quick else ''} | {os.path.basename(str(evs['fp32'].path))} vs "
          f"{os.path.basename(str(evs['int8'].path))} | {args.size}x{args.size} | 1 onnxruntime thread | "
          f"full {cfg.full_visits} / cheap {cfg.cheap_visits} visits | load avg {os.getloadavg()[0]:.2f}")
    rates: dict[str, list[float]] = {"fp32": [], "int8": []}
    for r in range(rounds):
        for p, ev in evs.items():
            runner = SelfPlayRunner(ev, cfg, seed=200 + r)
            deadline = time.perf_counter() + seconds
            st = runner.play(10 ** 6, should_stop=lambda: time.perf_counter() > deadline)
            rates[p].append(st.moves / st.seconds)
            print(f"round {r + 1} {p}: {st.moves} moves in {st.seconds:.1f} s: {rates[p][-1]:.1f} positions/s, "
                  f"{st.evals / st.seconds:.0f} evals/s")
    fp32, int8 = statistics.median(rates["fp32"]), statistics.median(rates["int8"])
    print(f"RESULT selfplay_fp32_positions_per_s {fp32:.1f}")
    print(f"RESULT selfplay_int8_positions_per_s {int8:.1f}")
    print(f"RESULT selfplay_int8_vs_fp32 {int8 / fp32:.2f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="under a minute")
    ap.add_argument("--net", help="network (default: the packaged one)")
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--ray", action="store_true", help="Ray actors vs local worker processes (azgo[cluster])")
    ap.add_argument("--workers", type=int, default=2, help="with --ray: local processes and Ray actors")
    ap.add_argument("--rounds", type=int, help="with --ray: runs of each mode (default 1 with --quick, else 2)")
    ap.add_argument("--int8", action="store_true", help="fp32 vs int8 network (azgo selfplay --precision int8)")
    args = ap.parse_args()
    if args.int8:
        return int8_vs_fp32(args)
    if args.ray:
        return ray_vs_local(args)
    rounds = 2 if args.quick else 4
    seconds = 15.0 if args.quick else 45.0  # per round; games in progress count their moves
    net = resolve_net(args.net)
    ev = OnnxEvaluator(net, EvalConfig(threads=1, symmetry="random", cache_size=0))
    raw_ev = OnnxEvaluator(net, EvalConfig(threads=1, cache_size=0))
    cfg = SelfPlayConfig(size=args.size, concurrent_games=16, leaves_per_game=4)
    planes, legal = real_positions(args.size, 512)
    print(f"# selfplay_speed{' --quick' if args.quick else ''} | net {os.path.basename(str(net))} "
          f"({ev.net_name}) | {args.size}x{args.size} | 1 onnxruntime thread | {cfg.concurrent_games} games x "
          f"{cfg.leaves_per_game} leaves per call | full {cfg.full_visits} / cheap {cfg.cheap_visits} visits, "
          f"p(full) {cfg.full_prob} | load avg {os.getloadavg()[0]:.2f}")
    rows = []
    for r in range(rounds):
        runner = SelfPlayRunner(ev, cfg, seed=100 + r)
        c0 = time.process_time()
        deadline = time.perf_counter() + seconds
        st = runner.play(10 ** 6, should_stop=lambda: time.perf_counter() > deadline)
        cpu = time.process_time() - c0
        per_call = st.evals / max(st.network_calls, 1)
        batch = max(1, int(round(per_call)))
        raw = raw_rate(raw_ev, planes, legal, batch, 1.0 if args.quick else 2.0)
        rows.append(dict(games=st.games, moves=st.moves, evals=st.evals, s=st.seconds, cpu=cpu, per_call=per_call,
                         raw=raw, nn=st.nn_seconds))
        print(f"round {r + 1}: {st.games} games finished, {st.moves} moves in {st.seconds:.1f} s ({cpu:.1f} cpu-s): "
              f"{st.moves / st.seconds:.1f} positions/s, {st.evals / st.seconds:.0f} evals/s, "
              f"{per_call:.1f} positions per network call, network share {st.nn_seconds / st.seconds:.2f}; "
              f"raw evaluator at batch {batch}: {raw:.0f} positions/s")
    eff = statistics.median(r["evals"] / r["s"] / r["raw"] for r in rows)
    pos = statistics.median(r["moves"] / r["s"] for r in rows)
    evals = statistics.median(r["evals"] / r["s"] for r in rows)
    per_core = statistics.median(r["evals"] / r["cpu"] for r in rows)
    print(f"self-play: {pos:.1f} positions/s, {evals:.0f} network evals/s ({per_core:.0f} per cpu-second) "
          f"on one core; efficiency vs raw evaluator {eff:.3f}")
    print(f"RESULT selfplay_positions_per_s {pos:.1f}")
    print(f"RESULT selfplay_evals_per_s {evals:.0f}")
    print(f"RESULT selfplay_efficiency {eff:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
