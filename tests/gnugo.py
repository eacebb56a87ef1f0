"""Drive GNU Go (``gnugo --mode gtp --chinese-rules``) over pipes, for differential tests.

GNU Go is the reference for the rules of Go here (legality, captures, simple ko, suicide, area
score, fixed handicap). It is looked up on ``PATH`` and then at ``/usr/games/gnugo`` (where Debian
puts it); tests that need it skip with a clear reason when it is missing (``require_gnugo``).

    with GnuGo(seed=1) as gg:
        gg.send("boardsize 9")
        print(gg.send("list_stones black"))       # "" or "C3 D4 ..."
        replies = gg.batch(["play b C3", "is_legal w C3"])   # pipelined: one round trip per chunk

Replies are GTP responses: ``= text`` (success) or ``? text`` (failure), each ended by a blank line.
``send`` raises GtpError on a failure reply unless ``check=False``; ``batch`` returns Reply tuples.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Iterable, NamedTuple

GNUGO_FALLBACK = "/usr/games/gnugo"
GNUGO_ARGS = ("--mode", "gtp", "--chinese-rules")

# Commands are written in chunks no bigger than this many bytes, then all their replies are read.
# A pipe holds at least 64 KiB on Linux, so writing a chunk never blocks while GNU Go is blocked
# writing replies we have not read yet (no deadlock, no writer thread needed).
_CHUNK_BYTES = 16 * 1024


class GtpError(RuntimeError):
    """GNU Go answered ``? ...`` to a command sent with ``check=True`` (or died)."""

    def __init__(self, command: str, message: str):
        super().__init__(f"GNU Go refused {command!r}: {message}")
        self.command = command
        self.message = message


class Reply(NamedTuple):
    """One GTP response: ``ok`` is False for ``?`` replies; ``text`` is the response without ``= ``."""

    ok: bool
    text: str


def find_gnugo() -> str | None:
    """Path of the GNU Go binary (``$GNUGO``, then PATH, then /usr/games/gnugo), or None if missing."""
    env = os.environ.get("GNUGO")
    if env and os.access(env, os.X_OK):
        return env
    found = shutil.which("gnugo")
    if found:
        return found
    if os.access(GNUGO_FALLBACK, os.X_OK):
        return GNUGO_FALLBACK
    return None


def require_gnugo() -> str:
    """The GNU Go binary path, or skip the calling test with the reason it is missing."""
    import pytest

    path = find_gnugo()
    if path is None:
        pytest.skip("GNU Go not found (looked for $GNUGO, `gnugo` on PATH, /usr/games/gnugo); "
                    "install it (e.g. apt-get install gnugo) to run the GNU Go differential tests")
    return path


def gnugo_version(binary: str | None = None) -> str:
    """First line of ``gnugo --version`` (e.g. ``GNU Go 3.8``)."""
    binary = binary or find_gnugo()
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    return out.splitlines()[0].strip() if out else ""


class GnuGo:
    """A running ``gnugo --mode gtp --chinese-rules --seed N`` process."""

    def __init__(self, seed: int = 0, extra_args: Iterable[str] = (), binary: str | None = None):
        binary = binary or find_gnugo()
        if binary is None:
            raise FileNotFoundError("GNU Go binary not found (PATH, /usr/games/gnugo)")
        self.binary = binary
        self.args = [binary, *GNUGO_ARGS, "--seed", str(seed), *extra_args]
        self.proc = subprocess.Popen(
            self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, encoding="ascii", bufsize=1024 * 1024)
        self.commands_sent = 0

    # ------------------------------------------------------------------ protocol
    def _read_reply(self, command: str) -> Reply:
        readline = self.proc.stdout.readline
        first = readline()
        while first == "\n":  # tolerate stray blank lines before a response
            first = readline()
        if not first:
            raise GtpError(command, "GNU Go exited (EOF on its stdout)")
        lines = [first.rstrip("\r\n")]
        while True:
            line = readline()
            if not line:
                raise GtpError(command, "GNU Go exited in the middle of a reply")
            if line == "\n" or line == "\r\n":
                break
            lines.append(line.rstrip("\r\n"))
        head = lines[0]
        if head[:1] not in ("=", "?"):
            raise GtpError(command, f"not a GTP reply: {head!r}")
        ok = head[0] == "="
        # "= text" / "=id text": drop the status character and an optional numeric id.
        rest = head[1:]
        i = 0
        while i < len(rest) and rest[i].isdigit():
            i += 1
        lines[0] = rest[i:].lstrip(" ")
        return Reply(ok, "\n".join(lines).strip())

    def send(self, command: str, check: bool = True) -> str:
        """Send one command and wait for its reply; return the reply text (GtpError on ``?``)."""
        reply = self.batch([command])[0]
        if check and not reply.ok:
            raise GtpError(command, reply.text)
        return reply.text

    def batch(self, commands: Iterable[str], check: bool = False) -> list[Reply]:
        """Send many commands pipelined (chunked, see ``_CHUNK_BYTES``) and return every reply in order.

        With ``check=True`` the first ``?`` reply raises GtpError (after all replies were read).
        """
        cmds = [c.strip() for c in commands]
        for c in cmds:
            if not c or "\n" in c:
                raise ValueError(f"bad GTP command {c!r}")
        write, flush = self.proc.stdin.write, self.proc.stdin.flush
        replies: list[Reply] = []
        i = 0
        while i < len(cmds):
            j, size = i, 0
            while j < len(cmds) and (j == i or size + len(cmds[j]) + 1 <= _CHUNK_BYTES):
                size += len(cmds[j]) + 1
                j += 1
            write("\n".join(cmds[i:j]) + "\n")
            flush()
            for k in range(i, j):
                replies.append(self._read_reply(cmds[k]))
            self.commands_sent += j - i
            i = j
        if check:
            for c, r in zip(cmds, replies):
                if not r.ok:
                    raise GtpError(c, r.text)
        return replies

    # ------------------------------------------------------------------ helpers
    def new_game(self, size: int, komi: float | None = None) -> None:
        """``boardsize`` + ``clear_board`` (+ ``komi``); GtpError if GNU Go refuses the size."""
        cmds = [f"boardsize {size}", "clear_board"]
        if komi is not None:
            cmds.append(f"komi {komi}")
        self.batch(cmds, check=True)

    def close(self) -> None:
        """Send ``quit`` and wait for the process (kill it if it hangs)."""
        proc = self.proc
        if proc.poll() is None:
            try:
                proc.stdin.write("quit\n")
                proc.stdin.flush()
                proc.stdin.close()
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                proc.kill()
                proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> "GnuGo":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def parse_vertices(text: str) -> list[str]:
    """Upper-cased vertices of a ``list_stones`` / ``all_legal`` / ``fixed_handicap`` reply."""
    return text.upper().split()


def parse_score(text: str) -> float:
    """Black-minus-White margin of a ``final_score`` reply: ``B+3.5`` -> 3.5, ``W+0.5`` -> -0.5, ``0`` -> 0."""
    t = text.strip().upper()
    if t in ("0", "DRAW"):
        return 0.0
    if t.startswith("B+"):
        return float(t[2:])
    if t.startswith("W+"):
        return -float(t[2:])
    raise ValueError(f"unparsable final_score {text!r}")


# Lines that tests append here are printed in pytest's terminal summary (see tests/conftest.py).
SUMMARY: list[str] = []
