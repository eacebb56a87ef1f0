"""Network cards as data: every shipped card validates against azgo.nets.card and holds no machine path."""

import json
from pathlib import Path

import pytest

from azgo.nets.card import absolute_paths, file_sha256, strength_problems, validate_card

NETS = Path(__file__).resolve().parent.parent / "nets"
CARDS = sorted(p for p in NETS.glob("*.json") if p.name != "registry.json")


@pytest.mark.parametrize("path", CARDS, ids=[p.name for p in CARDS])
def test_every_shipped_card_validates_and_has_no_machine_path(path):
    card = json.loads(path.read_text())
    assert validate_card(card) == []
    assert isinstance(card["strength"], list) and card["strength"]  # measured lines, as records
    for line in card["strength"]:
        if line.get("note", "").startswith("games lost: "):  # said so, and why; never a dangling path unsaid
            assert line["games_folder"].startswith("<run>/"), line
            continue
        assert (NETS.parent / line["games_folder"].split(" and ")[0]).is_dir(), line["games_folder"]


def test_the_validator_finds_what_is_wrong():
    good = json.loads((NETS / "large19.json").read_text())
    assert validate_card(good) == []
    bad = dict(good, sha256="xyz", strength="won some games")
    problems = validate_card(bad)
    assert any(p.startswith("sha256") for p in problems) and any("strength_notes" in p for p in problems)
    line = dict(good["strength"][0], wins=30)
    assert any("!= games" in p for p in strength_problems(line))
    line = dict(good["strength"][0], interval=[0.9, 0.95])
    assert any("does not hold the score" in p for p in strength_problems(line))
    assert absolute_paths({"a": ["run with --net /home/me/x.onnx"], "/mnt/k": 1}) == [
        "a[0]: /home/me/x.onnx", "/mnt/k (key): /mnt/k"]
    missing = {k: v for k, v in good.items() if k != "params"}
    assert "params: missing" in validate_card(missing)


@pytest.mark.parametrize("path", CARDS, ids=[p.name for p in CARDS])
def test_every_shipped_card_names_its_files_by_their_hash(path):
    """The card's ``sha256`` (and its int8 copy's, where the card names one beside it) is the file's, read by
    the one hash function that logs, cards and ``azgo strength --card`` use."""
    import hashlib
    card = json.loads(path.read_text())
    onnx = path.with_suffix(".onnx")
    assert file_sha256(onnx) == card["sha256"] == hashlib.sha256(onnx.read_bytes()).hexdigest()
    int8 = card.get("int8")
    if isinstance(int8, dict) and int8.get("sha256") and int8.get("file") and (NETS / int8["file"]).exists():
        assert file_sha256(NETS / int8["file"]) == int8["sha256"]
