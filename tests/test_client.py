"""azgo.gtp.client.GtpClient against a small fake GTP engine (a Python script on pipes)."""

from __future__ import annotations

import os
import sys
import textwrap
import time

import pytest

from azgo.gtp.client import EngineError, GtpClient, Reply

FAKE = textwrap.dedent("""
    import sys, time
    print("fake engine starting", file=sys.stderr, flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        cid = parts[0] if parts[0].isdigit() else ""
        if cid:
            parts = parts[1:]
        cmd, args = parts[0], parts[1:]
        if cmd == "quit":
            print(f"={cid}\\n", flush=True)
            break
        if cmd == "name":
            print(f"={cid} fake\\n", flush=True)
        elif cmd == "noise":
            print("some diagnostic on stdout", flush=True)
            print(f"={cid} after noise\\n", flush=True)
        elif cmd == "echo":
            print(f"={cid} " + " ".join(args) + "\\n", flush=True)
        elif cmd == "two_lines":
            print(f"={cid} first\\nsecond\\n", flush=True)
        elif cmd == "sleep":
            time.sleep(float(args[0]))
            print(f"={cid}\\n", flush=True)
        elif cmd == "stream":
            print(f"={cid}", flush=True)
            for i in range(int(args[0])):
                print(f"info {i}", flush=True)
            print("", flush=True)
        elif cmd == "die":
            sys.exit(3)
        else:
            print(f"?{cid} unknown command\\n", flush=True)
""")


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_gtp.py"
    script.write_text(FAKE)
    return [sys.executable, str(script)]


def test_send_ask_and_name(fake):
    with GtpClient(fake, timeout=20) as c:
        assert c.name == "fake"  # asked with `name`
        assert c.send("echo a b") == "a b"
        assert c.send("two_lines") == "first\nsecond"
        assert c.ask("bogus") == Reply(False, "unknown command")
        with pytest.raises(EngineError, match="refused 'bogus': unknown command"):
            c.send("bogus")
        assert c.commands_sent == 5


def test_noise_is_skipped_unless_strict(fake):
    with GtpClient(fake, timeout=20, ask_name=False) as c:
        assert c.name == os.path.basename(sys.executable)  # the program, without asking
        assert c.send("noise") == "after noise"
    with GtpClient(fake, timeout=20, ask_name=False, strict=True) as c:
        with pytest.raises(EngineError, match="output instead of a GTP reply"):
            c.send("noise")


def test_strict_rejects_reply_ids(fake):
    with GtpClient(fake, timeout=20, ask_name=False, strict=True) as c:
        with pytest.raises(EngineError, match="malformed reply line '=7 x'"):
            c.send("7 echo x")


def test_batch_pipelines_thousands_of_commands(fake):
    """Written all at once before any reply is read: the reader thread keeps the engine's output
    drained, so neither side blocks on a full pipe (2,000 replies are far more than a pipe holds)."""
    with GtpClient(fake, timeout=60, ask_name=False) as c:
        replies = c.batch([f"echo {'x' * 60} {i}" for i in range(2000)] + ["bogus"])
        assert [r.text.split()[-1] for r in replies[:-1]] == [str(i) for i in range(2000)]
        assert replies[-1] == Reply(False, "unknown command")
        with pytest.raises(EngineError):
            c.batch(["echo 1", "bogus"], check=True)
        with pytest.raises(ValueError):
            c.batch(["echo a\nname"])


def test_timeout_kills_a_hung_engine(fake):
    c = GtpClient(fake, timeout=20, ask_name=False)
    t = time.monotonic()
    with pytest.raises(EngineError, match="did not answer in time"):
        c.send("sleep 30", timeout=0.5)
    assert time.monotonic() - t < 10
    assert not c.alive
    c.restart()  # the same command again
    assert c.send("echo back") == "back"
    c.close()


def test_death_and_stderr_capture(fake):
    c = GtpClient(fake, timeout=20, ask_name=False, stderr="capture")
    with pytest.raises(EngineError, match="closed its output"):
        c.send("die")
    assert c.died()
    with pytest.raises(EngineError, match="has exited"):
        c.send("echo x")
    c.close()
    assert c.stderr_lines == ["fake engine starting"]


def test_stderr_to_a_log_file(fake, tmp_path):
    log = tmp_path / "engines.log"
    c = GtpClient(fake, timeout=20, ask_name=False, stderr=str(log))
    c.send("echo x")
    c.restart()  # the log is kept open across a restart, and appended to
    c.send("echo y")
    c.close()
    assert log.read_text().count("fake engine starting") == 2


def test_streamed_lines(fake):
    with GtpClient(fake, timeout=20, ask_name=False) as c:
        c.write("stream 3")
        assert c.readline() == "="
        assert [c.readline() for _ in range(3)] == ["info 0", "info 1", "info 2"]
        assert c.readline() == ""
        assert c.next_line(timeout=0.2) is None  # nothing more, and the engine keeps running
        assert c.alive and c.send("echo ok") == "ok"


def test_missing_program():
    with pytest.raises(EngineError, match="cannot start engine"):
        GtpClient(["/nonexistent/engine", "--mode", "gtp"])
    with pytest.raises(EngineError, match="empty engine command"):
        GtpClient("")
