"""Search speed: playouts/s of the PUCT search next to the raw evaluator throughput (search efficiency).

Usage::

    python benchmarks/search_speed.py              # default run (~1-2 min on 2 cores)
    python benchmarks/search_speed.py --quick      # < 1 min
    python benchmarks/search_speed.py --profile    # also cProfile a 9x9 search of 800 playouts
    python benchmarks/search_speed.py --no-lz      # skip the Leela Zero comparison
    python benchmarks/search_speed.py --net nets/large9.onnx --precision int8   # a packaged network, as play runs it

What is measured (one process, one intra-op thread unless said otherwise; the default network, a
random b6c64, is fine for speed):

* **search**: ``Searcher.search`` with ``Limits(playouts=P)`` and a fresh tree, from the empty board
  and from mid-game positions (40 random legal moves on 9x9, 120 on 19x19, that fill no own
  single-point eye, fixed seeds) on 9x9 and 19x19; playouts/s = ``SearchResult.playouts / seconds``.
  The evaluator's cache is off (``cache_size=0``), so every leaf costs a network evaluation.
* **raw**: ``OnnxEvaluator.evaluate`` alone on batches of the search's batch size
  (``SearchConfig.batch_size``, 8) of real positions (``features.encode`` of positions from random
  games, with their history and legal masks), repeated for ``--raw-s`` seconds; positions/s.
* **efficiency** = search playouts/s / raw positions/s. Raw trials are interleaved with the searches:
  every search trial is paired with the mean of the raw trials just before and after it, and the
  reported efficiency is the median of these paired ratios (robust to load from other processes).
  Two versions are printed: ``eff(playouts)`` counts every playout, including those that end in a
  finished game (two passes; scored exactly, no network call; ``term`` is their share), which
  can push it above 1 with a random network; ``eff(evals)`` counts only the playouts that needed
  the network (search evaluations/s / raw positions/s). The ``RESULT`` lines give the conservative
  ``eff(evals)``, the median over the empty-board and mid-game trials of a board size.
* **nn share** = ``SearchResult.nn_seconds / seconds`` (time inside ``evaluator.evaluate``, which
  includes its numpy softmax, as the raw figure does); the rest is Python search overhead, also
  given in microseconds per playout. ``batch`` is the mean number of leaves per network call
  (collisions end a batch early) and ``nn pos/s`` the evaluator's speed inside the search.
* **Leela Zero** (19x19, empty board, 2 threads): ``leelaz --cpu-only -t 2 --noponder -p N`` (Debian
  ``leela-zero`` 0.17, ``/usr/games/leelaz``) with a random 6x64 weights file generated into a temp
  folder at run time, against azgo's search with ``--threads 2`` (2 search threads x 1 onnxruntime
  thread); both figures are
  playouts/s (LZ's "n/s" from its stderr summary), interleaved, medians. Skipped with a message when
  leelaz is not installed (``apt-get install -y leela-zero``; or pass ``--install-lz``). The
  networks differ in detail (azgo's b6c64 has 26 input planes, global-pooling blocks and
  ownership/score heads; LZ's 6x64 has 18 planes and plain heads; LZ uses Winograd convolutions).

* **two-core scaling** (9x9 and 19x19): playouts/s of the default thread plan (``--threads auto``:
  on 2 cores, 2 search threads x 1 onnxruntime thread) over 1 search thread x 1 onnxruntime thread,
  same network, empty board and a mid-game position, interleaved; median of paired ratios.

The run ends with ``RESULT search_vs_leelaz_19x19 <x>`` (when measured), ``RESULT two_core_scaling_9x9``
and ``RESULT two_core_scaling_19x19``, then exactly
``RESULT search_efficiency_9x9 <x>`` and ``RESULT search_efficiency_19x19 <x>`` as the last two lines.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from azgo.engine import planes as P
from azgo.engine.board import WALL
from azgo.engine.features import encode
from azgo.engine.game import Game
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.threads import plan_threads
from azgo.nets.evaluator import PRECISIONS, EvalConfig, OnnxEvaluator
from azgo.nets.registry import resolve_net

LEELAZ = "/usr/games/leelaz"
MID_MOVES = {9: 40, 19: 120}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer and shorter trials (< 1 min)")
    ap.add_argument("--net", default=None, help="ONNX network (default: the packaged default network)")
    ap.add_argument("--precision", default="fp32", choices=PRECISIONS,
                    help="the evaluator's precision (EvalConfig.precision): int8 / auto load the network's int8 "
                         "copy, as play does")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 6, quick 3)")
    ap.add_argument("--playouts-9", type=int, default=None, help="playouts per 9x9 search (default 800, quick 400)")
    ap.add_argument("--playouts-19", type=int, default=None, help="playouts per 19x19 search (default 400, quick 150)")
    ap.add_argument("--raw-s", type=float, default=None, help="seconds per raw evaluator trial (default 0.4, quick 0.25)")
    ap.add_argument("--batch", type=int, default=None, help="search batch size (default: SearchConfig().batch_size)")
    ap.add_argument("--mid-positions", type=int, default=3, help="mid-game positions per board size (seeds 1..k)")
    ap.add_argument("--no-lz", action="store_true", help="skip the Leela Zero comparison")
    ap.add_argument("--install-lz", action="store_true", help="apt-get install -y leela-zero if leelaz is missing")
    ap.add_argument("--lz-playouts", type=int, default=None, help="playouts per LZ/azgo 2-thread search (default 1600, quick 400)")
    ap.add_argument("--lz-rounds", type=int, default=None, help="LZ comparison rounds (default 3, quick 2)")
    ap.add_argument("--scaling-rounds", type=int, default=None, help="rounds of the default-threads vs 1-thread "
                    "comparison (default 4, quick 2)")
    ap.add_argument("--profile", action="store_true", help="cProfile a 9x9 search (empty + mid-game) and print the top functions")
    ap.add_argument("--profile-playouts", type=int, default=800)
    return ap.parse_args(argv)


# ============================================================================ positions
def random_game(size: int, moves: int, seed: int) -> Game:
    """A game of ``moves`` uniformly random legal moves that fill no own single-point eye (no passes
    unless nothing else is left)."""
    rng = random.Random(seed)
    g = Game(size)
    for _ in range(moves):
        b = g.board
        me = b.to_move
        cells, nbrs, loc_of = b.cells, b.g.nbrs, b.g.loc_of
        cands = [m for m in b.legal_moves() if m != b.pass_move
                 and not all(cells[q] in (me, WALL) for q in nbrs[loc_of[m]])]
        g.play(rng.choice(cands) if cands else b.pass_move)
        if g.over:
            break
    return g


def history(game: Game, index: int) -> list:
    """The boards encode wants for position ``index`` of ``game``: it and the ones before, newest first."""
    return game.boards[index::-1][: P.HISTORY]


def raw_batches(size: int, batch: int, komi: float = 7.5, count: int = 12) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` batches of ``batch`` real positions (planes, legal masks) from random games."""
    planes, legal = [], []
    seed = 1000
    while len(planes) < batch * count:
        g = random_game(size, MID_MOVES[size] + 40, seed)
        seed += 1
        for i in range(0, len(g.boards), 3):
            planes.append(encode(history(g, i), komi))
            legal.append(g.boards[i].legal_mask())
    rng = np.random.default_rng(0)
    order = rng.permutation(len(planes))[: batch * count]
    out = []
    for k in range(count):
        idx = order[k * batch:(k + 1) * batch]
        out.append((np.ascontiguousarray(np.stack([planes[i] for i in idx])), np.stack([legal[i] for i in idx])))
    return out


# ============================================================================ measurement
class CountingEvaluator:
    """Delegates to an evaluator and counts calls and positions (adds one Python call per batch)."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = 0
        self.positions = 0
        self.cpu_seconds = 0.0

    def evaluate(self, planes, legal, keys=None):
        self.calls += 1
        self.positions += len(planes)
        return self.inner.evaluate(planes, legal, keys)


def raw_trial(ev: OnnxEvaluator, batches, seconds: float) -> tuple[float, float]:
    """(positions per wall second, positions per CPU second of this process) of ``ev.evaluate``
    cycling through ``batches`` for at least ``seconds``."""
    n = 0
    k = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    while True:
        planes, legal = batches[k % len(batches)]
        ev.evaluate(planes, legal)
        n += len(planes)
        k += 1
        el = time.perf_counter() - t0
        if el >= seconds and k >= 4:
            return n / el, n / max(time.process_time() - c0, 1e-9)


@dataclass
class SearchStats:
    pps: list[float] = field(default_factory=list)  # playouts/s
    ratio: list[float] = field(default_factory=list)  # paired efficiency
    nn_share: list[float] = field(default_factory=list)
    eval_ratio: list[float] = field(default_factory=list)  # paired efficiency, network leaves only
    terminal: list[float] = field(default_factory=list)  # share of playouts ending in a finished game
    py_us: list[float] = field(default_factory=list)  # Python microseconds per playout
    batch: list[float] = field(default_factory=list)
    nn_pps: list[float] = field(default_factory=list)  # evaluator positions/s inside the search
    cpu_ratio: list[float] = field(default_factory=list)  # eff(evals) in CPU seconds of this process


def scaling(net, positions, playouts, rounds: int, batch: int, precision: str = "fp32") -> dict[int, float]:
    """Playouts/s of the default thread plan (``--threads auto``) over one search thread with one
    onnxruntime thread, same network, interleaved, per board size (median of paired ratios)."""
    plan = plan_threads(None)
    one = OnnxEvaluator(net, EvalConfig(threads=1, cache_size=0, precision=precision))
    dflt = OnnxEvaluator(net, EvalConfig(threads=plan.intra_op, cache_size=0, precision=precision))
    cfg1 = SearchConfig(batch_size=batch, threads=1)
    cfgd = SearchConfig(batch_size=batch, threads=plan.search)
    print(f"\n## default threads ({plan.describe()}) vs 1 search thread x 1 onnxruntime thread; "
          f"{rounds} rounds, empty board and a mid-game position, playouts/s, paired")
    out = {}
    for size in (9, 19):
        games = [positions[size][0][1], positions[size][1][1]]
        search_trial(dflt, games[1], 2 * batch, cfgd, seed=0)
        ratios, a, b = [], [], []
        for rnd in range(rounds):
            for g in games:
                r1, _ = search_trial(one, g, playouts[size], cfg1, seed=rnd)
                rd, _ = search_trial(dflt, g, playouts[size], cfgd, seed=rnd)
                a.append(r1.playouts / r1.seconds)
                b.append(rd.playouts / rd.seconds)
                ratios.append(b[-1] / a[-1])
        out[size] = med(ratios)
        print(f"{size}x{size}: 1 thread {med(a):.0f} playouts/s, default {med(b):.0f} playouts/s, "
              f"scaling {out[size]:.2f} (paired {min(ratios):.2f}-{max(ratios):.2f})")
    return out


def search_trial(ev: OnnxEvaluator, game: Game, playouts: int, cfg: SearchConfig, seed: int):
    counter = CountingEvaluator(ev)
    s = Searcher(counter, cfg, seed=seed)
    c0 = time.process_time()
    r = s.search(game, Limits(playouts=playouts), reuse=False)
    counter.cpu_seconds = time.process_time() - c0
    return r, counter


def med(xs):
    return statistics.median(xs) if xs else float("nan")


# ============================================================================ Leela Zero
def write_lz_weights(path: Path, blocks: int = 6, filters: int = 64, seed: int = 0) -> None:
    """A random Leela Zero v1 text weights file (He-normal convs/FCs, BN mean 0 / var 1), as in
    shared/research/measure.md. 6x64 -> ~6.9 MB; written at run time into a temp folder."""
    rng = np.random.default_rng(seed)
    ch = filters

    def line(n, scale=None, const=None):
        a = np.full(n, const, np.float32) if const is not None else rng.normal(0, scale, n).astype(np.float32)
        return " ".join("%.4g" % x for x in a.tolist()) + "\n"

    lines = ["1\n", line(18 * ch * 9, (2 / 162) ** .5), line(ch, const=0), line(ch, const=0), line(ch, const=1)]
    for _ in range(2 * blocks):
        lines += [line(ch * ch * 9, (2 / (ch * 9)) ** .5), line(ch, const=0), line(ch, const=0), line(ch, const=1)]
    lines += [line(ch * 2, (2 / ch) ** .5), line(2, const=0), line(2, const=0), line(2, const=1),
              line(722 * 362, (1 / 722) ** .5), line(362, const=0)]
    lines += [line(ch, (2 / ch) ** .5), line(1, const=0), line(1, const=0), line(1, const=1),
              line(361 * 256, (2 / 361) ** .5), line(256, const=0), line(256, (1 / 256) ** .5), line(1, const=0)]
    Path(path).write_text("".join(lines))


def find_leelaz(install: bool) -> str | None:
    exe = LEELAZ if os.path.exists(LEELAZ) else shutil.which("leelaz")
    if exe is None and install and shutil.which("apt-get"):
        print("# leelaz missing: running apt-get install -y leela-zero", flush=True)
        try:
            subprocess.run(["apt-get", "install", "-y", "leela-zero"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            print(f"# apt-get failed: {exc}")
        exe = LEELAZ if os.path.exists(LEELAZ) else shutil.which("leelaz")
    return exe


def leelaz_trial(exe: str, weights: Path, playouts: int, threads: int) -> tuple[float, int]:
    """(n/s, playouts) from LZ's own summary line of one ``genmove b`` on the empty 19x19 board."""
    cmd = [exe, "--cpu-only", "-w", str(weights), "--gtp", "--noponder", "-p", str(playouts),
           "-t", str(threads), "--seed", "1"]
    p = subprocess.run(cmd, input="genmove b\nquit\n", capture_output=True, text=True, timeout=300)
    m = re.findall(r"(\d+) visits, (\d+) nodes, (\d+) playouts, (\d+) n/s", p.stderr)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"leelaz failed (rc {p.returncode}): {p.stderr[-800:]}")
    _, _, n, nps = m[-1]
    return float(nps), int(n)


# ============================================================================ profile
def profile_search(ev: OnnxEvaluator, games: list[Game], playouts: int, cfg: SearchConfig) -> None:
    import cProfile
    import io
    import pstats

    pr = cProfile.Profile()
    total = nn = 0.0
    n = 0
    for i, g in enumerate(games):
        s = Searcher(ev, cfg, seed=100 + i)
        pr.enable()
        r = s.search(g, Limits(playouts=playouts), reuse=False)
        pr.disable()
        total += r.seconds
        nn += r.nn_seconds
        n += r.playouts
    print(f"\n## cProfile: 9x9 searches of {playouts} playouts from {len(games)} positions "
          f"(under the profiler: {n / total:.0f} playouts/s, nn share {nn / total:.2f}, "
          f"{(total - nn) / n * 1e6:.0f} us Python/playout)")
    for key in ("tottime", "cumtime"):
        buf = io.StringIO()
        pstats.Stats(pr, stream=buf).strip_dirs().sort_stats(key).print_stats(22)
        text = buf.getvalue()
        start = text.find("   ncalls")
        print(f"# sorted by {key}")
        print(text[start:].rstrip())


# ============================================================================ main
def main(argv=None) -> int:
    args = parse_args(argv)
    import onnxruntime as ort

    quick = args.quick
    rounds = args.rounds or (3 if quick else 6)
    playouts = {9: args.playouts_9 or (400 if quick else 800), 19: args.playouts_19 or (150 if quick else 400)}
    raw_s = args.raw_s or (0.25 if quick else 0.4)
    cfg = SearchConfig() if args.batch is None else SearchConfig(batch_size=args.batch)
    batch = cfg.batch_size
    lz_playouts = args.lz_playouts or (400 if quick else 1600)
    lz_rounds = args.lz_rounds or (2 if quick else 3)

    net = resolve_net(args.net)
    ev = OnnxEvaluator(net, EvalConfig(threads=1, cache_size=0, precision=args.precision))
    t_start = time.perf_counter()
    print(f"# search_speed {'--quick ' if quick else ''}| net {net.name} ({ev.net_name}) | onnxruntime "
          f"{ort.__version__} | numpy {np.__version__} | python {sys.version.split()[0]} | cpus {os.cpu_count()} "
          f"| load avg at start {os.getloadavg()[0]:.2f}")
    print(f"# 1 intra-op thread, spinning off, evaluator cache off (cache_size={ev.config.cache_size}), "
          f"symmetry {ev.config.symmetry}; search batch {batch}; {rounds} interleaved rounds; "
          f"playouts/search 9x9 {playouts[9]}, 19x19 {playouts[19]}; raw trials {raw_s}s")

    positions: dict[int, list[tuple[str, Game]]] = {}
    batches = {}
    for size in (9, 19):
        mids = [random_game(size, MID_MOVES[size], seed) for seed in range(1, args.mid_positions + 1)]
        positions[size] = [("empty", Game(size))] + [(f"mid{i + 1}", g) for i, g in enumerate(mids)]
        batches[size] = raw_batches(size, batch)
        # warm-up: the network on this size, and a short search
        raw_trial(ev, batches[size], 0.1)
        search_trial(ev, mids[0], 2 * batch, cfg, seed=0)

    stats = {(size, kind): SearchStats() for size in (9, 19) for kind in ("empty", "mid")}
    raw = {9: [], 19: []}
    raw_cpu = {9: [], 19: []}
    for rnd in range(rounds):
        for size in (9, 19):
            mids = [g for name, g in positions[size] if name != "empty"]
            trial_games = [("empty", positions[size][0][1]), ("mid", mids[rnd % len(mids)])]
            before, before_cpu = raw_trial(ev, batches[size], raw_s)
            results = [(kind, search_trial(ev, g, playouts[size], cfg, seed=rnd)) for kind, g in trial_games]
            after, after_cpu = raw_trial(ev, batches[size], raw_s)
            raw[size] += [before, after]
            raw_cpu[size] += [before_cpu, after_cpu]
            ref = (before + after) / 2
            ref_cpu = (before_cpu + after_cpu) / 2
            for kind, (r, counter) in results:
                st = stats[(size, kind)]
                pps = r.playouts / r.seconds
                st.pps.append(pps)
                st.ratio.append(pps / ref)
                st.eval_ratio.append(counter.positions / r.seconds / ref)
                st.terminal.append(1 - counter.positions / r.playouts)
                st.cpu_ratio.append(counter.positions / counter.cpu_seconds / ref_cpu)
                st.nn_share.append(r.nn_seconds / r.seconds)
                st.py_us.append((r.seconds - r.nn_seconds) / r.playouts * 1e6)
                st.batch.append(counter.positions / max(counter.calls, 1))
                st.nn_pps.append(counter.positions / r.nn_seconds if r.nn_seconds > 0 else float("nan"))

    print(f"\n## 1 thread: search vs raw evaluator (medians of {rounds} trials; efficiency = median of paired ratios)")
    print(f"{'board':>6} {'start':>6} {'playouts/s':>10} {'evals/s':>7} {'raw pos/s':>9} {'eff(playouts)':>13} "
          f"{'eff(evals)':>10} {'nn share':>8} {'py share':>8} {'py us/playout':>13} {'nn us/playout':>13} "
          f"{'batch':>5} {'nn pos/s':>8} {'term':>5}")
    efficiency = {}
    for size in (9, 19):
        all_ratios, all_eval = [], []
        for kind in ("empty", "mid"):
            st = stats[(size, kind)]
            all_ratios += st.ratio
            all_eval += st.eval_ratio
            pps = med(st.pps)
            eps = med([p * (1 - t) for p, t in zip(st.pps, st.terminal)])
            nn_us = med([s / p * 1e6 for s, p in zip(st.nn_share, st.pps)])
            print(f"{size}x{size:<4} {kind:>6} {pps:>10.0f} {eps:>7.0f} {med(raw[size]):>9.0f} {med(st.ratio):>13.3f} "
                  f"{med(st.eval_ratio):>10.3f} {med(st.nn_share):>8.3f} {1 - med(st.nn_share):>8.3f} "
                  f"{med(st.py_us):>13.0f} {nn_us:>13.0f} {med(st.batch):>5.2f} {med(st.nn_pps):>8.0f} "
                  f"{med(st.terminal):>5.2f}")
        efficiency[size] = med(all_eval)
        print(f"{size}x{size:<4} {'all':>6} {'':>10} {'':>7} {'':>9} {med(all_ratios):>13.3f} {efficiency[size]:>10.3f}"
              f"   (raw {1e3 / med(raw[size]):.3f} ms/position at batch {batch}; paired eff(evals) "
              f"{min(all_eval):.3f}-{max(all_eval):.3f})")
    print("# cross-check in CPU time of this process (insensitive to other processes taking the core): "
          + "; ".join(f"{size}x{size} raw {med(raw_cpu[size]):.0f} pos/cpu-s, eff(evals) "
                      f"{med([x for k in ('empty', 'mid') for x in stats[(size, k)].cpu_ratio]):.3f}"
                      for size in (9, 19)))
    info = ev.cache_info()
    print(f"# evaluator cache: hits {info['hits']}, misses {info['misses']} (off: every leaf was evaluated)")

    scale = scaling(net, positions, playouts, args.scaling_rounds or (2 if quick else 4), batch, args.precision)

    # ------------------------------------------------------------------ Leela Zero, 2 threads
    lz_ratio = None
    if args.no_lz:
        print("\n## Leela Zero comparison skipped (--no-lz)")
    else:
        exe = find_leelaz(args.install_lz)
        if exe is None:
            print("\n## Leela Zero comparison skipped: leelaz not installed "
                  "(apt-get install -y leela-zero, or rerun with --install-lz)")
        else:
            tmp = Path(tempfile.mkdtemp(prefix="azgo-lz-"))
            try:
                weights = tmp / "lz_6x64.txt"
                t = time.perf_counter()
                write_lz_weights(weights, 6, 64, seed=0)
                gen_s = time.perf_counter() - t
                plan2 = plan_threads(2)
                ev2 = OnnxEvaluator(net, EvalConfig(threads=plan2.intra_op, cache_size=0, precision=args.precision))
                cfg2 = SearchConfig(batch_size=batch, threads=plan2.search)
                empty19 = Game(19)
                search_trial(ev2, empty19, 2 * batch, cfg2, seed=0)  # warm-up
                leelaz_trial(exe, weights, 50, 2)  # warm-up (page cache)
                az, az_evals, lz, az_share = [], [], [], []
                ratios = []
                for rnd in range(lz_rounds):
                    nps, _ = leelaz_trial(exe, weights, lz_playouts, 2)
                    r, counter = search_trial(ev2, empty19, lz_playouts, cfg2, seed=rnd)
                    nps2, _ = leelaz_trial(exe, weights, lz_playouts, 2)
                    lz_ref = (nps + nps2) / 2
                    lz += [nps, nps2]
                    az.append(r.playouts / r.seconds)
                    az_evals.append(counter.positions / r.seconds)
                    az_share.append(r.nn_seconds / r.seconds)
                    ratios.append(az[-1] / lz_ref)
                lz_ratio = med(ratios)
                print(f"\n## 19x19 empty board, 2 threads: azgo (b6c64, --threads 2: {plan2.describe()}) vs Leela Zero 0.17 "
                      f"--cpu-only -t 2 (random 6x64, generated in {gen_s:.1f}s); {lz_playouts} playouts per search, "
                      f"{lz_rounds} rounds")
                print(f"azgo      playouts/s {med(az):7.0f}  (trials {', '.join(f'{x:.0f}' for x in az)}; "
                      f"nn share {med(az_share):.3f}; network evals/s {med(az_evals):.0f})")
                print(f"leelaz    playouts/s {med(lz):7.0f}  (trials {', '.join(f'{x:.0f}' for x in lz)}; LZ's own n/s)")
                print(f"ratio azgo/leelaz    {lz_ratio:7.2f}  (median of paired ratios; target >= 2.0)")
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
                print(f"\n## Leela Zero comparison failed, skipped: {exc}")
                lz_ratio = None
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

    if args.profile:
        games9 = [g for _, g in positions[9][:2]]
        profile_search(ev, games9, args.profile_playouts, cfg)

    print(f"\n# total {time.perf_counter() - t_start:.0f}s, load avg at end {os.getloadavg()[0]:.2f}")
    if lz_ratio is not None:
        print(f"RESULT search_vs_leelaz_19x19 {lz_ratio:.2f}")
    print(f"RESULT two_core_scaling_9x9 {scale[9]:.2f}")
    print(f"RESULT two_core_scaling_19x19 {scale[19]:.2f}")
    print(f"RESULT search_efficiency_9x9 {efficiency[9]:.3f}")
    print(f"RESULT search_efficiency_19x19 {efficiency[19]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
