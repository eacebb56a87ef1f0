"""Files written whole or not at all: a temporary file in the same folder, flushed to disk, then renamed.

A reader (another process, a resumed run after ``kill -9``) sees the old file or the new one, never half of
one; a killed writer leaves only a hidden ``.<name>.<pid>.tmp`` file beside the target, which nothing reads.
Every file azgo writes for another process or a later run goes through `atomic_target` (or its two
shorthands `atomic_write` and `atomic_copy`), so the rule lives in one place.
"""

from __future__ import annotations

import os
import re
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def atomic_target(path: str | os.PathLike, keep_suffix: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for any writer that takes a file name; on a clean exit the
    file is fsynced and renamed onto ``path``, on an exception it is removed and ``path`` is untouched.

    ``keep_suffix`` ends the temporary name with ``path``'s suffix, for writers that pick a format from it
    (matplotlib's ``savefig``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp" + (path.suffix if keep_suffix else ""))
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_folder(path.parent)
    finally:
        if tmp.exists():
            tmp.unlink()


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: some file systems refuse a folder's fsync)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_TMP_NAME = re.compile(r"^\..+\.(\d+)-[0-9a-f]{8}\.tmp")


def pid_alive(pid: int) -> bool:
    """Whether a process with id ``pid`` runs on this machine (True when that cannot be told)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists under another user
        return True
    return True


def remove_orphans(folder: str | os.PathLike, name: str | None = None) -> list[Path]:
    """Delete the temporary files that killed writers left in ``folder``; returns them.

    Only files named by `atomic_target` whose writer process is gone are removed, so a writer still
    running (another worker sharing the folder) keeps its file. ``name``: only those of that target
    (``checkpoint.pt``), not the whole folder's.
    """
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for entry in names:
        m = _TMP_NAME.match(entry)
        if m and (name is None or entry.startswith(f".{name}.")) and not pid_alive(int(m.group(1))):
            path = Path(folder) / entry
            try:
                path.unlink()
                out.append(path)
            except OSError:
                pass
    return out


def atomic_write(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (text is UTF-8 encoded) to ``path`` atomically; returns the path."""
    with atomic_target(path) as tmp:
        tmp.write_bytes(data.encode() if isinstance(data, str) else data)
    return Path(path)


def atomic_copy(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Copy ``src`` to ``dst`` atomically (see `atomic_target`)."""
    return atomic_write(dst, Path(src).read_bytes())
