"""Search memory: bytes per tree node, a long analysis under the memory cap, RSS over 300 games.

Usage::

    python benchmarks/search_memory.py            # 20k-node tree, 20-minute kata-analyze, 300 games
    python benchmarks/search_memory.py --quick    # < 1 min: 1.5k nodes, 20 s analysis at a small cap, 40 games
    python benchmarks/search_memory.py --analysis-seconds 60 --cap 600

What is measured:

* **tree**: ``tracemalloc`` over one ``Searcher.search`` on the empty 19x19 board and on a mid-game
  position (120 random moves), evaluator cache off, with the default ``SearchConfig`` (the board cache
  included): traced bytes still held after the search / nodes in the tree (a walk of it).
  ``RESULT tree_bytes_per_node_19x19`` is the larger of the two.
* **analysis**: a real ``azgo gtp --max-memory CAP`` process on 19x19 (two moves played, then
  ``kata-analyze b 50``) for ``--analysis-seconds``, CAP being azgo's default (a quarter of RAM, at
  most 4 GB: the run shows how far 20 minutes of analysis grow) or, with ``--quick``, the resident
  size of a warmed-up engine + 25 MB (reached within seconds: the rest of the run is spent at the
  cap); its VmRSS is sampled every 0.5 s from
  ``/proc/PID/status``. The run checks that info lines keep coming after the cap (the tree is reported
  as it is) and that the peak stays under cap + 300 MB. ``RESULT analysis_rss_mb`` is the peak.
* **games**: one ``azgo gtp`` process plays ``--games`` consecutive 9x9 games against itself
  (``genmove`` for both colours, ``--visits 8``, ``clear_board`` between games); VmRSS after the first
  game and after the last. ``RESULT rss_growth_300_games`` is last / first (the name keeps the issue's
  300 even when ``--games`` differs; the count is printed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

from azgo.engine.game import Game
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.gtp.client import GtpClient
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.registry import resolve_net

from search_speed import random_game  # this folder is on sys.path when the script runs


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="< 1 minute")
    ap.add_argument("--net", default=None)
    ap.add_argument("--nodes", type=int, default=None, help="playouts of the tree measurement (default 20000, quick 1500)")
    ap.add_argument("--analysis-seconds", type=float, default=None, help="default 1200, quick 20")
    ap.add_argument("--cap", type=float, default=None, help="--max-memory of the analysis run in MB "
                    "(default: azgo's default cap; quick: the RSS of a warmed-up engine + 25, reached within seconds)")
    ap.add_argument("--games", type=int, default=None, help="default 300, quick 40")
    return ap.parse_args(argv)


def tree_bytes(ev, game: Game, playouts: int) -> tuple[float, int, float]:
    s = Searcher(ev, SearchConfig(), seed=1)
    s.search(game, Limits(playouts=16), reuse=False)  # warm-up (arrays, caches of numpy/onnxruntime)
    s.root = None
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        t = time.perf_counter()
        s.search(game, Limits(playouts=playouts), reuse=False)
        el = time.perf_counter() - t
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    nodes = s.tree_nodes()
    return used / nodes, nodes, el


def vmrss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def azgo_cmd() -> list[str]:
    return [sys.executable, "-c", "from azgo.gtp.cli import main; main()"]


def analysis_run(seconds: float, cap: float | None, net: str | None, small_cap: bool) -> tuple[float, float, int, int, bool]:
    """(peak RSS MB, cap MB, info lines in total, info lines in the last quarter, cap message seen)."""
    args = azgo_cmd() + ["gtp"] + (["--net", net] if net else [])
    if cap is None and not small_cap:
        from azgo.engine.memory import default_memory_mb
        cap = default_memory_mb()
    if cap is None:  # a small cap: the resident size of a warmed-up engine + 25 MB
        probe = GtpClient(args + ["--visits", "200"], ask_name=False, timeout=300)
        probe.send("boardsize 19")
        probe.send("genmove b")
        base = vmrss_mb(probe.proc.pid) or 0
        probe.close()
        cap = base + 25
    args += ["--max-memory", f"{cap:.0f}"]
    g = GtpClient(args, stderr="capture", ask_name=False, timeout=300)
    g.batch(["boardsize 19", "clear_board", "play b Q16", "play w D4"], check=True)
    t0 = time.monotonic()
    g.write("kata-analyze b 50")
    if not g.readline().startswith("="):
        raise SystemExit("azgo refused kata-analyze")
    infos: list[float] = []  # when each info line arrived
    peak, next_probe = 0.0, t0
    while time.monotonic() - t0 < seconds:
        line = g.next_line(timeout=0.1)
        if line is not None and line.startswith("info "):
            infos.append(time.monotonic())
        if time.monotonic() >= next_probe:
            r = vmrss_mb(g.proc.pid)
            if r is not None:
                peak = max(peak, r)
            next_probe += 0.5
    g.write("name")  # ends the analysis: the stream's empty line, then the reply to name
    t_end = time.monotonic()
    while not (line := g.readline()).startswith("="):
        if line.startswith("info "):
            infos.append(t_end)
    late = [t for t in infos if t >= t_end - seconds / 4]
    g.close()
    said = any("memory cap reached" in line for line in g.stderr_lines)
    return peak, cap, len(infos), len(late), said


def games_run(games: int, net: str | None) -> tuple[float, float]:
    g = GtpClient(azgo_cmd() + ["gtp", "--visits", "8", "--resign-threshold", "0.05"] + (["--net", net] if net else []),
                  ask_name=False, timeout=300)
    g.send("boardsize 9")
    g.send("komi 7")
    first = last = 0.0
    for k in range(games):
        g.send("clear_board")
        passes = 0
        colour = "b"
        for _ in range(160):
            move = g.send(f"genmove {colour}").lower()
            if move == "resign":
                break
            passes = passes + 1 if move == "pass" else 0
            if passes >= 2:
                break
            colour = "w" if colour == "b" else "b"
        rss = vmrss_mb(g.proc.pid) or 0.0
        if k == 0:
            first = rss
        last = rss
    g.close()
    return first, last


def main(argv=None) -> int:
    args = parse_args(argv)
    quick = args.quick
    playouts = args.nodes or (1500 if quick else 20000)
    seconds = args.analysis_seconds or (20 if quick else 1200)
    games = args.games or (40 if quick else 300)
    cap = args.cap
    net = resolve_net(args.net)
    t_start = time.perf_counter()
    print(f"# search_memory {'--quick ' if quick else ''}| net {net.name} | cpus {os.cpu_count()} "
          f"| load avg {os.getloadavg()[0]:.2f}", flush=True)

    ev = OnnxEvaluator(net, EvalConfig(threads=1, cache_size=0))
    per_node = []
    for name, game in (("empty", Game(19)), ("mid-game", random_game(19, 120, 1))):
        b, nodes, el = tree_bytes(ev, game, playouts)
        per_node.append(b)
        print(f"tree 19x19 {name:8s}: {nodes} nodes, {b:.0f} bytes/node (tracemalloc, default SearchConfig "
              f"incl. its {SearchConfig().board_cache_mb:g} MB board cache), {playouts / el:.0f} playouts/s under tracemalloc",
              flush=True)

    peak, used_cap, infos, late, said = analysis_run(seconds, cap, args.net, small_cap=quick)
    ok = peak < used_cap + 300 and late > 0
    print(f"analysis: kata-analyze 19x19 for {seconds:.0f} s under --max-memory {used_cap:.0f}: peak RSS {peak:.0f} MB "
          f"(cap + 300 = {used_cap + 300:.0f}: {'OK' if peak < used_cap + 300 else 'OVER'}), {infos} info lines "
          f"({late} in the last quarter), cap message on stderr: {'yes' if said else 'no'} -> {'OK' if ok else 'FAIL'}",
          flush=True)

    first, last = games_run(games, args.net)
    print(f"games: {games} consecutive 9x9 games (visits 8) in one azgo gtp: RSS after game 1 {first:.0f} MB, "
          f"after game {games} {last:.0f} MB", flush=True)

    print(f"# total {time.perf_counter() - t_start:.0f}s")
    print(f"RESULT tree_bytes_per_node_19x19 {max(per_node):.0f}")
    print(f"RESULT analysis_rss_mb {peak:.0f}")
    print(f"RESULT rss_growth_300_games {last / first if first else float('nan'):.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
