"""``azgo shards`` (and scripts/data_shards.py, the same code): SGF archives packed into compressed shards under
data/ and rebuilt."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "data_shards.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=True)


def azgo(*args):
    return subprocess.run([sys.executable, "-m", "azgo.gtp.cli", "shards", *map(str, args)], capture_output=True,
                          text=True, check=True)


def test_pack_is_incremental_and_unpack_restores_files_and_times(tmp_path):
    src, data, out = tmp_path / "games", tmp_path / "data" / "g", tmp_path / "out"
    src.mkdir()
    for k in range(5):
        p = src / f"game{k}.sgf"
        p.write_text(f"(;GM[1]FF[4]SZ[9];B[{'abcde'[k]}a])")
        os.utime(p, (1_700_000_000 + k, 1_700_000_000 + k))
    run("pack", src, data, "--per-shard", 2)
    assert sorted(x.name for x in data.glob("*.tar.xz")) == ["g-0000.tar.xz", "g-0001.tar.xz", "g-0002.tar.xz"]
    (src / "game5.sgf").write_text("(;GM[1]FF[4]SZ[9];W[ee])")
    res = azgo("pack", src, data)
    assert "1 new games in 1 shards" in res.stdout  # only the new game: shards are never rewritten
    assert (data / "MANIFEST.txt").read_text().split() == [
        "g-0000.tar.xz", "2", "g-0001.tar.xz", "2", "g-0002.tar.xz", "1", "g-0003.tar.xz", "1"]
    azgo("unpack", data, out)
    for p in src.iterdir():
        q = out / p.name
        assert q.read_bytes() == p.read_bytes()
        assert int(q.stat().st_mtime) == int(p.stat().st_mtime)  # the training window orders by file time
    assert "0 games unpacked" in run("unpack", data, out).stdout
    assert not list(data.glob("*.tmp")) and not list(out.glob(".*"))
