"""``azgo analysis``: KataGo's JSON analysis protocol, driven through a real process on pipes.

Checks the response format (fields, lengths, perspective), several turns per query, partial reports,
terminate / terminate_all / query_version / clear_cache, priorities with one analysis slot, the
memory cap, end of input, and >= 2,000 malformed or hostile lines (one JSON reply each, alive after).
"""

from __future__ import annotations

import json
import queue
import random
import subprocess
import threading
import time

import pytest

from azgo_cmd import azgo_program

GAME9 = ["E5", "C3", "G3", "C6", "G7", "D7", "F2", "B4", "C2", "B2"]


def moves_of(vertices, first="B"):
    other = {"B": "W", "W": "B"}
    out, colour = [], first
    for v in vertices:
        out.append([colour, v])
        colour = other[colour]
    return out


def query(qid, moves=(), size=9, **extra):
    q = {"id": qid, "moves": list(moves), "rules": "tromp-taylor", "komi": 7.0, "boardXSize": size,
         "boardYSize": size}
    q.update(extra)
    return q


class AnalysisProcess:
    """``azgo analysis`` with reader threads, so every read has a timeout."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen(azgo_program("analysis", "--symmetry", "none", "--seed", "1", *args),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.put(raw.decode())
        self.lines.put(None)

    def _read_err(self):
        for raw in self.proc.stderr:
            self.stderr.append(raw.decode(errors="replace"))

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj) -> None:
        self.send_raw((json.dumps(obj) + "\n").encode())

    def read(self, timeout: float = 60.0) -> dict:
        line = self.lines.get(timeout=timeout)
        assert line is not None, "azgo analysis closed its output; stderr:\n" + "".join(self.stderr)
        return json.loads(line)  # every line is one JSON object

    def read_until(self, pred, timeout: float = 60.0) -> tuple[dict, list[dict]]:
        """Read lines until one satisfies ``pred``; returns it and everything read before it."""
        seen = []
        end = time.monotonic() + timeout
        while True:
            r = self.read(max(0.1, end - time.monotonic()))
            if pred(r):
                return r, seen
            seen.append(r)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def server():
    p = AnalysisProcess("--analysis-threads", "2")
    yield p
    p.close()


def final(qid, turn=None):
    return lambda r: r.get("id") == qid and r.get("isDuringSearch") is False and (
        turn is None or r.get("turnNumber") == turn)


def test_turns_fields_and_lengths(server):
    server.send(query("g", moves_of(GAME9), analyzeTurns=[0, 4, 10], maxVisits=40, includeOwnership=True,
                      includePolicy=True, includePVVisits=True, includeMovesOwnership=True))
    got = {}
    while len(got) < 3:
        r = server.read()
        assert "error" not in r and "warning" not in r, r
        got[r["turnNumber"]] = r
    assert sorted(got) == [0, 4, 10]
    for turn, r in got.items():
        root = r["rootInfo"]
        assert r["id"] == "g" and r["isDuringSearch"] is False
        assert 40 <= root["visits"] <= 40 + 8
        assert root["currentPlayer"] == ("B" if turn % 2 == 0 else "W")
        assert 0 <= root["winrate"] <= 1 and isinstance(root["scoreLead"], float)
        assert len(r["ownership"]) == 81 and all(-1 <= x <= 1 for x in r["ownership"])
        assert len(r["policy"]) == 82
        legal = [p for p in r["policy"] if p != -1]
        assert abs(sum(legal) - 1) < 1e-3 and all(p >= 0 for p in legal)
        infos = r["moveInfos"]
        assert [m["order"] for m in infos] == list(range(len(infos)))
        assert sum(m["visits"] for m in infos) == root["visits"] - 1  # the root's own evaluation
        for m in infos:
            for key in ("move", "visits", "winrate", "scoreLead", "scoreMean", "scoreStdev", "prior", "lcb",
                        "utility", "utilityLcb", "pv", "pvVisits"):
                assert key in m, key
            assert m["pv"][0] == m["move"] and len(m["pv"]) == len(m["pvVisits"])
            assert m["pvVisits"][0] == m["visits"]
    # turn 10: the points of the 10 moves are occupied, so their policy is -1 (row-major from the top)
    cols = "ABCDEFGHJ"
    for v in GAME9:
        idx = (9 - int(v[1:])) * 9 + cols.index(v[0])
        assert got[10]["policy"][idx] == -1
        assert got[0]["policy"][idx] >= 0


def test_perspective_black_white_side_to_move(server):
    moves = moves_of(GAME9[:3])  # White to move
    results = {}
    for persp in ("SIDETOMOVE", "BLACK", "WHITE"):
        server.send(query(persp, moves, maxVisits=30, includeOwnership=True,
                          overrideSettings={"reportAnalysisWinratesAs": persp}))
        results[persp], _ = server.read_until(final(persp))
    stm, black, white = (results[k]["rootInfo"] for k in ("SIDETOMOVE", "BLACK", "WHITE"))
    assert stm["currentPlayer"] == "W"
    assert white["winrate"] == pytest.approx(stm["winrate"], abs=1e-6)
    assert black["winrate"] == pytest.approx(1 - stm["winrate"], abs=1e-6)
    assert black["scoreLead"] == pytest.approx(-stm["scoreLead"], abs=1e-5)
    assert results["BLACK"]["ownership"][0] == pytest.approx(-results["SIDETOMOVE"]["ownership"][0], abs=1e-4)


def test_partial_reports_then_terminate(server):
    server.send(query("long", moves_of(GAME9[:2]), maxVisits=10 ** 7, reportDuringSearchEvery=0.1))
    partial, _ = server.read_until(lambda r: r.get("id") == "long" and r.get("isDuringSearch") is True)
    assert partial["rootInfo"]["visits"] >= 1
    server.send({"id": "t1", "action": "terminate", "terminateId": "long"})
    last, seen = server.read_until(final("long"), timeout=30)
    assert any(r.get("id") == "t1" and r.get("action") == "terminate" for r in seen + [last]) or \
        server.read_until(lambda r: r.get("id") == "t1")[0]
    assert last["rootInfo"]["visits"] >= partial["rootInfo"]["visits"]
    assert not any(r.get("id") == "long" and r.get("isDuringSearch") is False for r in seen)


def test_priority_order_with_one_slot():
    p = AnalysisProcess("--analysis-threads", "1")
    try:
        p.send(query("busy", maxVisits=10 ** 7, reportDuringSearchEvery=0.05))
        p.read_until(lambda r: r.get("id") == "busy")  # the slot is taken
        p.send(query("low", moves_of(["E5"]), maxVisits=20, priority=0))
        p.send(query("high", moves_of(["C3"]), maxVisits=20, priority=10))
        p.send(query("low2", moves_of(["D4"]), maxVisits=20, priority=-5, analyzeTurns=[0, 1],
                     priorities=[-5, 20]))
        time.sleep(0.3)
        p.send({"id": "t", "action": "terminate", "terminateId": "busy"})
        order = []
        while len(order) < 4:
            r = p.read()
            if r.get("isDuringSearch") is False and r.get("id") != "busy":
                order.append((r["id"], r["turnNumber"]))
        assert order == [("low2", 1), ("high", 1), ("low", 1), ("low2", 0)]
    finally:
        p.close()


def test_actions(server):
    server.send({"id": "v", "action": "query_version"})
    r = server.read()
    assert r["id"] == "v" and r["action"] == "query_version" and r["version"] and "git_hash" in r
    server.send({"id": "c", "action": "clear_cache"})
    assert server.read() == {"id": "c", "action": "clear_cache"}
    server.send(query("a", maxVisits=10 ** 7, analyzeTurns=[0]))
    server.send(query("b", moves_of(["E5"]), maxVisits=10 ** 7, analyzeTurns=[0, 1]))
    server.send(query("c", moves_of(["E5", "D4"]), maxVisits=10 ** 7, analyzeTurns=[0, 1, 2]))
    time.sleep(0.5)
    server.send({"id": "tb", "action": "terminate", "terminateId": "b", "turnNumbers": [1]})
    _, seen = server.read_until(final("b", 1), timeout=30)
    server.send({"id": "ta", "action": "terminate_all"})
    finals = {}
    while len(finals) < 5:
        r = server.read(30)
        if r.get("isDuringSearch") is False:
            finals[(r["id"], r["turnNumber"])] = r
    assert set(finals) == {("a", 0), ("b", 0), ("c", 0), ("c", 1), ("c", 2)}
    # positions never started answer noResults; started ones report what they searched
    assert any(r.get("noResults") for r in finals.values())


def test_warnings_and_unknown_settings(server):
    server.send(query("w", moves_of(["E5"]), rules="japanese", maxVisits=10, foo=1,
                      overrideSettings={"maxTime": 5, "wideRootNoise": 0.04, "bogusSetting": 3},
                      avoidMoves=[{"player": "W", "moves": ["D4", "pass"], "untilDepth": 1}]))
    r, seen = server.read_until(final("w"))
    fields = {(x["field"], x["warning"][:19]) for x in seen if "warning" in x}
    assert ("rules", "azgo scores by area") in fields
    assert any(f == "foo" for f, _ in fields) and any(f == "overrideSettings" for f, _ in fields)
    assert "D4" not in {m["move"] for m in r["moveInfos"]}


def test_allow_moves_and_errors(server):
    server.send(query("al", moves_of(["E5"]), maxVisits=30,
                      allowMoves=[{"player": "W", "moves": ["C3", "G7"], "untilDepth": 1}]))
    r, _ = server.read_until(final("al"))
    assert {m["move"] for m in r["moveInfos"]} <= {"C3", "G7", "pass"}
    server.send(query("il", moves_of(["E5", "E5"])))
    r = server.read()
    assert r["id"] == "il" and r["field"] == "moves" and "Illegal move 1" in r["error"]
    server.send(query("big", size=25))
    r = server.read()
    assert r["field"] == "boardXSize" and "not supported" in r["error"]
    server.send(query("rect", boardYSize=13))
    assert server.read()["field"] == "boardYSize"


def _rss_mb(pid: int) -> float:
    import os
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_memory_cap_ends_searches():
    probe = AnalysisProcess()
    try:
        probe.send(query("p", size=19, maxVisits=20))
        probe.read_until(final("p"))
        base = _rss_mb(probe.proc.pid)
    finally:
        probe.close()
    cap = base + 25  # MB of search tree above a warmed-up server's
    p = AnalysisProcess("--max-memory", f"{cap:.0f}")
    try:
        p.send(query("deep", size=19, maxVisits=10 ** 7, reportDuringSearchEvery=0.5))
        peak = 0.0
        while True:  # no terminate: the cap alone must end the search
            r = p.read(120)
            peak = max(peak, _rss_mb(p.proc.pid))
            if r.get("isDuringSearch") is False:
                break
        assert r["rootInfo"]["visits"] > 100
        assert peak < cap + 300
        t = time.monotonic()  # the server logs before it answers, but stderr is read by another thread
        while not any("memory cap reached" in line for line in p.stderr) and time.monotonic() - t < 10:
            time.sleep(0.05)
        assert any("memory cap reached" in line for line in p.stderr)
        p.send(query("next", maxVisits=10))  # and the server goes on
        p.read_until(final("next"))
    finally:
        p.close()


def hostile_lines(rng: random.Random, n: int) -> list[bytes]:
    """``n`` lines that are each certainly not a runnable query (each must get exactly one error)."""
    good = query("x", moves_of(GAME9[:4]), maxVisits=10)
    bad_values = [None, True, -1, 1e308, "", "Z99", [], {}, [[]], ["B"], [["X", "E5"]], "\u0000", 2 ** 70,
                  "(99,99)", [["B", "E5"], ["W", "E5"]], "a" * 1000]
    makers = []

    def wrong_field():
        q = dict(good)
        key = rng.choice(["boardXSize", "boardYSize", "komi", "moves", "initialStones", "analyzeTurns",
                          "maxVisits", "rules", "priority", "reportDuringSearchEvery", "overrideSettings",
                          "includeOwnership", "avoidMoves", "initialPlayer", "priorities"])
        v = rng.choice(bad_values)
        if key == "initialStones" and v in ([], [[]]):
            v = [["B", "E5"]]  # E5 is also moves[0]: occupied
        if key in ("priorities",) and v == []:
            v = [1, 2]
        if key == "includeOwnership" and isinstance(v, bool):
            v = 1
        if (key in ("priority", "komi") and v == -1) or (key in ("moves", "overrideSettings", "rules")
                                                          and v in ([], {})):
            v = 1e308  # those values are valid for those fields
        q[key] = v
        return json.dumps(q).encode()
    makers.append(wrong_field)

    def missing():
        q = dict(good)
        del q[rng.choice(["id", "moves", "rules", "boardXSize", "boardYSize"])]
        return json.dumps(q).encode()
    makers.append(missing)

    def truncated():
        text = json.dumps(good)
        return text[: rng.randrange(1, len(text) - 1)].encode()
    makers.append(truncated)

    def garbage():
        return bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"").replace(
            b"\r", b"") or b"x"
    makers.append(garbage)

    def not_object():
        return rng.choice([b"[]", b"1", b'"q"', b"null", b"true", b"[" * 100000, b'{"id":' * 50000])
    makers.append(not_object)

    def bad_action():
        return json.dumps(rng.choice([
            {"id": "a", "action": "nope"}, {"id": "a", "action": "terminate"},
            {"id": "a", "action": "terminate", "terminateId": 5},
            {"id": "a", "action": "terminate", "terminateId": "x", "turnNumbers": "1"},
            {"action": "query_version"}, {"id": 7, "action": "clear_cache"}])).encode()
    makers.append(bad_action)

    def bad_id():
        q = dict(good)
        q["id"] = rng.choice([None, 1, [], {}, 2.5])
        return json.dumps(q).encode()
    makers.append(bad_id)

    out = []
    while len(out) < n:
        line = rng.choice(makers)()
        if line.strip():
            out.append(line)
    return out


def test_fuzz_two_thousand_hostile_lines():
    p = AnalysisProcess()
    try:
        lines = hostile_lines(random.Random(5), 2000)
        writer = threading.Thread(target=lambda: [p.send_raw(x + b"\n") for x in lines], daemon=True)
        writer.start()
        replies = []
        for _ in lines:
            r = p.read(60)
            replies.append(r)
        writer.join(10)
        assert len(replies) == 2000
        assert all("error" in r for r in replies), [r for r in replies if "error" not in r][:3]
        assert p.proc.poll() is None
        p.send(query("after", maxVisits=5))
        r, seen = p.read_until(final("after"))
        assert r["rootInfo"]["visits"] >= 5 and not seen
    finally:
        p.close()


def test_end_of_input_finishes_the_queue():
    p = AnalysisProcess("--analysis-threads", "1")
    for k in range(3):
        p.send(query(f"q{k}", moves_of(GAME9[:k]), maxVisits=15))
    p.proc.stdin.close()
    ids = set()
    while True:
        line = p.lines.get(timeout=60)
        if line is None:
            break
        ids.add(json.loads(line)["id"])
    assert ids == {"q0", "q1", "q2"}
    assert p.proc.wait(timeout=30) == 0


def test_moves_ownership_on_consecutive_turns(server):
    # consecutive turns reuse the tree one move on: every analysed move still has its ownership
    server.send(query("mo", moves_of(GAME9), analyzeTurns=[3, 4, 5], maxVisits=60, includeMovesOwnership=True))
    got = {}
    while len(got) < 3:
        r = server.read()
        assert "error" not in r, r
        if r.get("isDuringSearch") is False:
            got[r["turnNumber"]] = r
    for turn, r in got.items():
        for m in r["moveInfos"]:
            assert len(m.get("ownership", [])) == 81, (turn, m["move"])
