"""``azgo strength`` and ``azgo gnugo-games``: the scripts a user runs, as azgo subcommands (real GNU Go)."""

import subprocess
import sys
from pathlib import Path

import pytest

from azgo.gtp.opponents import OpponentMissing, gnugo_binary, pachi_binary

AZGO = [sys.executable, "-m", "azgo.gtp.cli"]
NETS_CARD = Path(__file__).resolve().parent.parent / "nets" / "large19.json"

try:
    gnugo_binary()
    HAVE_GNUGO = True
except OpponentMissing:
    HAVE_GNUGO = False
needs_gnugo = pytest.mark.skipif(not HAVE_GNUGO, reason="GNU Go not installed (apt-get install gnugo)")


@needs_gnugo
@pytest.mark.slow
def test_strength_table_line_against_gnugo(tmp_path):
    out = subprocess.run(AZGO + ["strength", str(tmp_path), "--lines", "gnugo9", "--quick", "--parallel", "1",
                                 "--threads", "1"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "GNU Go 3.8 level 10" in out.stdout and "RESULT winrate_gnugo9" in out.stdout
    table = (tmp_path / "table.md").read_text()
    assert "s/move azgo / opponent" in table and "azgo match" in table
    assert len(list((tmp_path / "gnugo9").glob("game*.sgf"))) == 2


@needs_gnugo
def test_gnugo_games_writes_an_archive(tmp_path):
    out = subprocess.run(AZGO + ["gnugo-games", str(tmp_path), "--games", "2", "--size", "7", "--level", "1",
                                 "--workers", "1"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert len(list(tmp_path.glob("*.sgf"))) == 2


def test_a_missing_pachi_says_how_to_get_it(monkeypatch, tmp_path):
    import azgo.gtp.opponents as O
    monkeypatch.delenv("AZGO_PACHI", raising=False)
    monkeypatch.setattr(O, "PACHI_DIR", tmp_path / "none")
    monkeypatch.setattr(O.shutil, "which", lambda name: None)
    with pytest.raises(OpponentMissing, match="python3 -m azgo.gtp.opponents"):
        pachi_binary(build=False)
    monkeypatch.setenv("AZGO_PACHI", "/opt/pachi")
    assert pachi_binary() == "/opt/pachi"


@needs_gnugo
def test_handicap_line_gives_two_stones_as_white(tmp_path):
    """gnugo19h2: azgo White in every game, GNU Go level 10 with two stones, komi 0.5 whatever --komi says."""
    import argparse
    from azgo.gtp.strength import lines, match_command
    args = argparse.Namespace(seconds=1.0, threads="1", net=None, azgo_args="", lines=["gnugo19h2"], games19h=20,
                              games=100, pachi_games=None, games13=40, games19=40)
    table = lines(args)
    assert list(table) == ["gnugo19h2"]
    cmd = match_command(table["gnugo19h2"], str(tmp_path), komi=7.0)
    joined = " ".join(cmd)
    assert "--size 19" in joined and "--komi 0.5" in joined and "-n 20" in joined
    assert cmd[-4:] == ["--handicap", "2", "--a-colour", "white"]


def test_a_lone_line_is_split_to_fill_the_parallel_games(tmp_path):
    """With fewer lines than --parallel games at once, each line runs as sub-lines (azgo match --parallel)."""
    import argparse
    from azgo.gtp.strength import lines, match_command, parts_per_line
    assert parts_per_line(2, 1) == 2 and parts_per_line(2, 3) == 1 and parts_per_line(4, 2) == 2
    args = argparse.Namespace(seconds=1.0, threads="1", net=None, azgo_args="", lines=["gnugo19h2"], games19h=20,
                              games=100, pachi_games=None, games13=40, games19=40)
    line = lines(args)["gnugo19h2"]
    two = match_command(line, str(tmp_path), komi=7.0, parts=2)
    assert two[two.index("--parallel") + 1] == "2"
    assert "--parallel" not in match_command(line, str(tmp_path), komi=7.0)


def test_the_commands_kept_in_a_lines_records_write_the_home_folder_as_a_tilde(monkeypatch, tmp_path):
    """summary.txt and table.md are committed: a Pachi built under the home folder is shown as ``~/...``."""
    from azgo.gtp.strength import shown_command
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    cmd = ["azgo", "match", "-b", f"{tmp_path}/me/.cache/azgo/pachi threads=1", "--sgf-dir", "out dir"]
    assert shown_command(cmd) == "azgo match -b '~/.cache/azgo/pachi threads=1' --sgf-dir 'out dir'"
    assert shown_command(["gnugo", "--level", "10"]) == "gnugo --level 10"


def _row(tmp_path, **kw):
    row = dict(name="pachi19", opponent="Pachi 11.99, the same clock (1 s byo-yomi)", size=19, time="byoyomi 0 1 3",
               cmd="azgo match -a 'azgo gtp --seconds 1 --threads 1 --lag 0.1' -b pachi", folder=str(tmp_path / "out" / "pachi19"),
               games=20, wins="15", losses="4", draws=1, seconds_per_move={"azgo": 0.73, "opponent": 0.8},
               by_colour={"black": [8.0, 10.0], "white": [7.5, 10.0]})
    return dict(row, **kw)


def test_a_line_becomes_a_card_record_that_replaces_its_older_record(tmp_path):
    """--card: the line's result as a StrengthLine record (valid, folder relative to the card's repository), put
    in place of the record of the same games folder, appended otherwise; a record that does not add up is refused."""
    import argparse
    import json
    from azgo.gtp.strength import card_record, record_in_card
    from azgo.nets.card import validate_card
    (tmp_path / "nets").mkdir()
    card_file = tmp_path / "nets" / "n.json"
    card = json.loads((NETS_CARD).read_text())
    card_file.write_text(json.dumps(card))
    args = argparse.Namespace(threads="1", seconds=1.0)
    rec = card_record(_row(tmp_path), args, 7.5, str(card_file))
    assert rec["games_folder"] == "out/pachi19" and rec["seconds"] == 1.0 and rec["threads"] == 1
    moved = card_record(_row(tmp_path, cmd=f"azgo match --sgf-dir {tmp_path}/out/pachi19"), args, 7.5, str(card_file))
    assert moved["command"] == "azgo match --sgf-dir out/pachi19"  # the folder as the card's repository names it
    assert rec["score"] == 0.775 and rec["interval"][0] < 0.775 < rec["interval"][1] and rec["elo"] > 0
    record_in_card(str(card_file), rec)
    after = json.loads(card_file.read_text())
    assert validate_card(after) == [] and len(after["strength"]) == len(card["strength"]) + 1
    assert after["strength"][-1]["wins"] == 15.0
    record_in_card(str(card_file), card_record(_row(tmp_path, games=40, wins="35", losses="4"), args, 7.5,
                                                str(card_file)))
    again = json.loads(card_file.read_text())
    assert len(again["strength"]) == len(after["strength"]) and again["strength"][-1]["games"] == 40
    sweep = card_record(_row(tmp_path, wins="20", losses="0", draws=0), args, 7.5, str(card_file))
    assert sweep["elo"] is None  # 20 of 20 has no finite Elo
    with pytest.raises(ValueError, match="!= games"):
        from azgo.nets.card import with_strength_line
        with_strength_line(card, dict(rec, wins=30.0))


def test_a_card_of_another_network_is_refused_before_any_game(tmp_path):
    from azgo.gtp.strength import check_card
    net = tmp_path / "x.onnx"
    net.write_bytes(b"not the card's network")
    with pytest.raises(SystemExit, match="not the network of"):
        check_card(str(NETS_CARD), {"gnugo19": net})
    with pytest.raises(SystemExit, match="not a readable card"):
        check_card(str(tmp_path / "none.json"), {"gnugo19": net})
    import json
    card = json.loads(NETS_CARD.read_text())
    assert check_card(str(NETS_CARD), {"gnugo19": NETS_CARD.with_name(card["file"])})["sha256"] == card["sha256"]


def test_a_line_is_resumed_only_with_the_parallel_it_was_played_with(tmp_path):
    """A line split into part0/part1 (--parallel 2) resumed with --parallel 1 would start 40 new games beside
    them in the folder itself: refused before any game, naming the --parallel to use."""
    from azgo.gtp.strength import layout_problem
    split = tmp_path / "gnugo13"
    (split / "part0").mkdir(parents=True)
    (split / "part1").mkdir()
    assert "--parallel 2" in layout_problem(str(split), 1)
    assert layout_problem(str(split), 2) is None
    assert "--parallel 2" in layout_problem(str(split), 4)
    whole = tmp_path / "pachi9"
    whole.mkdir()
    (whole / "game0000.sgf").write_text("(;GM[1]SZ[9])")
    assert "--parallel 1" in layout_problem(str(whole), 2) and layout_problem(str(whole), 1) is None
    assert layout_problem(str(tmp_path / "new"), 2) is None


@needs_gnugo
def test_azgo_strength_refuses_another_parallel_before_any_game(tmp_path):
    split = tmp_path / "gnugo13"
    (split / "part0").mkdir(parents=True)
    (split / "part1").mkdir()
    out = subprocess.run(AZGO + ["strength", str(tmp_path), "--lines", "gnugo13", "--parallel", "1", "--threads", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "resume it with --parallel 2" in out.stderr
    assert not list(split.glob("game*.sgf"))
