"""benchmarks/resigned_games.py: which games it plays on, and that it plays them from where azgo resigned."""

import importlib.util
import sys
from pathlib import Path

import pytest

from azgo.engine.board import BLACK, WHITE

SPEC = importlib.util.spec_from_file_location(
    "resigned_games", Path(__file__).resolve().parent.parent / "benchmarks" / "resigned_games.py")
R = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(R)


def _sgf(path, pb, pw, result, moves, extra=""):
    body = "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(moves))
    path.write_text(f"(;GM[1]FF[4]SZ[7]KM[7]PB[{pb}]PW[{pw}]RE[{result}]{extra}{body})")


def test_only_games_azgo_resigned_on_its_own_move(tmp_path):
    (tmp_path / "part0").mkdir()
    _sgf(tmp_path / "part0" / "a.sgf", "azgo", "Pachi", "W+R", ["dd", "cc", "ee", "ff"])       # azgo B to move: kept
    _sgf(tmp_path / "b.sgf", "Pachi", "azgo", "B+R", ["dd", "cc", "ee"])                       # azgo W to move: kept
    _sgf(tmp_path / "c.sgf", "azgo", "Pachi", "B+R", ["dd", "cc"])                             # Pachi resigned
    _sgf(tmp_path / "d.sgf", "azgo", "Pachi", "W+3", ["dd", "cc"])                             # scored
    _sgf(tmp_path / "e.sgf", "Pachi", "azgo", "B+R", ["dd", "cc"])                             # not azgo's move
    _sgf(tmp_path / "f.sgf", "azgo", "Pachi", "W+R", ["dd", "cc"], extra="HA[2]AB[bb][ff]")    # handicap
    found = R.resigned_games(str(tmp_path), "azgo")
    names = sorted(Path(g["path"]).name for g in found)
    assert names == ["a.sgf", "b.sgf"]
    by = {Path(g["path"]).name: g for g in found}
    assert by["a.sgf"]["ours"] == BLACK and len(by["a.sgf"]["moves"]) == 4
    assert by["b.sgf"]["ours"] == WHITE and by["b.sgf"]["moves"][-1][0] == BLACK


@pytest.mark.slow
def test_plays_on_from_the_resignation(tmp_path, capsys):
    _sgf(tmp_path / "a.sgf", "azgo", "other", "W+R", ["dd", "cc", "ee", "ff"])
    engine = f"{sys.executable} -m azgo.gtp.cli gtp --visits 4 --resign-threshold 0"
    rc = R.main([str(tmp_path), "--engine", engine, "--opponent", engine, "--tries", "1",
                 "--sgf-dir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "resigned at move 5" in out and "RESULT resigned_continuations 1" in out
    (played,) = (tmp_path / "out").glob("*.sgf")
    from azgo.engine.sgf import load_sgf
    rec = load_sgf(str(played))
    assert rec.moves[:4] == load_sgf(str(tmp_path / "a.sgf")).moves and len(rec.moves) > 4
