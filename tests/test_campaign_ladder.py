"""scripts/campaign_ladder.py: the campaign's ladder is counted from the archived SGF files."""

import csv
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "campaign_ladder.py"


def game(folder: Path, k: int, black: str, white: str, result: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"game{k:04d}.sgf").write_text(f"(;GM[1]FF[4]SZ[13]PB[{black}]PW[{white}]RE[{result}];B[dd];W[jj])")


def test_ladder_counts_wins_by_name_and_colour_and_chains_head_to_head(tmp_path):
    anchor, h2h = tmp_path / "anchor", tmp_path / "h2h"
    # azgo: 2 wins (once as Black, once as White), 1 loss, 1 draw; an unfinished game is not counted
    game(anchor, 0, "azgo", "GNU Go", "B+R")
    game(anchor, 1, "GNU Go", "azgo", "W+3.5")
    game(anchor, 2, "azgo", "GNU Go", "W+12.5")
    game(anchor, 3, "GNU Go", "azgo", "0")
    game(anchor, 4, "GNU Go", "azgo", "")
    # head-to-head: the new network wins 3 of 4
    for k, (b, w, r) in enumerate([("new", "old", "B+R"), ("old", "new", "W+R"), ("new", "old", "W+1.5"),
                                   ("old", "new", "W+7.5")]):
        game(h2h, k, b, w, r)
    spec = tmp_path / "ladder.json"
    spec.write_text(json.dumps([
        {"stage": 1, "network": "n1", "core_hours": 1.5, "board": 13, "opponent": "GNU Go 3.8 level 10",
         "sgf": str(anchor), "player": "azgo"},
        {"stage": 2, "network": "n2", "core_hours": 3.0, "board": 13, "opponent": "stage 0",
         "sgf": str(h2h), "player": "new"},
        {"stage": 3, "network": "n3", "core_hours": 4.0, "board": 13, "opponent": "stage 2",
         "sgf": str(h2h), "player": "new"},
        {"stage": 3, "network": "n3", "core_hours": 4.0, "board": 19, "opponent": "stage 1",
         "sgf": str(h2h), "player": "new"},
    ]))
    res = subprocess.run([sys.executable, str(SCRIPT), str(spec)], capture_output=True, text=True, check=True)
    rows = list(csv.DictReader(open(tmp_path / "ladder.csv")))
    assert [(r["games"], r["wins"], r["win_rate"]) for r in rows][:2] == [("4", "2.5", "0.625"), ("4", "3", "0.750")]
    assert rows[0]["elo"] == "89" and rows[0]["chain_elo"] == ""  # 400*log10(0.625/0.375)
    assert rows[1]["elo"] == "191" and rows[1]["chain_elo"] == "191"  # stage 0 is the chain's zero
    assert rows[2]["chain_elo"] == "382"  # through stage 2, on the same board size
    assert rows[3]["elo"] == "191" and rows[3]["chain_elo"] == ""  # stage 1 has no 19x19 chain
    assert "wrote" in res.stdout


def test_a_sweep_has_no_finite_elo_but_a_bound(tmp_path):
    folder = tmp_path / "g"
    for k in range(3):
        game(folder, k, "azgo" if k % 2 == 0 else "GNU Go", "GNU Go" if k % 2 == 0 else "azgo",
             "W+R" if k % 2 == 0 else "B+R")
    spec = tmp_path / "ladder.json"
    spec.write_text(json.dumps([{"stage": 0, "network": "n0", "core_hours": 0, "board": 19,
                                 "opponent": "GNU Go 3.8 level 10", "sgf": str(folder)}]))
    subprocess.run([sys.executable, str(SCRIPT), str(spec)], capture_output=True, text=True, check=True)
    (row,) = csv.DictReader(open(tmp_path / "ladder.csv"))
    assert (row["games"], row["wins"], row["elo"], row["elo_lo"]) == ("3", "0", "", "")
    assert row["elo_hi"] == "43"  # the interval's finite end (0 of 3: Wilson upper bound 56.1%)
