"""Lizzie 0.7.4 starts azgo with no dialog under ``azgo gtp --lizzie`` (TOML ``lizzie = true``).

Lizzie's start-up check, as read in featurecat/lizzie at tag 0.7.4,
src/main/java/featurecat/lizzie/analysis/Leelaz.java: ``startEngine`` (lines 202-210) sends ``name``
then ``version`` (``sendCommand`` numbers every command from 1, lines 572-576); ``parseLine`` (lines
406-464) handles each line that starts with ``=`` or ``?``:

* ``params = line.trim().split(" ")``; ``Integer.parseInt(params[0].substring(1).trim())`` reads the id;
  a ``?`` reply or one without a second word (``params.length == 1``) is ignored;
* the ``name`` reply: ``params[1].startsWith("KataGo")`` switches to KataGo mode (kata-analyze, no
  version check); any other engine is taken for Leela Zero;
* the ``version`` reply (Leela Zero mode only): ``ver = params[1].split("\\\\.")``,
  ``minor = Integer.parseInt(ver[1])``; ``minor < 15`` shows the modal dialog "Lizzie requires version
  0.15 or later of Leela Zero for analysis (found ...)". A missing ``ver[1]`` or a piece that is not an
  integer throws inside the reader thread (``read``, lines 490-518, catches only IOException), which
  then stops reading the engine for good.

``lizzie_start`` below re-expresses that rule in Python; the tests feed it what a real ``azgo gtp``
prints (stdout and stderr merged, as Lizzie's ``redirectErrorStream(true)``, line 187, does).
"""

from __future__ import annotations

import re
import subprocess
import unicodedata

import pytest

from azgo_cmd import azgo_command

INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1


class JavaThrows(Exception):
    """What would be an uncaught NumberFormatException / ArrayIndexOutOfBoundsException in Lizzie."""


def java_trim(s: str) -> str:
    """``String.trim()``: strip every character <= U+0020 at both ends."""
    i, j = 0, len(s)
    while i < j and s[i] <= " ":
        i += 1
    while j > i and s[j - 1] <= " ":
        j -= 1
    return s[i:j]


def java_split(s: str, sep: str) -> list[str]:
    """``String.split(regex)`` for a one-character literal: no match gives ``[s]``; otherwise trailing
    empty strings are removed (possibly all of them)."""
    if sep not in s:
        return [s]
    parts = s.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_parse_int(s: str) -> int:
    """``Integer.parseInt(s)``: an optional sign then decimal digits, within the int range."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not all(unicodedata.decimal(ch, None) is not None for ch in body):
        raise JavaThrows(f"NumberFormatException: For input string: {s!r}")
    value = int("".join(str(unicodedata.decimal(ch)) for ch in body)) * (-1 if s[:1] == "-" else 1)
    if not INT_MIN <= value <= INT_MAX:
        raise JavaThrows(f"NumberFormatException: For input string: {s!r}")
    return value


def java_index(items: list[str], i: int) -> str:
    if i >= len(items):
        raise JavaThrows(f"ArrayIndexOutOfBoundsException: Index {i} out of bounds for length {len(items)}")
    return items[i]


def lizzie_start(lines: list[str]) -> str:
    """What Lizzie 0.7.4 makes of the engine's first output lines (replies to ``1 name``, ``2 version``):
    ``"katago"`` (KataGo mode, no version check), ``"ok"`` (Leela Zero mode, no dialog), ``"dialog"``
    (the "requires version 0.15" dialog), ``"crash"`` (its reader thread throws), or ``"waiting"``
    (no answer it accepts yet)."""
    checking_name = checking_version = True
    for line in lines:
        if not line.startswith(("=", "?")):
            continue  # info lines, stderr, ...: handled elsewhere in parseLine
        params = java_split(java_trim(line), " ")
        try:
            java_parse_int(java_trim(java_index(params, 0)[1:]))
            if line.startswith("?") or len(params) == 1:
                continue
            if checking_name:
                checking_name = False
                if params[1].startswith("KataGo"):
                    return "katago"
            elif checking_version:
                minor = java_parse_int(java_index(java_split(params[1], "."), 1))
                return "dialog" if minor < 15 else "ok"
        except JavaThrows:
            return "crash"
    return "waiting"


def reply(text: str, cid: int = 2) -> list[str]:
    return [f"={cid} {text}", ""]


# ------------------------------------------------------------------ the rule itself
@pytest.mark.parametrize("version, outcome", [
    ("0.16", "ok"), ("0.15", "ok"), ("0.17.0", "ok"), ("0.17 (anything after a space)", "ok"),
    ("0.1.0", "dialog"), ("1.0", "dialog"), ("0.14", "dialog"),
    ("0.17-azgo0.1.0", "crash"),  # "17-azgo0" is not an integer
    ("17", "crash"), ("0.", "crash"), ("0.x", "crash"),
])
def test_lizzie_version_rule(version, outcome):
    assert lizzie_start(reply("azgo", 1) + reply(version)) == outcome


def test_lizzie_rule_details():
    assert lizzie_start(reply("KataGo", 1) + reply("1.4.5")) == "katago"  # the only special name
    assert lizzie_start(reply("azgo", 1)) == "waiting"
    assert lizzie_start(["= azgo", ""]) == "crash"  # Lizzie always sends ids and needs them back
    # An empty or failed version reply is skipped: the next reply would be read as the version.
    assert lizzie_start(reply("azgo", 1) + ["=2", ""] + reply("0.16", 3)) == "ok"
    assert lizzie_start(reply("azgo", 1) + ["?2 unknown command", ""]) == "waiting"


# ------------------------------------------------------------------ a real azgo gtp
def start_lines(*args: str) -> list[str]:
    """What Lizzie reads from ``azgo gtp ARGS`` for its first commands (stderr merged into stdout)."""
    commands = "1 name\n2 version\n3 boardsize 19\n4 komi 7.5\n5 quit\n"
    proc = subprocess.run(azgo_command("--visits", "1", *args), input=commands, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    return proc.stdout.split("\n")


def version_reply(lines: list[str]) -> str:
    (line,) = [ln for ln in lines if ln.startswith("=2")]
    return line[3:]


def test_default_azgo_gets_the_dialog():
    """Why --lizzie exists: azgo's own version (the package version, 0.x with x < 15) fails the check."""
    lines = start_lines()
    assert [ln for ln in lines if ln.startswith("=1")] == ["=1 azgo"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version_reply(lines))
    assert lizzie_start(lines) == "dialog"


def test_lizzie_option_passes_and_still_says_azgo():
    from importlib.metadata import version
    lines = start_lines("--lizzie")
    assert [ln for ln in lines if ln.startswith("=1")] == ["=1 azgo"]  # name: not Leela Zero, not KataGo
    text = version_reply(lines)
    assert text.split(" ")[0] == "0.17"
    assert f"azgo {version('azgo')}" in text
    assert lizzie_start(lines) == "ok"
    assert all(ln.startswith(("=3", "=4", "=5")) for ln in lines if ln.startswith(("=", "?"))
               and not ln.startswith(("=1", "=2")))  # the other commands still succeed


def test_lizzie_toml_key(tmp_path):
    config = tmp_path / "azgo.toml"
    config.write_text("lizzie = true\n")
    assert lizzie_start(start_lines("--config", str(config))) == "ok"
    assert lizzie_start(start_lines("--config", str(config), "--no-lizzie")) == "dialog"
