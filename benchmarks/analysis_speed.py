"""Whole-game analysis: ``azgo analysis`` (JSON, every position in one query) against the same work
through ``azgo gtp`` one position at a time (``play`` then ``reg_genmove``), in one run.

Both engines run the same network with the same onnxruntime threads, evaluation cache and visits per
position; the clock runs from the first request to the last answer (process start excluded). The
JSON server searches ``--analysis-threads`` positions at once and sends their leaves through the
network together; GTP searches one position after another (reusing its tree between them).

Usage: python benchmarks/analysis_speed.py [--quick] [--visits 50] [--threads 2] [--sgf GAME.sgf]
``--quick`` analyses the first 120 positions of the game (under a minute on 2 idle cores); without
it, every position.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from azgo.engine.coords import move_to_gtp
from azgo.engine.sgf import load_sgf
from azgo.gtp.client import GtpClient

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GAME = ROOT / "docs" / "strength" / "gnugo19" / "game0000.sgf"


def azgo(*args: str) -> list[str]:
    exe = shutil.which("azgo")
    return [exe, *args] if exe else [sys.executable, "-m", "azgo.gtp.cli", *args]


def game_moves(path: Path) -> tuple[int, float, list[list[str]]]:
    game = load_sgf(str(path)).to_game()
    size = game.size
    moves = [["B" if c == 1 else "W", move_to_gtp(m, size)] for c, m in game.moves if m is not None]
    return size, game.komi, moves


def cpu_seconds(proc: subprocess.Popen) -> float:
    """Wait for the process to end; its user + system CPU seconds (a figure a busy machine skews less)."""
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_utime + usage.ru_stime


def run_json(size, komi, moves, visits, threads, positions) -> tuple[float, int, float]:
    proc = subprocess.Popen(azgo("analysis", "--threads", str(threads), "--analysis-threads", str(positions),
                                 "--visits", str(visits), "--symmetry", "random", "--seed", "1"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    proc.stdin.write(json.dumps({"id": "warm", "moves": [], "rules": "chinese", "komi": komi,
                                 "boardXSize": size, "boardYSize": size, "maxVisits": 2}) + "\n")
    proc.stdin.flush()
    while json.loads(proc.stdout.readline()).get("id") != "warm":
        pass
    q = {"id": "game", "moves": moves, "rules": "chinese", "komi": komi, "boardXSize": size, "boardYSize": size,
         "analyzeTurns": list(range(len(moves) + 1)), "maxVisits": visits}
    t = time.perf_counter()
    proc.stdin.write(json.dumps(q) + "\n")
    proc.stdin.flush()
    done = visits_total = 0
    while done < len(moves) + 1:
        r = json.loads(proc.stdout.readline())
        if r.get("id") == "game" and r.get("isDuringSearch") is False:
            done += 1
            visits_total += r["rootInfo"]["visits"]
    dt = time.perf_counter() - t
    proc.stdin.close()
    return dt, visits_total, cpu_seconds(proc)


def run_gtp(size, komi, moves, visits, threads) -> tuple[float, int, float]:
    g = GtpClient(azgo("gtp", "--threads", str(threads), "--visits", str(visits), "--seed", "1",
                       "--resign-threshold", "0"), ask_name=False, timeout=600)
    g.batch([f"boardsize {size}", "clear_board", f"komi {komi}", "reg_genmove b"], check=True)  # warm
    t = time.perf_counter()
    for colour, vertex in [(None, None)] + moves:
        if colour is not None:
            g.send(f"play {colour} {vertex}")
        to_move = "w" if colour == "B" else "b" if colour else "b"
        g.send(f"reg_genmove {to_move}")
    dt = time.perf_counter() - t
    g.write("quit")
    return dt, (len(moves) + 1) * visits, cpu_seconds(g.proc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the first 120 positions only (under a minute)")
    ap.add_argument("--visits", type=int, default=50)
    ap.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1), help="onnxruntime threads (both)")
    ap.add_argument("--analysis-threads", type=int, default=4, help="positions searched at once (JSON)")
    ap.add_argument("--sgf", type=Path, default=DEFAULT_GAME)
    args = ap.parse_args()
    size, komi, moves = game_moves(args.sgf)
    if args.quick:
        moves = moves[:119]
    print(f"# analysis_speed | {args.sgf.name} {size}x{size}, {len(moves) + 1} positions at {args.visits} visits | "
          f"{args.threads} onnxruntime threads | load avg {os.getloadavg()[0]:.2f}")
    dt_json, v_json, cpu_json = run_json(size, komi, moves, args.visits, args.threads, args.analysis_threads)
    dt_gtp, _, cpu_gtp = run_gtp(size, komi, moves, args.visits, args.threads)
    n = len(moves) + 1
    print(f"azgo analysis (one query, {args.analysis_threads} positions at once): {dt_json:.1f} s, "
          f"{n / dt_json:.2f} positions/s, {v_json} visits, {cpu_json:.1f} CPU s (whole process)")
    print(f"azgo gtp (play + reg_genmove per position): {dt_gtp:.1f} s, {n / dt_gtp:.2f} positions/s, "
          f"{cpu_gtp:.1f} CPU s (whole process)")
    print(f"CPU seconds, gtp over analysis: {cpu_gtp / cpu_json:.2f}")
    print(f"RESULT analysis_positions_per_s {n / dt_json:.2f}")
    print(f"RESULT analysis_vs_gtp {dt_gtp / dt_json:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
