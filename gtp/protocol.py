"""GTP v2 framing: input preprocessing, command parsing, response formatting (pure functions).

Preprocessing follows the spec (section 3.1): control characters other than HT and LF are removed
(so ``\\r\\n`` line ends work), everything from ``#`` on is a comment, HT becomes a space, and empty
lines are ignored. A command is ``[id] name [args...]`` with an optional unsigned integer id, which
the response echoes as ``=id`` / ``?id``. Responses end with a blank line and never contain one.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from typing import Protocol

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
MAX_ID = 2 ** 31 - 1
MAX_GTP_INT = 2 ** 31 - 1


@dataclass(frozen=True)
class Command:
    """One parsed command line. ``id`` is None when the line had none."""

    id: int | None
    name: str
    args: tuple[str, ...]


def preprocess(line: str) -> str:
    """Apply the spec's preprocessing to one input line (without its LF); '' means ignore it."""
    line = line.replace("\n", "")
    line = _CONTROL.sub("", line)
    hash_at = line.find("#")
    if hash_at >= 0:
        line = line[:hash_at]
    return line.replace("\t", " ").strip(" ")


def parse(line: str) -> Command | None:
    """Parse a raw input line into a Command; None for a blank, comment-only or id-only line."""
    text = preprocess(line)
    if not text:
        return None
    tokens = [t for t in text.split(" ") if t]  # only SPACE separates (HT became SPACE), not NBSP etc.
    cid = None
    if tokens[0].isdigit() and tokens[0].isascii():
        cid = min(int(tokens[0]), MAX_ID)
        tokens = tokens[1:]
        if not tokens:
            return None
    return Command(cid, tokens[0], tuple(tokens[1:]))


def _clean(text: str) -> str:
    text = text.replace("\r", "").rstrip("\n")
    while "\n\n" in text:
        text = text.replace("\n\n", "\n")
    return text


def success(cid: int | None, text: str = "") -> str:
    """``=[id] text`` plus the terminating blank line."""
    return f"={'' if cid is None else cid} {_clean(text)}\n\n"


def failure(cid: int | None, text: str) -> str:
    """``?[id] text`` plus the terminating blank line."""
    return f"?{'' if cid is None else cid} {_clean(text)}\n\n"


class GtpError(Exception):
    """A command failed; the message is the GTP error text (``illegal move``, ``syntax error`` ...)."""


class Channel(Protocol):
    """What streaming commands need from the command loop."""

    def write(self, text: str) -> None: ...  # noqa: E704 - thread-safe write + flush to stdout

    def wait_for_input(self) -> None: ...  # noqa: E704 - block until the next input line arrives


def log(msg: str) -> None:
    """Diagnostics to stderr, never starting with '=', '?', 'info' or 'play' (clients parse those)."""
    text = str(msg)
    if text.startswith(("=", "?", "info", "play")):
        text = "azgo: " + text
    print(text, file=sys.stderr, flush=True)


def int_arg(tok: str, what: str = "integer") -> int:
    """A GTP integer argument (unsigned, at most 2^31 - 1) or a ``syntax error``."""
    if not (tok.isdigit() and tok.isascii()) or len(tok) > 10 or int(tok) > MAX_GTP_INT:
        raise GtpError(f"syntax error: expected an {what}, got {tok!r}")
    return int(tok)


def float_arg(tok: str) -> float:
    """A GTP float argument (finite) or a ``syntax error``."""
    try:
        v = float(tok)
    except ValueError:
        raise GtpError(f"syntax error: expected a number, got {tok!r}") from None
    if not math.isfinite(v):
        raise GtpError(f"syntax error: expected a finite number, got {tok!r}")
    return v
