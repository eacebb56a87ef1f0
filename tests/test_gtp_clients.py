"""``azgo gtp`` (real default network) driven the way real GTP clients drive it.

* Sabaki, through Sabaki's own GTP library ``@sabaki/gtp`` (tests/js/sabaki_session.mjs, run with node;
  skipped when node or tests/js/node_modules is missing: run ``npm ci --prefix tests/js``).
* gtp2ogs: a replay of its command sequence for a byo-yomi game over a whole 9x9 game (``\\r\\n`` line
  ends, no ids, the clock re-sent before every ``genmove``, lower-case ``play black d4``), with GNU Go
  as the opponent and referee (random legal moves and azgo's own rules when GNU Go is missing).
* Lizzie: ids on every command, stderr merged into stdout, ``lz-analyze`` stopped by ``name``,
  ``lz-genmove_analyze``, every line classified and parsed with Lizzie's rules (integer fields).
* ``kata-analyze ... ownership true``: float fields, scoreLead, N*N ownership values.

What each client does is documented in shared/research/gtp.md section 5.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import gnugo as gnugo_helper
from azgo.gtp.client import GtpClient
from azgo_cmd import azgo_command

JS_DIR = Path(__file__).parent / "js"
VERTEX = re.compile(r"[A-HJ-Z]+\d+|pass")  # Lizzie's Board.asCoordinates accepts [A-HJ-Z]+\d+




def GtpProcess(args: list[str], merge_stderr: bool = False, eol: str = "\n") -> GtpClient:
    """``azgo gtp`` on pipes through azgo's GTP client: every read has a timeout; replies are checked
    strictly (``=``/``?`` then a space or nothing, no output between replies) unless stderr is merged
    into stdout as Lizzie runs it. ``write`` sends a raw line, ``send`` a command whose reply must be ``=``."""
    return GtpClient(args, stderr="stdout" if merge_stderr else "capture", strict=not merge_stderr, eol=eol,
                     ask_name=False, timeout=60)


# ============================================================================================ Sabaki
def test_sabaki_session_through_sabaki_gtp_library():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found: install Node.js to run the @sabaki/gtp client test")
    if not (JS_DIR / "node_modules" / "@sabaki" / "gtp").is_dir():
        pytest.skip("tests/js/node_modules is missing: run `npm ci --prefix tests/js` to install @sabaki/gtp")
    proc = subprocess.run([node, str(JS_DIR / "sabaki_session.mjs"), *azgo_command("--visits", "16")],
                          capture_output=True, text=True, timeout=170, cwd=JS_DIR)
    assert proc.stdout.strip(), f"no result from the node script; stderr: {proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["failures"] == [], json.dumps(result, indent=1)[:6000]
    assert proc.returncode == 0
    info = result["info"]
    assert info["lz-analyze"]["lines"] >= 1 and info["kata-analyze"]["lines"] >= 1
    assert info["analyzeCommand"] == "kata-analyze" and info["genmoveCommand"] == "kata-genmove_analyze"
    commands = [t["command"] for t in result["transcript"]]
    assert commands[:4] == ["name", "version", "protocol_version", "list_commands"]
    assert "lz-analyze W 50" in commands and "protocol_version" in commands[4:]


# ============================================================================================ gtp2ogs
class GnuGoOpponent:
    """GNU Go plays Black and referees: azgo's moves must be legal for GNU Go too."""

    def __init__(self, binary: str):
        self.gg = gnugo_helper.GnuGo(seed=3, binary=binary, extra_args=["--level", "0"])
        self.gg.new_game(9, 7)

    def genmove(self) -> str:
        return self.gg.send("genmove black").lower()

    def referee(self, color: str, vertex: str) -> str | None:
        reply = self.gg.batch([f"play {color} {vertex}"])[0]
        return None if reply.ok else reply.text

    def close(self) -> None:
        self.gg.close()


class RandomOpponent:
    """Random legal moves that do not fill own eyes; azgo's rules engine referees."""

    def __init__(self):
        from azgo.engine.game import Game
        self.game = Game(9, 7)
        self.rng = random.Random(3)

    def genmove(self) -> str:
        from azgo.engine.coords import move_to_gtp
        b = self.game.board
        legal = [m for m in range(81) if b.legal_mask()[m] and not self._own_eye(m)]
        move = self.rng.choice(legal) if legal and self.game.move_number < 160 else 81
        self.game.play(move, 1)
        return move_to_gtp(move, 9).lower()

    def _own_eye(self, m: int) -> bool:
        r, c = divmod(m, 9)
        nbrs = [(r + dr) * 9 + c + dc for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if 0 <= r + dr < 9 and 0 <= c + dc < 9]
        return all(self.game.board.color_at(n) == 1 for n in nbrs)

    def referee(self, color: str, vertex: str) -> str | None:
        from azgo.engine.board import IllegalMove
        from azgo.engine.coords import gtp_to_move
        try:
            self.game.play(gtp_to_move(vertex, 9), 2 if color == "white" else 1)
        except IllegalMove as e:
            return str(e)
        return None

    def close(self) -> None:
        pass


def test_gtp2ogs_byoyomi_game_replay():
    """A whole 9x9 game as gtp2ogs plays it for a bot with byo-yomi (main 1 s, 3 x 5 s): the bot is
    White, every genmove preceded by the clock, every reply well formed and nothing else on stdout."""
    main, period, periods = 1, 5, 3
    binary = gnugo_helper.find_gnugo()
    opponent = GnuGoOpponent(binary) if binary else RandomOpponent()
    azgo = GtpProcess(azgo_command("--visits", "16", "--seed", "1"), eol="\r\n")
    try:
        commands = azgo.send("list_commands").split("\n")
        for c in ("kgs-time_settings", "time_left", "genmove", "play", "boardsize", "clear_board", "komi"):
            assert c in commands
        azgo.send(f"kgs-time_settings byoyomi {main} {period} {periods}")
        azgo.send("boardsize 9")
        azgo.send("clear_board")
        azgo.send("komi 7")
        used = 0.0  # White's time spent in main time
        periods_left = periods
        passes, plies, ended_by, think = 0, 0, None, []
        while plies < 300:
            black = opponent.genmove()
            plies += 1
            if black == "resign":
                ended_by = "black resigned"
                break
            azgo.send(f"play black {black}")  # gtp2ogs: lower-case colour and vertex
            passes = passes + 1 if black == "pass" else 0
            if passes == 2:
                ended_by = "two passes"
                break
            # The clock, as gtp2ogs loadClock sends it before every genmove (integer seconds).
            in_main = used < main
            azgo.send(f"kgs-time_settings byoyomi {main} {period} {periods}")
            azgo.send(f"time_left black {main} 0")
            if in_main:
                azgo.send(f"time_left white {int(main - used)} 0")
            else:
                azgo.send(f"time_left white {period} {periods_left}")
            t0 = time.monotonic()
            azgo.write("genmove white")
            ok, move = azgo.reply(timeout=60)
            elapsed = time.monotonic() - t0
            assert ok, f"genmove white failed: {move}"
            think.append(elapsed)
            assert elapsed < period, f"genmove took {elapsed:.2f} s, over the {period} s byo-yomi period"
            if in_main:
                used += elapsed
            elif elapsed > period:
                periods_left -= 1
            plies += 1
            move = move.lower()  # gtp2ogs lower-cases the reply
            if move == "resign":
                ended_by = "white resigned"
                break
            assert move == "pass" or re.fullmatch(r"[a-hj]\d", move), move
            problem = opponent.referee("white", move)
            assert problem is None, f"azgo played an illegal move {move}: {problem}"
            passes = passes + 1 if move == "pass" else 0
            if passes == 2:
                ended_by = "two passes"
                break
        print(f"gtp2ogs replay: {plies} plies, {ended_by}, {type(opponent).__name__}, max think {max(think):.2f} s")
        assert ended_by is not None or isinstance(opponent, RandomOpponent), f"no end after {plies} plies"
        assert azgo.proc.poll() is None, "azgo exited during the game"
    finally:
        azgo.close()
        opponent.close()
    # stdout carried GTP replies only; diagnostics stayed on stderr.
    assert all(line == "" or line[:1] in "=?" or line in commands for line in azgo.stdout_log), \
        [line for line in azgo.stdout_log if line and line[:1] not in "=?"][:5]
    for line in azgo.stderr_lines:
        assert not line.startswith(("=", "?", "info", "play")), line
        assert "KataGo" not in line  # gtp2ogs would switch to its KataGo chat parser
    assert plies >= 10 and max(think) < period


def test_gtp2ogs_byoyomi_clock_limits_thinking():
    """No visit limit: the clock alone decides, and azgo answers within the 2 s byo-yomi period."""
    period = 2
    azgo = GtpProcess(azgo_command("--seed", "2"), eol="\r\n")
    try:
        azgo.send(f"kgs-time_settings byoyomi 0 {period} 1")
        azgo.send("boardsize 9")
        azgo.send("clear_board")
        azgo.send("komi 7")
        played: set[str] = set()
        for _ in range(3):
            black = next(p for p in ("e5", "c3", "g7", "c7", "g3") if p not in played)  # white may take one
            azgo.send(f"play black {black}")
            azgo.send(f"kgs-time_settings byoyomi 0 {period} 1")
            azgo.send(f"time_left white {period} 1")
            t0 = time.monotonic()
            move = azgo.send("genmove white", timeout=30).lower()
            elapsed = time.monotonic() - t0
            assert re.fullmatch(r"[a-hj]\d|pass|resign", move)
            assert elapsed < period, f"genmove took {elapsed:.2f} s in a {period} s byo-yomi period"
            played |= {black, move}
    finally:
        azgo.close()


@pytest.mark.parametrize("azgo_black", [True, False], ids=["azgo-black-places", "azgo-white-gives"])
def test_gtp2ogs_fischer_handicap_session(azgo_black):
    """gtp2ogs's sequence for a 9x9 handicap game on a Fischer clock (shared/research/gtp.md 5.3): the clock
    through kata-time_settings fischer-capped once listed, komi 0.5, the handicap placed by azgo as Black
    (place_free_handicap) or given to it as White (set_free_handicap), the clock re-sent before every genmove,
    answers inside the time left, and final_score at the end."""
    main, inc = 10, 1
    azgo = GtpProcess(azgo_command("--seed", "3", "--lag", "0.2"), eol="\r\n")
    try:
        assert "fischer-capped" in azgo.send("kata-list_time_settings").split()
        azgo.send(f"kata-time_settings fischer-capped {main} {inc} {main} -1")
        azgo.send("boardsize 9")
        azgo.send("clear_board")
        azgo.send("komi 0.5")
        me = "black" if azgo_black else "white"
        if azgo_black:
            stones = azgo.send("place_free_handicap 3").lower().split()
            assert len(stones) == len(set(stones)) == 3 and all(re.fullmatch(r"[a-hj]\d", v) for v in stones)
        else:
            azgo.send("set_free_handicap c3 g7 g3")
            stones = ["c3", "g7", "g3"]
        left = float(main)
        occupied = set(stones)
        rng = random.Random(4)
        for ply in range(8):  # White moves first after the handicap
            colour = "white" if ply % 2 == 0 else "black"
            if colour != me:
                free = [f"{c}{r}" for c in "abcdefghj" for r in range(1, 10) if f"{c}{r}" not in occupied]
                move = rng.choice(free)
                azgo.send(f"play {colour} {move}")
                occupied.add(move)
                continue
            azgo.send(f"kata-time_settings fischer-capped {main} {inc} {main} -1")
            azgo.send(f"time_left {me} {int(left)} 0")
            t0 = time.monotonic()
            move = azgo.send(f"genmove {me}", timeout=30).lower()
            spent = time.monotonic() - t0
            assert spent < left, f"genmove took {spent:.2f} s with {left:.0f} s on the clock"
            left = min(main, left - spent + inc)
            assert re.fullmatch(r"[a-hj]\d|pass|resign", move)
            if move == "resign":
                break
            occupied.add(move)
        score = azgo.send("final_score")
        assert re.fullmatch(r"[BW]\+\d+(\.\d+)?|0", score), score
    finally:
        azgo.close()
    for line in azgo.stderr_lines:
        assert not line.startswith(("=", "?", "info", "play")), line


# gtp2ogs's Bot.ts: every stderr line that matches this is posted in the game's chat (the text after the colon)
GTP2OGS_CHAT = re.compile(r"(DISCUSSION|MALKOVICH|MAIN):(.*)")


@pytest.mark.parametrize("chat", [True, False], ids=["ogs-chat", "no-chat"])
def test_gtp2ogs_chat_lines(chat):
    """With --ogs-chat, each move azgo plays gives one line that gtp2ogs posts in the malkovich chat, naming the
    move it answered, its colour, winrate, score lead, visits and a PV that starts with the move; without it, none."""
    args = ["--visits", "24", "--seed", "3"] + (["--ogs-chat"] if chat else [])
    azgo = GtpProcess(azgo_command(*args), eol="\r\n")
    played = []
    try:
        azgo.send("boardsize 9")
        azgo.send("clear_board")
        azgo.send("komi 7")
        taken: set[str] = set()
        for _ in range(3):
            # black's move: the first candidate point still empty (white's replies are the engine's own choice)
            black = next(p for p in ("e5", "c3", "g7", "c7", "g3", "e3") if p not in taken)
            azgo.send(f"play black {black}")
            played.append(azgo.send("genmove white"))
            taken |= {black, played[-1].lower()}
    finally:
        azgo.close()
    chats = [m for m in (GTP2OGS_CHAT.search(line) for line in azgo.stderr_lines) if m]
    if not chat:
        assert chats == []
        return
    assert [m.group(1) for m in chats] == ["MALKOVICH"] * len(played)
    for m, move in zip(chats, played):
        text = m.group(2)
        found = re.fullmatch(r"azgo \(White\) (\S+): winrate (\d+\.\d)%, score lead ([+-]\d+\.\d), (\d+) visits, "
                             r"PV ((?:[A-HJ-T]\d+|pass)(?: (?:[A-HJ-T]\d+|pass))*)", text)
        assert found, text
        assert found.group(1) == move
        assert 0 <= float(found.group(2)) <= 100
        assert int(found.group(4)) >= 24
        assert found.group(5).split()[0] == move  # the PV of the move played


# ============================================================================================ Lizzie
def lizzie_parse_info(line: str, size: int, kata: bool = False) -> list[dict]:
    """Lizzie's Leelaz.parseInfo / MoveData.fromInfo: ``line.substring(5).split(" info ")``, each segment
    key/value pairs until ``pv`` (which takes the rest); LZ mode parses winrate, prior, lcb, visits and
    order with Integer.parseInt, KataGo mode parses floats."""
    assert line.startswith("info ")
    body = line[5:]
    if kata and " ownership " in body:
        body = body.split(" ownership ")[0]
    moves = []
    for segment in body.split(" info "):
        tokens = segment.split(" ")
        data: dict = {}
        i = 0
        while i < len(tokens):
            key = tokens[i]
            if key == "pv":
                data["pv"] = tokens[i + 1:]
                break
            assert i + 1 < len(tokens), f"key without value in {segment!r}"
            data[key] = tokens[i + 1]
            i += 2
        for key in ("move", "visits", "winrate", "pv"):
            assert key in data, f"{key} missing in {segment!r}"
        assert VERTEX.fullmatch(data["move"]), data["move"]
        assert data["pv"] and all(VERTEX.fullmatch(v) for v in data["pv"]), data["pv"]
        assert data["pv"][0] == data["move"]
        for v in [data["move"], *data["pv"]]:
            if v != "pass":
                assert "ABCDEFGHJKLMNOPQRSTUVWXYZ".index(v[0]) < size and 1 <= int(v[1:]) <= size, v
        if kata:
            for key in ("visits", "order"):
                int(data[key])
            for key in ("winrate", "prior", "lcb", "scoreMean", "scoreStdev", "scoreLead", "utility"):
                assert math.isfinite(float(data[key])), (key, data[key])
            assert 0.0 <= float(data["winrate"]) <= 1.0
        else:
            for key in ("winrate", "prior", "lcb", "visits", "order"):
                assert re.fullmatch(r"\d+", data[key]), f"Integer.parseInt({data[key]!r}) for {key}"
            assert int(data["winrate"]) <= 10000 and int(data["prior"]) <= 10000 and int(data["lcb"]) <= 10000
        moves.append(data)
    return moves


class Lizzie:
    """Lizzie's view of the engine: one merged stream, ids on every command, lines classified."""

    def __init__(self, azgo: GtpProcess):
        self.azgo = azgo
        self.next_id = 1
        self.other: list[str] = []  # lines Lizzie shows in its console only (our stderr)

    def classify(self, line: str, expect_id: int, size: int, kata: bool = False):
        assert " -> " not in line, f"Lizzie would parse this as a Leela Zero summary and throw: {line!r}"
        if line.startswith("info"):
            return "info", lizzie_parse_info(line, size, kata)
        if line.startswith("play"):
            return "play", line.split(" ", 1)[1]
        if line.startswith(("=", "?")):
            params = line.strip().split(" ")
            cid = int(params[0][1:])  # Integer.parseInt(params[0].substring(1))
            assert cid == expect_id, f"reply for id {cid}, expected {expect_id}: {line!r}"
            return "reply", (line[0] == "=", " ".join(params[1:]))
        if line.strip():
            self.other.append(line)
        return "other", line

    def send(self, command: str) -> int:
        cid = self.next_id
        self.next_id += 1
        self.azgo.write(f"{cid} {command}")
        return cid

    def simple(self, command: str, size: int = 19) -> str:
        cid = self.send(command)
        while True:
            kind, value = self.classify(self.azgo.readline(), cid, size)
            assert kind in ("reply", "other"), (command, kind, value)
            if kind == "reply":
                ok, text = value
                assert ok, f"{command} failed: {text}"
                assert self.azgo.readline() == "", "reply not terminated by an empty line"
                return text


def test_lizzie_session():
    azgo = GtpProcess(azgo_command("--visits", "48", "--seed", "4"), merge_stderr=True)
    lz = Lizzie(azgo)
    try:
        assert lz.simple("name") == "azgo"  # not "KataGo...": Lizzie stays in Leela Zero mode
        version = lz.simple("version")
        assert len(version.split(".")) >= 2 and all(p.isdigit() for p in version.split(".")[:2])
        lz.simple("boardsize 19")
        lz.simple("komi 7.5")

        # Ponder: lz-analyze 10 until at least one update arrived, then `name` stops it.
        cid = lz.send("lz-analyze 10")
        kind, value = lz.classify(azgo.readline(timeout=60), cid, 19)
        while kind == "other":
            kind, value = lz.classify(azgo.readline(timeout=60), cid, 19)
        assert kind == "reply" and value == (True, ""), (kind, value)
        infos = 0
        deadline = time.monotonic() + 60
        while infos == 0:
            assert time.monotonic() < deadline, "no info line within 60 s"
            kind, value = lz.classify(azgo.readline(timeout=60), cid, 19)
            assert kind in ("info", "other"), (kind, value)
            infos += kind == "info"
        stop_id = lz.send("name")
        ended = False
        while True:
            line = azgo.readline(timeout=60)
            if line == "" and not ended:
                ended = True  # the empty line that closes the lz-analyze reply
                continue
            kind, value = lz.classify(line, stop_id, 19)
            if kind == "reply":
                assert ended and value == (True, "azgo")
                assert azgo.readline() == ""
                break
            assert kind in ("info", "other") and not ended, (kind, value)
            infos += kind == "info"
        assert infos >= 1

        lz.simple("play B Q16")
        move = lz.simple("genmove W")
        assert VERTEX.fullmatch(move) or move == "resign", move

        # lz-genmove_analyze B 10: =id, info lines, `play <move>`, empty line.
        cid = lz.send("lz-genmove_analyze B 10")
        kinds = []
        played = None
        while True:
            line = azgo.readline(timeout=60)
            if line == "":
                assert played is not None, "empty line before the play line"
                break
            kind, value = lz.classify(line, cid, 19)
            kinds.append(kind)
            if kind == "reply":
                assert value == (True, "")
            if kind == "play":
                played = value
        assert kinds[0] in ("reply", "other") and "reply" in kinds and "info" in kinds, kinds
        assert VERTEX.fullmatch(played) or played == "resign", played
        assert lz.simple("name") == "azgo"
    finally:
        azgo.close()
    for line in lz.other:  # stderr as Lizzie sees it: nothing it would mistake for protocol
        assert not line.startswith(("=", "?", "info", "play")) and " -> " not in line, line


def test_kata_analyze_ownership():
    size = 9
    azgo = GtpProcess(azgo_command("--visits", "16", "--seed", "5"))
    try:
        azgo.send(f"boardsize {size}")
        azgo.send("play b E5")
        azgo.write("kata-analyze B 10 ownership true")
        assert azgo.readline(timeout=60) == "="
        line = azgo.readline(timeout=60)
        assert line.startswith("info ")
        azgo.write("protocol_version")
        tail = []
        while True:
            nxt = azgo.readline(timeout=60)
            if nxt == "":
                break
            tail.append(nxt)
        assert all(t.startswith("info ") for t in tail)
        assert azgo.reply() == (True, "2")
    finally:
        azgo.close()
    for info in [line, *tail]:
        moves = lizzie_parse_info(info, size, kata=True)
        assert moves and all("scoreLead" in m for m in moves)
        assert " ownership " in info
        values = info.split(" ownership ")[1].split()
        assert len(values) == size * size
        assert all(-1.0 <= float(v) <= 1.0 for v in values)
    for line in azgo.stderr_lines:
        assert not line.startswith(("=", "?", "info", "play")), line
