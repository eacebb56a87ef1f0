"""One GTP client: a GTP engine (azgo, GNU Go, Pachi, ...) as a subprocess spoken to over pipes.

`azgo match`, the strength lines, the GNU Go game generator, the tests and the benchmarks all drive engines
through `GtpClient`. A reader thread moves the engine's stdout into a queue line by line, so

- every read has a timeout (a hung engine is killed and reported, never waited on forever);
- many commands can be written before their replies are read (`batch`): the engine never blocks on a full
  pipe, because its output is always being drained;
- streamed output (``lz-analyze`` / ``kata-analyze`` info lines) is read with `readline`.

Replies follow GTP 2: ``=`` or ``?``, an optional numeric id, the text, and an empty line. ``strict=True``
checks what gtp2ogs insists on (the first line starts with ``=``/``?`` followed by a space or nothing); by
default output before a reply's first line is skipped, as Sabaki and gtp2ogs tolerate it.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import subprocess
import threading
from typing import IO, Iterable, NamedTuple, Sequence

_REPLY_HEAD = re.compile(r"[=?](\d*)(?: (.*))?")


class EngineError(RuntimeError):
    """A GTP engine died, timed out, refused a command, or answered something unusable."""


class Reply(NamedTuple):
    """One GTP response: ``ok`` is False for ``?`` replies; ``text`` is without the status and id."""

    ok: bool
    text: str


class GtpClient:
    """A GTP engine subprocess: ``send(command)`` returns the response text or raises `EngineError`.

    ``command`` is a shell-style string or an argv list. ``stderr``: None discards the engine's stderr, a
    path appends it to that file, ``"capture"`` keeps its lines in ``stderr_lines`` (read by a thread),
    ``"stdout"`` merges it into the reply stream. ``timeout`` is the default seconds a reply may take.
    ``ask_name`` sends ``name`` at start for ``self.name`` (a failure leaves the program's name).
    """

    def __init__(self, command: str | Sequence[str], name: str = "", stderr: str | None = None,
                 timeout: float = 600.0, ask_name: bool = True, strict: bool = False, eol: str = "\n",
                 env: dict | None = None, stderr_path: str | None = None):
        self.argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not self.argv:
            raise EngineError("empty engine command")
        self.command = command if isinstance(command, str) else shlex.join(self.argv)
        self.timeout = timeout
        self.strict = strict
        self.eol = eol
        self.env = env
        self._stderr = stderr_path if stderr_path is not None else stderr
        self.stderr_lines: list[str] = []
        self.stdout_log: list[str] = []
        self.commands_sent = 0
        self._err: IO | int = subprocess.DEVNULL
        self._spawn()
        self.name = name or ((self._safe("name") if ask_name else None) or os.path.basename(self.argv[0]))

    # ------------------------------------------------------------------ process
    def _spawn(self) -> None:
        mode = self._stderr
        if mode == "capture":
            err: IO | int = subprocess.PIPE
        elif mode == "stdout":
            err = subprocess.STDOUT
        elif mode:
            if self._err is subprocess.DEVNULL:  # a restart keeps appending to the log it has open
                self._err = open(mode, "ab")
            err = self._err
        else:
            err = subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         bufsize=0, env=self.env)
        except OSError as e:
            raise EngineError(f"cannot start engine {self.command!r}: {e.strerror or e}") from None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._pumps = [threading.Thread(target=self._pump, args=(self.proc.stdout, self._lines, self.stdout_log),
                                        daemon=True)]
        if mode == "capture":
            self._pumps.append(threading.Thread(target=self._pump, args=(self.proc.stderr, None, self.stderr_lines),
                                                daemon=True))
        for t in self._pumps:
            t.start()

    @staticmethod
    def _pump(stream, lines: queue.Queue | None, log: list[str]) -> None:
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if lines is not None:
                    lines.put(line)
                if len(log) < 100_000:  # a log for failure messages, capped for engines that run for days
                    log.append(line)
        except (OSError, ValueError):
            pass
        if lines is not None:
            lines.put(None)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def died(self, grace: float = 2.0) -> bool:
        """Whether the engine's process has exited, waiting up to ``grace`` seconds for one that closed its
        output to finish exiting (a crash) rather than judging while it dies."""
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            return False
        return True

    def restart(self) -> None:
        """Start the engine again after it died (same command, name and stderr log)."""
        self.close(kill=True, keep_log=True)
        self._spawn()

    def close(self, kill: bool = False, keep_log: bool = False) -> None:
        """``quit`` (unless ``kill``) and wait up to 5 s, then kill; close the stderr log unless ``keep_log``."""
        proc = self.proc
        if proc.poll() is None and not kill:
            try:
                self.write("quit")
                proc.wait(timeout=5)
            except (EngineError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for t in self._pumps:  # the last lines the engine wrote (stderr_lines is read after close)
            t.join(timeout=2)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except (OSError, ValueError):
                pass
        if self._err is not subprocess.DEVNULL and not keep_log:
            self._err.close()
            self._err = subprocess.DEVNULL

    def __enter__(self) -> "GtpClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ raw lines
    def write(self, line: str) -> None:
        """Write one raw line (no reply is read)."""
        if self.proc.poll() is not None:
            raise EngineError(f"engine {self.argv[0]} has exited (status {self.proc.returncode})")
        try:
            self.proc.stdin.write((line + self.eol).encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise EngineError(f"engine {self.argv[0]} closed its input") from None

    def next_line(self, timeout: float) -> str | None:
        """The next line of output, or None if none came within ``timeout`` seconds (for streamed output:
        the engine is left running); EngineError at end of output."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            self._lines.put(None)  # stay at end of output for later reads
            tail = "; stderr: " + " | ".join(self.stderr_lines[-5:]) if self.stderr_lines else ""
            raise EngineError(f"engine {self.argv[0]} closed its output{tail}")
        return line

    def readline(self, timeout: float | None = None) -> str:
        """The next line of output; EngineError at end of output or after ``timeout`` seconds (default: the
        client's), and then the engine is killed: it is not answering."""
        line = self.next_line(timeout if timeout is not None else self.timeout)
        if line is None:
            self.close(kill=True, keep_log=True)
            raise EngineError(f"engine {self.argv[0]} did not answer in time")
        return line

    # ------------------------------------------------------------------ replies
    def reply(self, timeout: float | None = None) -> Reply:
        """Read one whole reply (up to its empty line)."""
        first = self.readline(timeout)
        while not first.startswith(("=", "?")):
            if self.strict:
                raise EngineError(f"engine {self.argv[0]}: output instead of a GTP reply: {first!r}")
            first = self.readline(timeout)  # noise (or blank lines) before a reply
        m = _REPLY_HEAD.fullmatch(first)
        if self.strict and (m is None or m.group(1)):
            raise EngineError(f"engine {self.argv[0]}: malformed reply line {first!r}")
        head = first[1:].lstrip("0123456789").strip()
        lines = [head]
        while True:
            line = self.readline(timeout)
            if line == "":
                break
            lines.append(line)
        return Reply(first[0] == "=", "\n".join(lines).strip())

    def ask(self, command: str, timeout: float | None = None) -> Reply:
        """Send one command and read its reply, ``?`` replies included."""
        self.write(command)
        self.commands_sent += 1
        try:
            return self.reply(timeout)
        except EngineError as e:
            raise EngineError(f"{e} (after {command!r})") from None

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command; return the success text, raise EngineError on ``?``, death or timeout."""
        r = self.ask(command, timeout)
        if not r.ok:
            raise EngineError(f"engine {self.argv[0]} refused {command!r}: {r.text}")
        return r.text

    def batch(self, commands: Iterable[str], check: bool = False, timeout: float | None = None) -> list[Reply]:
        """Write every command, then read every reply in order (pipelined; the reader thread keeps the
        engine's output drained, so no pipe fills). ``check`` raises on the first ``?`` after all are read."""
        cmds = [c.strip() for c in commands]
        for c in cmds:
            if not c or "\n" in c:
                raise ValueError(f"bad GTP command {c!r}")
        if cmds:
            self.write(self.eol.join(cmds))
        self.commands_sent += len(cmds)
        replies = [self.reply(timeout) for _ in cmds]
        if check:
            for c, r in zip(cmds, replies):
                if not r.ok:
                    raise EngineError(f"engine {self.argv[0]} refused {c!r}: {r.text}")
        return replies

    def _safe(self, cmd: str) -> str | None:
        try:
            return self.send(cmd, timeout=min(self.timeout, 60.0))
        except EngineError:
            return None
