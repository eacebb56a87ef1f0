"""engine.atomic: a file is replaced whole or not at all, and a failed writer leaves nothing behind."""

import subprocess
import sys

import pytest

from azgo.engine.atomic import atomic_copy, atomic_target, atomic_write, remove_orphans


def test_write_replaces_whole_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "sub" / "f.txt"  # the folder is made
    atomic_write(target, "old")
    atomic_write(target, b"new bytes")
    assert target.read_bytes() == b"new bytes"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.txt"]
    atomic_copy(target, tmp_path / "g.txt")
    assert (tmp_path / "g.txt").read_bytes() == b"new bytes"


def test_failed_writer_keeps_old_file(tmp_path):
    target = tmp_path / "ckpt.pt"
    target.write_text("complete")
    with pytest.raises(RuntimeError):
        with atomic_target(target) as tmp:
            tmp.write_text("half of a checkp")
            raise RuntimeError("killed mid-write")
    assert target.read_text() == "complete"
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]


def test_keep_suffix_for_format_picking_writers(tmp_path):
    with atomic_target(tmp_path / "ladder.png", keep_suffix=True) as tmp:
        assert tmp.suffix == ".png" and tmp.name.startswith(".ladder.png.")
        tmp.write_bytes(b"png")
    assert (tmp_path / "ladder.png").read_bytes() == b"png"


def test_killed_writer_never_exposes_a_partial_file(tmp_path):
    """kill -9 in the middle of a write: the target keeps its old content; only a hidden .tmp is left."""
    target = tmp_path / "data.bin"
    target.write_bytes(b"A" * 10)
    code = ("import sys, os\n"
            "from azgo.engine.atomic import atomic_target\n"
            f"with atomic_target({str(target)!r}) as tmp:\n"
            "    open(tmp, 'wb').write(b'B' * 1000)\n"
            "    os.kill(os.getpid(), 9)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert res.returncode == -9
    assert target.read_bytes() == b"A" * 10
    left = [p.name for p in tmp_path.iterdir() if p.name != "data.bin"]
    assert len(left) == 1 and left[0].startswith(".data.bin.") and left[0].endswith(".tmp")
    atomic_write(target, b"C")  # the next write succeeds beside the stale temporary
    assert target.read_bytes() == b"C"


def test_remove_orphans_removes_dead_writers_files_only(tmp_path):
    """A killed writer's temporary file goes; a live writer's (here: this process, mid-write) stays."""
    target = tmp_path / "cache.npz"
    code = ("import os\n"
            "from azgo.engine.atomic import atomic_target\n"
            f"with atomic_target({str(target)!r}) as tmp:\n"
            "    open(tmp, 'wb').write(b'half')\n"
            "    os.kill(os.getpid(), 9)\n")
    assert subprocess.run([sys.executable, "-c", code]).returncode == -9
    (orphan,) = tmp_path.iterdir()
    (tmp_path / "other.txt.tmp").write_text("not one of ours")  # not named by atomic_target: kept
    assert remove_orphans(tmp_path, "checkpoint.pt") == []  # only that target's temporaries
    assert orphan.exists()
    with atomic_target(tmp_path / "live.bin") as tmp:
        tmp.write_bytes(b"writing")
        assert remove_orphans(tmp_path) == [orphan]
        assert tmp.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.bin", "other.txt.tmp"]
    assert remove_orphans(tmp_path / "missing") == []
