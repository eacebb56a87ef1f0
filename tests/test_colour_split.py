"""scripts/colour_split.py: a player's wins, losses and draws as Black and as White, from SGF files."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "colour_split.py"


def game(folder: Path, k: int, black: str, white: str, result: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"game{k:04d}.sgf").write_text(f"(;GM[1]FF[4]SZ[9]PB[{black}]PW[{white}]RE[{result}];B[ee];W[cc])")


def test_colour_split_counts_the_non_opponent_by_colour(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b" / "deep"
    game(a, 0, "azgo", "GNU Go 3.8", "B+R")      # azgo Black, won
    game(a, 1, "azgo", "GNU Go 3.8", "W+4")      # azgo Black, lost
    game(a, 2, "GNU Go 3.8", "azgo", "W+2")      # azgo White, won
    game(b, 3, "GNU Go 3.8", "azgo", "0")        # azgo White, draw
    game(b, 4, "GNU Go 3.8", "azgo", "")         # unfinished: skipped
    game(b, 5, "Pachi", "GNU Go 3.8", "B+R")     # counts for Pachi, the side that is not GNU Go
    game(b, 6, "gnu go", "GNU GO", "B+R")        # both sides match the opponent: skipped
    res = subprocess.run([sys.executable, str(SCRIPT), str(a), str(tmp_path / "b"), "--opponent", "GNU Go"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    lines = {line.split()[0] + (line.split()[1] if line.startswith("as") else ""): line
             for line in res.stdout.splitlines()}
    # game 5 counts for Pachi (the side that is not GNU Go) as Black, a win
    assert "2-1-0 of 3: 2 points, 66.7%" in lines["asBlack"]
    assert "1-0-1 of 2: 1.5 points, 75.0%" in lines["asWhite"]
    assert "3-1-1 of 5: 3.5 points, 70.0%" in lines["total"]


def test_colour_split_fails_without_games(tmp_path):
    res = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--opponent", "GNU Go"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "0-0-0 of 0" in res.stdout


def test_colour_split_copies_the_lost_games_of_one_size(tmp_path):
    a = tmp_path / "a"
    game(a, 0, "azgo", "GNU Go", "W+R")      # lost as Black
    game(a, 1, "GNU Go", "azgo", "B+3")      # lost as White
    game(a, 2, "GNU Go", "azgo", "W+3")      # won
    (a / "game0003.sgf").write_text("(;GM[1]FF[4]SZ[13]PB[azgo]PW[GNU Go]RE[W+R];B[gg])")  # lost, 13x13
    out = tmp_path / "lost"
    res = subprocess.run([sys.executable, str(SCRIPT), str(a), "--opponent", "GNU Go", "--size", "9",
                          "--copy-lost", str(out)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["a_game0000.sgf", "a_game0001.sgf"]
    assert "1-2-0 of 3: 1 points" in res.stdout.splitlines()[-1]


def test_colour_split_keeps_lost_games_of_folders_with_the_same_name(tmp_path):
    for camp in ("c7", "c8"):
        game(tmp_path / camp / "gnugo19", 0, "azgo", "GNU Go", "W+R")
    out = tmp_path / "lost"
    res = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "c7"), str(tmp_path / "c8"),
                          "--opponent", "GNU Go", "--copy-lost", str(out)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["c8_gnugo19_game0000.sgf", "gnugo19_game0000.sgf"]
