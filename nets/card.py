"""The network card (``<net>.json`` beside ``<net>.onnx``) as data: its schema and a validator.

A card says what a network is (architecture, file hash), how it was made (``provenance``, ``training``:
commands, data, hours; with relative paths only) and how strong it is: ``strength`` is a list of
`StrengthLine` records, one per measured line (opponent, board, time, games, wins, losses, draws, the 95%
Wilson interval, Elo, the exact command and the folder of its games), or the string ``"untrained"``.
Free text about the lines goes in ``strength_notes``. ``validate_card`` lists what is wrong with a card
(missing or mistyped fields, counts that do not add up, an absolute path anywhere in it); ``with_strength_line``
puts a measured line into a card (``azgo strength --card``); ``file_sha256`` is the hash every card and log uses.
Standard library only.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

#: Fields every card has, with their JSON types.
REQUIRED = {
    "name": str, "file": str, "sha256": str, "net": str, "feature_version": int, "board_sizes": list,
    "params": int, "file_size_bytes": int, "provenance": dict, "training": (str, dict), "strength": (str, list),
    "created_utc": str,
}


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 (hex) of a file's bytes: the hash a card gives for its network (``sha256``, ``int8.sha256``)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_ABSOLUTE = re.compile(r"(?:^|[\s'\"=(:,])(/(?:home|root|work|tmp|Users|mnt|var)/[^\s'\")]*)")


@dataclass(frozen=True)
class StrengthLine:
    """One measured line of games: the network (as azgo, with ``threads`` and ``seconds`` or ``visits`` a move)
    against ``opponent`` on ``size`` x ``size`` at ``komi`` (``handicap`` stones for the opponent, azgo White).
    ``wins``/``losses``/``draws`` are azgo's; ``interval`` the 95% Wilson interval of its score (draws half);
    ``elo`` the Elo difference of that score; ``command`` how the line was run; ``games_folder`` its SGF files;
    ``seconds_per_move`` each engine's measured seconds a move where recorded; ``by_colour`` azgo's
    ``[score, games]`` as ``black`` and as ``white`` where recorded."""

    opponent: str
    size: int
    games: int
    wins: float
    losses: float
    draws: int
    interval: list
    command: str
    games_folder: str
    threads: int = 1
    seconds: float | None = None
    visits: int | None = None
    komi: float = 7.0
    handicap: int = 0
    elo: float | None = None
    line: str = ""
    seconds_per_move: dict = field(default_factory=dict)
    by_colour: dict = field(default_factory=dict)
    note: str = ""
    stopped: str = ""  # a packaging line ended early once it could no longer reach the card's score: after how many


def strength_problems(line: Any, where: str = "strength") -> list[str]:
    """What is wrong with one strength record."""
    if not isinstance(line, dict):
        return [f"{where}: a record (object), got {type(line).__name__}"]
    out = []
    known = {f.name for f in fields(StrengthLine)}
    for f in fields(StrengthLine):
        if f.default is MISSING and f.default_factory is MISSING and f.name not in line:
            out.append(f"{where}.{f.name}: missing")
    extra = sorted(set(line) - known - {"score", "passed", "verdict"})
    if extra:
        out.append(f"{where}: unknown fields {extra}")
    if out:
        return out
    n, w, l, d = line["games"], line["wins"], line["losses"], line["draws"]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (n, w, l, d)):
        return [f"{where}: games, wins, losses, draws must be numbers"]
    if abs(w + l + d - n) > 1e-9 or n < 0:
        out.append(f"{where}: wins {w:g} + losses {l:g} + draws {d} != games {n}")
    iv = line["interval"]
    if not (isinstance(iv, list) and len(iv) == 2 and all(isinstance(x, (int, float)) for x in iv)
            and 0 <= iv[0] <= iv[1] <= 1):
        out.append(f"{where}.interval: [low, high] within 0..1, got {iv!r}")
    elif n:
        score = (w + 0.5 * d) / n
        if not iv[0] - 1e-3 <= score <= iv[1] + 1e-3:
            out.append(f"{where}.interval: {iv} does not hold the score {score:.3f}")
    if line.get("seconds") is None and line.get("visits") is None:
        out.append(f"{where}: seconds or visits a move")
    if not isinstance(line["size"], int) or not 2 <= line["size"] <= 25:
        out.append(f"{where}.size: a board size, got {line['size']!r}")
    elo = line.get("elo")
    if elo is not None and not (isinstance(elo, (int, float)) and math.isfinite(elo)):
        out.append(f"{where}.elo: a finite number or null, got {elo!r}")
    return out


def absolute_paths(obj: Any, where: str = "") -> list[str]:
    """Places in a JSON-like object that hold an absolute path of a machine (``where: path``)."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += absolute_paths(k, f"{where}.{k} (key)") + absolute_paths(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += absolute_paths(v, f"{where}[{i}]")
    elif isinstance(obj, str):
        out += [f"{where.lstrip('.')}: {m}" for m in _ABSOLUTE.findall(obj)]
    return out


def validate_card(card: Any) -> list[str]:
    """Every problem of a card (empty: valid)."""
    if not isinstance(card, dict):
        return ["a card is a JSON object"]
    out = []
    for key, kind in REQUIRED.items():
        if key not in card:
            out.append(f"{key}: missing")
        elif not isinstance(card[key], kind) or isinstance(card[key], bool):
            out.append(f"{key}: expected {kind}, got {type(card[key]).__name__}")
    if isinstance(card.get("sha256"), str) and not re.fullmatch(r"[0-9a-f]{64}", card["sha256"]):
        out.append("sha256: 64 hex digits")
    strength = card.get("strength")
    if isinstance(strength, str) and strength != "untrained":
        out.append("strength: a list of strength records (or \"untrained\"); prose goes in strength_notes")
    if isinstance(strength, list):
        for i, line in enumerate(strength):
            out += strength_problems(line, f"strength[{i}]")
    out += [f"absolute path in {p}" for p in absolute_paths(card)]
    return out


def with_strength_line(card: dict, record: dict) -> dict:
    """A copy of ``card`` whose ``strength`` list holds ``record`` (a `StrengthLine` as a dict): in the place of
    the record with the same ``games_folder`` (a line played on, or recorded again), else appended.

    Raises ``ValueError`` naming what is wrong with ``record``.
    """
    problems = strength_problems(record)
    if problems:
        raise ValueError("; ".join(problems))
    old = card.get("strength")
    lines = list(old) if isinstance(old, list) else []
    at = next((i for i, line in enumerate(lines) if isinstance(line, dict)
               and line.get("games_folder") == record["games_folder"]), None)
    if at is None:
        lines.append(dict(record))
    else:
        lines[at] = dict(record)
    return dict(card, strength=lines)
