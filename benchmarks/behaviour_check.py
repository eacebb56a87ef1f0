"""Behaviour check of a refactor: this build against an earlier commit, by search speed and by games.

Usage::

    python benchmarks/behaviour_check.py --base e270703             # 100 9x9 games at 0.25 s a move
    python benchmarks/behaviour_check.py --base e270703 --quick     # < 1 min: speed only, 2 games

The earlier commit is checked out as a git worktree and installed (no dependencies: they are this
machine's) into its own virtual environment under ``--work`` (default ``runs/behaviour/<rev>``), so both
builds run side by side with their own code and packaged networks. Measured in one run:

* ``benchmarks/search_speed.py --quick --no-lz`` of each build, alternated (base, this, base, this); the
  ratios of this build's search efficiency to the base's (efficiency is playouts/s over the raw network
  speed, so load on the machine cancels) on 9x9 and 19x19;
* ``azgo match`` of this build (A) against the base (B), colours alternating, both at ``--seconds`` a move,
  one game at a time; the SGFs are kept and a killed run resumes (``--resume``).

Ends with ``RESULT behaviour_efficiency_ratio_9x9``, ``RESULT behaviour_efficiency_ratio_19x19`` and
``RESULT behaviour_winrate`` (this build's share of the games; the interval is printed above it). A
refactor that changes nothing scores about 0.5 with 1.0 ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def prepare_base(rev: str, work: Path) -> Path:
    """A worktree of ``rev`` installed into ``work/venv``; returns that venv's python."""
    tree, venv = work / "tree", work / "venv"
    py = venv / "bin" / "python"
    if not (tree / "pyproject.toml").exists():
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--force", "--detach", str(tree), rev],
                       check=True, stdout=subprocess.DEVNULL)
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    probe = subprocess.run([str(py), "-c", "import azgo.gtp.cli as c; print(c.__file__)"],
                           capture_output=True, text=True)
    if str(venv) not in probe.stdout:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(tree)], check=True)
    return py


def efficiencies(python: str, script: Path) -> dict[str, float]:
    out = subprocess.run([python, str(script), "--quick", "--no-lz"], capture_output=True, text=True,
                         cwd=script.parent)
    if out.returncode != 0:
        raise SystemExit(f"{script} failed under {python}: {out.stderr[-2000:]}")
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^RESULT search_efficiency_(\S+) (\S+)$",
                                                              out.stdout, re.M)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="e270703", help="the commit to compare with (default: e270703)")
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--seconds", type=float, default=0.25)
    ap.add_argument("--rounds", type=int, default=2, help="alternated speed runs of each build")
    ap.add_argument("--work", help="folder for the base build and the games (default runs/behaviour/<rev>)")
    ap.add_argument("--quick", action="store_true", help="< 1 minute once the base is installed: 1 round, 2 games")
    args = ap.parse_args(argv)
    if args.quick:
        args.games, args.rounds = min(args.games, 2), 1
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.base], capture_output=True,
                         text=True, check=True).stdout.strip()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    work = Path(args.work) if args.work else ROOT / "runs" / "behaviour" / rev
    base_py = prepare_base(rev, work)
    print(f"# behaviour_check | this build {head} (+ working tree) vs {rev} | cpus {os.cpu_count()} "
          f"| load avg {os.getloadavg()[0]:.2f}", flush=True)

    ratios: dict[str, list[float]] = {}
    for r in range(args.rounds):
        base = efficiencies(str(base_py), work / "tree" / "benchmarks" / "search_speed.py")
        this = efficiencies(sys.executable, ROOT / "benchmarks" / "search_speed.py")
        for size in sorted(set(base) & set(this)):
            ratios.setdefault(size, []).append(this[size] / base[size])
            print(f"round {r + 1}: search efficiency {size}: this {this[size]:.3f}, base {base[size]:.3f}", flush=True)

    gtp = f"-m azgo.gtp.cli gtp --seconds {args.seconds:g}"
    sgf_dir = work / f"match{args.size}"
    cmd = [sys.executable, "-m", "azgo.gtp.cli", "match", "-a", f"{sys.executable} {gtp}", "-b", f"{base_py} {gtp}",
           "--games", str(args.games), "--size", str(args.size), "--komi", "7.5", "--sgf-dir", str(sgf_dir),
           "--name-a", f"azgo-{head}", "--name-b", f"azgo-{rev}", "--resume"]
    print("$ azgo match -a 'this build gtp --seconds {0:g}' -b '{1} gtp --seconds {0:g}' --games {2} --size {3} "
          "--komi 7.5 --sgf-dir {4} --resume".format(args.seconds, rev, args.games, args.size, sgf_dir), flush=True)
    res = subprocess.run(cmd, capture_output=True, text=True)
    print(res.stdout[-3000:], end="")
    if res.returncode != 0:
        raise SystemExit(f"azgo match failed: {res.stderr[-2000:]}")
    m = re.search(r"win rate of \S+: ([\d.]+)%", res.stdout)
    for size, rs in sorted(ratios.items()):
        print(f"RESULT behaviour_efficiency_ratio_{size} {statistics.median(rs):.3f}")
    print(f"RESULT behaviour_winrate {float(m.group(1)) / 100 if m else float('nan'):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
