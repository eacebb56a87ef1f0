"""The training window in git: SGF archives packed as compressed shards under ``data/`` (``azgo.training.shards``).

Format: ``data/<name>/<name>-NNNN.tar.xz``, each a tar (xz) of SGF files exactly as the archive holds
them (GNU Go games from ``scripts/gnugo_games.py``, self-play games from ``azgo selfplay``/``loop``),
under 20 MB each (games are a few KB; a shard holds at most ``--per-shard`` games). Packing is
incremental and resumable: games already in a shard are skipped, a new shard is written to a temp
file and renamed, and shards are never rewritten, so a session adds files and git keeps history small.
``data/<name>/MANIFEST.txt`` lists every shard with its game count.

    python3 scripts/data_shards.py pack runs/gnugo19 data/gnugo19      # add new games as a new shard
    python3 scripts/data_shards.py unpack data/gnugo19 runs/gnugo19    # rebuild the folder (skips existing)
    python3 scripts/data_shards.py unpack-all data runs                # every data/<name> -> runs/<name>
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from azgo.training.shards import ShardError
from azgo.training.shards import pack as pack_games
from azgo.training.shards import shard_names  # noqa: F401  (kept for callers of this script's module)
from azgo.training.shards import unpack as unpack_games


def pack(src: Path, dest: Path, per_shard: int) -> int:
    have = len(shard_names(dest)) if dest.exists() else 0
    try:
        written, shards = pack_games(src, dest, per_shard)
    except ShardError as e:
        raise SystemExit(str(e)) from None
    for name in shards:
        print(f"{name}: {name.stat().st_size / 1024:.0f} KB")
    print(f"{written} new games packed; {have + written} in {dest}")
    return 0


def unpack(folder: Path, out: Path) -> int:
    print(f"{unpack_games(folder, out)} games unpacked into {out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("src", type=Path)
    p.add_argument("dest", type=Path)
    p.add_argument("--per-shard", type=int, default=2000)
    u = sub.add_parser("unpack")
    u.add_argument("folder", type=Path)
    u.add_argument("out", type=Path)
    a = sub.add_parser("unpack-all")
    a.add_argument("data", type=Path)
    a.add_argument("out", type=Path)
    args = ap.parse_args()
    if args.cmd == "pack":
        return pack(args.src, args.dest, args.per_shard)
    if args.cmd == "unpack":
        return unpack(args.folder, args.out)
    for folder in sorted(d for d in args.data.iterdir() if d.is_dir()):
        unpack(folder, args.out / folder.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
