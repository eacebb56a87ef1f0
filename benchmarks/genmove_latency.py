"""Start-to-answer time of ``azgo genmove --visits 1`` next to GNU Go answering ``genmove`` at level 1.

Both from process start to the printed move, on an empty board, median of N runs, interleaved.

Usage: python benchmarks/genmove_latency.py [--quick] [--runs 5] [--size 9]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str], stdin: bytes | None = None) -> tuple[float, str]:
    t = time.perf_counter()
    res = subprocess.run(cmd, input=stdin, capture_output=True, timeout=120)
    dt = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {res.stderr.decode(errors='replace')[-500:]}")
    return dt, res.stdout.decode(errors="replace").strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="under a minute (same as the default)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=9)
    args = ap.parse_args()
    azgo = shutil.which("azgo")
    azgo_cmd = [azgo] if azgo else [sys.executable, "-m", "azgo.gtp.cli"]
    azgo_cmd += ["genmove", "--size", str(args.size), "--visits", "1"]
    gnugo = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)
    gtp = f"boardsize {args.size}\nclear_board\ngenmove black\nquit\n".encode()
    print(f"# genmove_latency | {args.size}x{args.size} empty board | {args.runs} runs each, interleaved | "
          f"load avg {os.getloadavg()[0]:.2f}")
    timed(azgo_cmd)  # warm the file cache
    a, g = [], []
    for _ in range(args.runs):
        dt, out = timed(azgo_cmd)
        a.append(dt)
        if gnugo:
            dt2, out2 = timed([gnugo, "--mode", "gtp", "--level", "1"], gtp)
            g.append(dt2)
    print(f"azgo genmove --visits 1: median {statistics.median(a):.3f} s (runs {', '.join(f'{x:.3f}' for x in a)}); "
          f"answer {out}")
    if g:
        print(f"gnugo --mode gtp --level 1, genmove: median {statistics.median(g):.3f} s "
              f"(runs {', '.join(f'{x:.3f}' for x in g)})")
    else:
        print("GNU Go not installed: no comparison (apt-get install gnugo)")
    if g:
        print(f"RESULT gnugo_genmove_s {statistics.median(g):.3f}")
    print(f"RESULT azgo_genmove_visits1_s {statistics.median(a):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
