"""Files written whole or not at all: a temporary file in the same folder, flushed to disk, then renamed.

A reader (another process, a resumed run after ``kill -9``) sees the old file or the new one, never half of
one; a killed writer leaves only a hidden ``.<name>.tmp`` that the next write replaces.
"""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (text is UTF-8 encoded) to ``path`` atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def atomic_copy(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Copy ``src`` to ``dst`` atomically (see `atomic_write`)."""
    return atomic_write(dst, Path(src).read_bytes())
