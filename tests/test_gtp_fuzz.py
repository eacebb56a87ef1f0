"""Robustness fuzz of the GTP front end: thousands of random and malformed lines.

Lines: valid commands with random arguments, bad vertices, huge and non-finite numbers, missing and
extra arguments, illegal moves, odd board sizes and komi, clock junk, loadsgf of missing/garbage files,
analysis-argument junk, negative and oversized ids, comments, blank lines, and binary junk (NUL,
control characters, invalid UTF-8). ``genmove`` and other searching commands are kept rare.

Checked, both in-process (GtpEngine + scripted evaluator + ``gtp.loop.run`` over BytesIO/StringIO) and
against one real ``azgo gtp --visits 2`` process (default network):

* the engine never exits and never answers ``internal error``;
* every reply is well formed (``=``/``?``, optional glued id, text, terminated by one empty line);
* one reply per command line, where "command line" follows the spec's preprocessing (section 3.1:
  drop control characters but HT/LF, cut at ``#``, HT -> space; empty lines and lines holding only an
  id get no reply), and a valid id is echoed;
* a failed command leaves the state unchanged (in-process: the game, board, clock, komi, size; the real
  process: ``showboard`` and ``printsgf`` before and after).
"""

from __future__ import annotations

import io
import random
import re
import subprocess
from pathlib import Path

import pytest

from azgo.gtp.config import EngineConfig
from azgo.gtp.engine import GtpEngine
from azgo.gtp.loop import run
from azgo.gtp.protocol import GtpError

from scripted_eval import ScriptedEvaluator
from azgo_cmd import azgo_command

MAX_ID = 2 ** 31 - 1
_HEAD = re.compile(r"^([=?])(\d*)(?: (.*))?$")


# ----------------------------------------------------------------------------------------- oracle
def spec_command(raw: bytes):
    """(id or None, tokens) for a line that needs a reply, None for one that gets none (GTP spec 3.1)."""
    kept = bytes(c for c in raw if c == 9 or 32 <= c != 127)
    kept = kept.split(b"#", 1)[0].replace(b"\t", b" ")
    tokens = [t for t in kept.split(b" ") if t]
    if not tokens:
        return None
    cid = None
    if tokens[0].isdigit():
        cid = int(tokens[0])
        tokens = tokens[1:]
        if not tokens:
            return None  # an id alone: no command (GNU Go and gomill ignore it too)
    return cid, tokens


def _unicode_only_space(raw: bytes) -> bool:
    """Python's str.split() also splits on Unicode spaces (NBSP, NEL, ...), the spec does not: the fuzz
    leaves those out (test_gtp_protocol has the targeted test)."""
    text = raw.decode("utf-8", errors="replace")
    return any(ch.isspace() and ch not in " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f" for ch in text)


def split_replies(out: str) -> list[tuple[bool, int | None, str]]:
    assert out == "" or out.endswith("\n\n"), f"output does not end with an empty line: {out[-200:]!r}"
    replies = []
    for block in (out[:-2].split("\n\n") if out else []):
        lines = block.split("\n")
        m = _HEAD.match(lines[0])
        assert m, f"malformed reply: {block[:300]!r}"
        assert all(lines), f"empty line inside a reply: {block[:300]!r}"
        replies.append((m.group(1) == "=", int(m.group(2)) if m.group(2) else None,
                        "\n".join([m.group(3) or ""] + lines[1:])))
    return replies


# ----------------------------------------------------------------------------------------- generator
VERTICES = ["D4", "d4", "Q16", "A1", "T19", "J9", "E5", "c3", "pass", "PASS", "resign", "I5", "Z99", "A0",
            "A26", "AA1", "4D", "D-4", "D4.5", "", "D", "99", "\u00e94", "D\x004", "j1", "H8", "k10", "a25"]
NUMBERS = ["0", "1", "2", "5", "7", "9", "13", "19", "25", "26", "100", "-1", "-0", "1.5", "0.5", "7.5",
           "1e400", "-1e400", "nan", "NaN", "inf", "-inf", "0x10", "9" * 40, "2147483647", "2147483648",
           "99999999999", "abc", "", "1,5", "+3", "\u0663"]
COLORS = ["b", "w", "B", "W", "black", "white", "BLACK", "x", "", "bw", "0", "empty"]


def _num(rng):
    return rng.choice(NUMBERS) if rng.random() < 0.6 else str(rng.choice([0, 1, 2, 3, 5, 10, 30, 60, 300]))


def _color(rng):
    return rng.choice(COLORS) if rng.random() < 0.3 else rng.choice(["b", "w", "black", "white"])


def _vertex(rng):
    roll = rng.random()
    if roll < 0.2:
        return rng.choice(VERTICES)
    if roll < 0.3:
        return rng.choice("ABCDEFGHJKLMNOPQRSTabcdefghjkz") + str(rng.randint(0, 27))
    return rng.choice("ABCDEFGHJ") + str(rng.randint(1, 9))  # on every board azgo plays


def _clock(rng):
    kind = rng.choice(["none", "absolute", "byoyomi", "canadian", "foo", ""])
    if rng.random() < 0.5:
        good = {"none": "", "absolute": "60", "byoyomi": "30 5 3", "canadian": "30 20 5"}.get(kind, "")
        return f"{kind} {good}"
    return f"{kind} " + " ".join(_num(rng) for _ in range(rng.randint(0, 4)))


def _analyze_args(rng):
    parts = []
    for _ in range(rng.randint(0, 5)):
        parts.append(rng.choice([
            lambda: _color(rng), lambda: str(rng.randint(0, 100)), lambda: _num(rng),
            lambda: f"interval {_num(rng)}", lambda: f"minmoves {_num(rng)}", lambda: f"maxmoves {_num(rng)}",
            lambda: f"avoid {_color(rng)} {_vertex(rng)},{_vertex(rng)} {_num(rng)}",
            lambda: f"allow {_color(rng)} {_vertex(rng)}:{_vertex(rng)} {_num(rng)}",
            lambda: f"ownership {rng.choice(['true', 'false', 'maybe', ''])}", lambda: "avoid",
            lambda: "allow b", lambda: "pvVisits true", lambda: "rootInfo true"])())
    return " ".join(parts)


def make_generators(files: dict[str, str]):
    """name -> (weight, function rng -> argument string)."""
    sgf = lambda rng: rng.choice(list(files.values()))  # noqa: E731
    return {
        "play": (30, lambda r: f"{_color(r)} {_vertex(r)}" if r.random() < 0.9 else
                 r.choice(["", _color(r), f"{_color(r)} {_vertex(r)} {_vertex(r)}"])),
        "undo": (8, lambda r: r.choice(["", "", "", "1", "x"])),
        "boardsize": (2, lambda r: r.choice(["9", "9", "19", "7", "13"]) if r.random() < 0.5 else
                      r.choice(["0", "1", "2", "26", "100", "-9", "9 9", "", "nine", "1e1", "9" * 30])),
        "clear_board": (1, lambda r: r.choice(["", "", "extra"])),
        "komi": (5, lambda r: r.choice(["", _num(r), f"{_num(r)} {_num(r)}"])),
        "fixed_handicap": (3, lambda r: r.choice(["", _num(r), "2", "9", "4 4"])),
        "place_free_handicap": (1, lambda r: r.choice(["", "0", "1", "2", "3", "-1", "x", "99999999999", "500"])),
        "set_free_handicap": (3, lambda r: " ".join(_vertex(r) for _ in range(r.randint(0, 5)))),
        "time_settings": (3, lambda r: " ".join(_num(r) for _ in range(r.randint(0, 4)))),
        "kgs-time_settings": (4, _clock),
        "time_left": (4, lambda r: " ".join([_color(r)] + [_num(r) for _ in range(r.randint(0, 3))])
                      if r.random() < 0.5 else f"{_color(r)} {r.randint(0, 100)} {r.randint(0, 3)}"),
        "loadsgf": (3, lambda r: r.choice([sgf(r), f"{sgf(r)} {_num(r)}", "", f"{sgf(r)} 1 2"])),
        "printsgf": (2, lambda r: r.choice(["", "", "out.sgf", "no/such/dir/x.sgf"])),
        "showboard": (2, lambda r: ""),
        "known_command": (3, lambda r: r.choice(["play", "analyze", "lz-analyze", "", "a b", "\x7f"])),
        "list_commands": (1, lambda r: ""),
        "name": (2, lambda r: r.choice(["", "extra"])),
        "version": (1, lambda r: ""),
        "protocol_version": (2, lambda r: ""),
        "final_status_list": (1, lambda r: r.choice(["alive", "dead", "seki", "", "foo", "alive dead"])),
        "final_score": (0.5, lambda r: r.choice(["", "x"])),
        "lz-analyze": (3, _analyze_args),
        "kata-analyze": (3, _analyze_args),
        "lz-genmove_analyze": (0.7, _analyze_args),
        "kata-genmove_analyze": (0.7, _analyze_args),
        "genmove": (0.8, lambda r: r.choice(["b", "w", "", "x", "b w"])),
        "reg_genmove": (0.5, lambda r: r.choice(["b", "white", "", "y"])),
        "kgs-genmove_cleanup": (0.3, lambda r: r.choice(["b", "w", "", "purple"])),
        "kgs-game_over": (0.5, lambda r: ""),
        "clear_cache": (0.5, lambda r: ""),
        "gogui-analyze_commands": (1, lambda r: ""),
        "PLAY": (1, lambda r: "b d4"),
        "analyze": (1, _analyze_args),
    }


def _junk(rng) -> bytes:
    n = rng.randint(1, 40)
    pool = [rng.randrange(256) for _ in range(n)]
    if rng.random() < 0.5:  # mostly printable with a few nasty bytes
        pool = [rng.choice(b"abcdefz019 #\t\r\x00\x01\x1b\x7f\xff\xfe\xc3\x28\xe2\x82") for _ in range(n)]
    return bytes(pool).replace(b"\n", b" ")


def fuzz_lines(rng: random.Random, count: int, files: dict[str, str]) -> list[bytes]:
    gens = make_generators(files)
    names = list(gens)
    weights = [gens[n][0] for n in names]
    lines = []
    while len(lines) < count:
        roll = rng.random()
        if roll < 0.08:
            line = _junk(rng)
        elif roll < 0.11:
            line = rng.choice([b"", b"   ", b"\t", b"# comment", b"  # play b d4", b"\r", b"\x00", b"42",
                               b"42 # id only", b"\x01\x02"])
        else:
            name = rng.choices(names, weights)[0]
            line = f"{name} {gens[name][1](rng)}".rstrip().encode("utf-8", errors="replace")
            if rng.random() < 0.03:  # a command with binary junk spliced in
                cut = rng.randrange(len(line) + 1)
                line = line[:cut] + _junk(rng) + line[cut:]
        if rng.random() < 0.3:
            line = (str(rng.randint(0, 1000)).encode() if rng.random() < 0.7 else rng.choice(
                [b"2147483647", b"2147483648", b"99999999999999999999", b"-5", b"007", b"1.5", b"+3"])) + b" " + line
        if rng.random() < 0.1:
            line += rng.choice([b"\r", b"\t", b" # trailing", b"  "])
        if b"quit" in line.lower() or _unicode_only_space(line):
            continue
        lines.append(line)
    return lines


def sgf_files(folder: Path) -> dict[str, str]:
    files = {
        "valid9": b"(;GM[1]FF[4]SZ[9]KM[6.5];B[cc];W[gg];B[cg];W[gc];B[ee])",
        "valid19": b"(;GM[1]FF[4]SZ[19]KM[7.5]AB[dd][pp];W[dp];B[pd])",
        "handicap": b"(;GM[1]FF[4]SZ[13]HA[2]AB[dd][jj]PL[W];W[dj])",
        "illegal": b"(;GM[1]SZ[9];B[cc];W[cc])",
        "offboard": b"(;GM[1]SZ[9];B[zz])",
        "size30": b"(;GM[1]SZ[30];B[aa])",
        "size25": b"(;GM[1]SZ[25];B[aa])",
        "badkomi": b"(;GM[1]SZ[9]KM[nan];B[aa])",
        "truncated": b"(;GM[1]SZ[9];B[cc];W[",
        "garbage": bytes(random.Random(1).randrange(256) for _ in range(300)),
        "empty": b"",
    }
    out = {}
    for name, data in files.items():
        path = folder / f"{name}.sgf"
        path.write_bytes(data)
        out[name] = str(path)
    out["missing"] = str(folder / "missing.sgf")
    out["directory"] = str(folder)
    return out


def check_reply_stream(lines: list[bytes], replies, what: str) -> list[int]:
    """Pair replies with the command lines; returns the indices of lines whose reply was a failure."""
    expected = [(i, spec_command(line)) for i, line in enumerate(lines)]
    expected = [(i, c) for i, c in expected if c is not None]
    assert len(replies) == len(expected), (
        f"{what}: {len(replies)} replies for {len(expected)} command lines")
    failed = []
    for (i, (cid, tokens)), (ok, rid, text) in zip(expected, replies):
        if cid is not None and cid <= MAX_ID:
            assert rid == cid, f"{what}: line {lines[i]!r} has id {cid}, reply {rid}"
        elif cid is None:
            assert rid is None, f"{what}: line {lines[i]!r} has no id, reply has {rid}"
        assert "internal error" not in text, f"{what}: {lines[i]!r} -> {text!r}"
        if not ok:
            failed.append(i)
    return failed


# ----------------------------------------------------------------------------------------- in-process
def snapshot(engine: GtpEngine):
    g = engine.game

    def board_state(b):
        return (bytes(b.cells), b.hash, b.ko, b.ko_color, b.to_move, b.passes, tuple(b.counts),
                tuple(b.prisoners), b.last_move, len(b.history))

    return (engine.size, engine.komi, id(g), g.size, g.komi, g.handicap, tuple(g.moves),
            tuple(id(b) for b in g.boards), tuple(board_state(b) for b in g.boards[-2:]),
            repr(engine.clock.settings), repr(engine.clock.clocks), engine.quit_requested)


@pytest.mark.slow
def test_fuzz_in_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # printsgf FILE writes relative to the working directory
    files = sgf_files(tmp_path)
    rng = random.Random(20240611)
    lines = fuzz_lines(rng, 20000, files)
    engine = GtpEngine(EngineConfig(visits=2, seed=7, resign_threshold=0.0), evaluator=ScriptedEvaluator())
    changed, internal, counts = [], [], {"ok": 0, "failed": 0}
    original = engine.execute

    def execute(cmd, channel=None):
        before = snapshot(engine)
        try:
            result = original(cmd, channel)
        except GtpError as e:
            counts["failed"] += 1
            if snapshot(engine) != before:
                changed.append((cmd, str(e)))
            raise
        except Exception as e:  # noqa: BLE001 - the loop answers these with "internal error"
            internal.append((cmd, repr(e)))
            raise
        counts["ok"] += 1
        return result

    engine.execute = execute
    out = io.StringIO()
    data = b"".join(line + b"\n" for line in lines)
    assert run(engine, io.BytesIO(data), out) == 0
    assert internal == [], internal[:5]
    assert changed == [], f"failed commands changed the state: {changed[:5]}"
    replies = split_replies(out.getvalue())
    check_reply_stream(lines, replies, "in-process")
    assert counts["ok"] > 1000 and counts["failed"] > 1000, counts
    # The engine still works after all that.
    out = io.StringIO()
    run(engine, io.BytesIO(b"1 boardsize 9\n2 play b e5\n3 genmove w\n"), out)
    assert [r[:2] for r in split_replies(out.getvalue())] == [(True, 1), (True, 2), (True, 3)]


# ----------------------------------------------------------------------------------------- real process


@pytest.mark.slow
def test_fuzz_real_process(tmp_path):
    """One ``azgo gtp --visits 2`` process (default network) takes every line, each followed by the
    probes ``showboard`` and ``printsgf``; a failed line must leave both probes as they were."""
    files = sgf_files(tmp_path)
    rng = random.Random(777)
    lines = fuzz_lines(rng, 4000, files)
    probes = [b"showboard", b"printsgf"]
    stream = list(probes)
    for line in lines:
        stream.append(line)
        stream.extend(probes)
    stream.append(b"name")
    # All lines at once (pipelined), then EOF; azgo answers every command in order, then ends normally.
    proc = subprocess.run(azgo_command("--visits", "2", "--seed", "3"), input=b"".join(l + b"\n" for l in stream),
                          capture_output=True, timeout=170, cwd=tmp_path)
    err = proc.stderr.decode("utf-8", errors="replace")
    assert proc.returncode == 0, f"status {proc.returncode}: {err[-2000:]}"
    out = proc.stdout
    text = out.decode("utf-8")
    replies = split_replies(text)
    failed = set(check_reply_stream(stream, replies, "azgo gtp"))
    # Map stream indices to replies, then compare the probes around each failed fuzz line.
    reply_of = {}
    k = 0
    for i, line in enumerate(stream):
        if spec_command(line) is not None:
            reply_of[i] = replies[k]
            k += 1
    n_failed = 0
    for j in range(len(lines)):
        i = 2 + 3 * j  # stream index of fuzz line j
        if i not in failed:
            continue
        n_failed += 1
        before = (reply_of[i - 2][2], reply_of[i - 1][2])
        after = (reply_of[i + 1][2], reply_of[i + 2][2])
        assert reply_of[i - 2][0] and reply_of[i + 1][0]
        assert after == before, f"failed line {stream[i]!r} ({reply_of[i][2]!r}) changed the state"
    assert n_failed > 300
    assert replies[-1][:3] == (True, None, "azgo")
    for line in err.splitlines():
        assert not line.startswith(("=", "?", "info", "play")), line
