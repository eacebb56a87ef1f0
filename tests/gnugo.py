"""Drive GNU Go (``gnugo --mode gtp --chinese-rules``) over pipes, for differential tests.

GNU Go is the reference for the rules of Go here (legality, captures, simple ko, suicide, area
score, fixed handicap). It is looked up on ``PATH`` and then at ``/usr/games/gnugo`` (where Debian
puts it); tests that need it skip with a clear reason when it is missing (``require_gnugo``).

    with GnuGo(seed=1) as gg:
        gg.send("boardsize 9")
        print(gg.send("list_stones black"))       # "" or "C3 D4 ..."
        replies = gg.batch(["play b C3", "is_legal w C3"])   # pipelined: one round trip per chunk

The client is azgo's own (`azgo.gtp.client.GtpClient`); ``send`` raises GtpError (its EngineError) on a
failure reply unless ``check=False``; ``batch`` returns Reply tuples.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Iterable

from azgo.gtp.client import EngineError as GtpError, GtpClient, Reply  # noqa: F401  (re-exported)

GNUGO_FALLBACK = "/usr/games/gnugo"
GNUGO_ARGS = ("--mode", "gtp", "--chinese-rules")

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


class GnuGo(GtpClient):
    """A running ``gnugo --mode gtp --chinese-rules --seed N`` process."""

    def __init__(self, seed: int = 0, extra_args: Iterable[str] = (), binary: str | None = None):
        binary = binary or find_gnugo()
        if binary is None:
            raise FileNotFoundError("GNU Go binary not found (PATH, /usr/games/gnugo)")
        self.binary = binary
        super().__init__([binary, *GNUGO_ARGS, "--seed", str(seed), *extra_args], name="GNU Go", timeout=300)

    def send(self, command: str, check: bool = True) -> str:
        """Send one command and wait for its reply; return the reply text (GtpError on ``?`` if ``check``)."""
        reply = self.batch([command], check=check)[0]
        return reply.text

    def new_game(self, size: int, komi: float | None = None) -> None:
        """``boardsize`` + ``clear_board`` (+ ``komi``); GtpError if GNU Go refuses the size."""
        cmds = [f"boardsize {size}", "clear_board"]
        if komi is not None:
            cmds.append(f"komi {komi}")
        self.batch(cmds, check=True)


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
