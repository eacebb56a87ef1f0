"""scripts/calibration_positions.py: planes of real positions for int8 calibration, written where asked."""

import subprocess
import sys
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "calibration_positions.py"


def test_calibration_positions_creates_the_output_folder(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    for k in range(3):
        (games / f"g{k}.sgf").write_text("(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[cc];B[gg];W[cg];B[gc])")
    out = tmp_path / "not" / "yet" / "c9.npy"  # its folders do not exist
    res = subprocess.run([sys.executable, str(SCRIPT), str(out), str(games), "--positions", "6", "--seed", "3"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    planes = np.load(out)
    assert planes.shape[0] == 6 and planes.shape[2:] == (9, 9)
    assert sorted(p.name for p in out.parent.iterdir()) == ["c9.npy"]  # no temporary file left behind


def test_calibration_positions_mixed_sizes_fail_clearly(tmp_path):
    (tmp_path / "a.sgf").write_text("(;GM[1]FF[4]SZ[9];B[ee])")
    (tmp_path / "b.sgf").write_text("(;GM[1]FF[4]SZ[13];B[gg])")
    out = tmp_path / "c.npy"
    res = subprocess.run([sys.executable, str(SCRIPT), str(out), str(tmp_path), "--positions", "2"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and res.stderr.strip() and not out.exists()
