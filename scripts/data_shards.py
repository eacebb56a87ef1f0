"""The training window in git: SGF archives packed as compressed shards under ``data/``.

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
import io
import os
import sys
import tarfile
from pathlib import Path

LIMIT = 19 * 2 ** 20


def shard_names(folder: Path) -> set[str]:
    """Names of the games already packed in the shards of ``folder``."""
    names: set[str] = set()
    for shard in sorted(folder.glob("*.tar.xz")):
        with tarfile.open(shard, "r:xz") as tar:
            names.update(m.name for m in tar.getmembers() if m.isfile())
    return names


def pack(src: Path, dest: Path, per_shard: int) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    have = shard_names(dest)
    todo = sorted(p for p in src.iterdir() if p.suffix == ".sgf" and p.name not in have)
    written = 0
    while todo:
        batch, todo = todo[:per_shard], todo[per_shard:]
        index = len(list(dest.glob("*.tar.xz")))
        name = dest / f"{dest.name}-{index:04d}.tar.xz"
        tmp = name.with_suffix(".tmp")
        with tarfile.open(tmp, "w:xz") as tar:
            for p in batch:
                data = p.read_bytes()
                info = tarfile.TarInfo(p.name)
                info.size = len(data)
                info.mtime = int(p.stat().st_mtime)  # the window orders games by file time
                tar.addfile(info, io.BytesIO(data))
        if tmp.stat().st_size > LIMIT:
            tmp.unlink()
            raise SystemExit(f"a shard of {len(batch)} games is over 19 MB: use a smaller --per-shard")
        os.replace(tmp, name)
        written += len(batch)
        print(f"{name}: {len(batch)} games, {name.stat().st_size / 1024:.0f} KB")
    manifest = dest / "MANIFEST.txt"
    lines = []
    for shard in sorted(dest.glob("*.tar.xz")):
        with tarfile.open(shard, "r:xz") as tar:
            lines.append(f"{shard.name} {sum(1 for m in tar.getmembers() if m.isfile())}")
    manifest.write_text("\n".join(lines) + "\n")
    print(f"{written} new games packed; {len(have) + written} in {dest}")
    return 0


def unpack(folder: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for shard in sorted(folder.glob("*.tar.xz")):
        with tarfile.open(shard, "r:xz") as tar:
            for m in tar.getmembers():
                target = out / Path(m.name).name
                if not m.isfile() or target.exists():
                    continue
                data = tar.extractfile(m).read()
                tmp = target.with_name(f".{target.name}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, target)
                os.utime(target, (m.mtime, m.mtime))
                n += 1
    print(f"{n} games unpacked into {out}")
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
