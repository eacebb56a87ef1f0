"""SGF archives in git as compressed shards: ``<dest>/<name>-NNNN.tar.xz`` plus ``MANIFEST.txt``.

Each shard is a tar (xz) of SGF files exactly as the archive holds them, under 19 MB (a shard holds at
most ``per_shard`` games). Packing is incremental: games already in a shard are skipped, a new shard is
written to a temporary file and renamed, and shards are never rewritten, so git history stays small.
Unpacking skips games already there and keeps each game's file time (training windows order by it).
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from azgo.engine.atomic import atomic_target, atomic_write

LIMIT = 19 * 2 ** 20


class ShardError(RuntimeError):
    """A shard that cannot be written (too large) or read."""


def is_shard_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds packed shards (``*.tar.xz``) rather than SGF files."""
    return Path(folder).is_dir() and any(Path(folder).glob("*.tar.xz"))


def shard_names(folder: str | os.PathLike) -> set[str]:
    """Names of the games already packed in the shards of ``folder``."""
    names: set[str] = set()
    for shard in sorted(Path(folder).glob("*.tar.xz")):
        with tarfile.open(shard, "r:xz") as tar:
            names.update(m.name for m in tar.getmembers() if m.isfile())
    return names


def pack(src: str | os.PathLike, dest: str | os.PathLike, per_shard: int = 2000) -> tuple[int, list[Path]]:
    """Add the SGF games of ``src`` not yet packed in ``dest`` as new shards; returns (games packed, shards
    written). The manifest is rewritten (by rename) afterwards."""
    src, dest = Path(src), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    have = shard_names(dest)
    todo = sorted(p for p in src.iterdir() if p.suffix == ".sgf" and p.name not in have)
    written, shards = 0, []
    while todo:
        batch, todo = todo[:per_shard], todo[per_shard:]
        index = len(list(dest.glob("*.tar.xz")))
        name = dest / f"{dest.name}-{index:04d}.tar.xz"
        with atomic_target(name) as tmp:
            with tarfile.open(tmp, "w:xz") as tar:
                for p in batch:
                    data = p.read_bytes()
                    info = tarfile.TarInfo(p.name)
                    info.size = len(data)
                    info.mtime = int(p.stat().st_mtime)  # the window orders games by file time
                    tar.addfile(info, io.BytesIO(data))
            if tmp.stat().st_size > LIMIT:  # raising here leaves no shard and no temporary file
                raise ShardError(f"a shard of {len(batch)} games is over 19 MB: pack fewer games a shard")
        written += len(batch)
        shards.append(name)
    lines = []
    for shard in sorted(dest.glob("*.tar.xz")):
        with tarfile.open(shard, "r:xz") as tar:
            lines.append(f"{shard.name} {sum(1 for m in tar.getmembers() if m.isfile())}")
    atomic_write(dest / "MANIFEST.txt", "\n".join(lines) + "\n")
    return written, shards


def unpack(folder: str | os.PathLike, out: str | os.PathLike) -> int:
    """Write the games of the shards in ``folder`` into ``out`` (skipping those there); returns how many."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for shard in sorted(Path(folder).glob("*.tar.xz")):
        with tarfile.open(shard, "r:xz") as tar:
            for m in tar.getmembers():
                target = out / Path(m.name).name
                if not m.isfile() or target.exists():
                    continue
                atomic_write(target, tar.extractfile(m).read())
                os.utime(target, (m.mtime, m.mtime))
                n += 1
    return n
