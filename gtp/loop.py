"""The GTP command loop: a stdin reader thread feeds a queue; the main thread answers in order.

Because input is read ahead, pondering and analysis stop as soon as the next line arrives, and
pipelined commands are answered strictly in the order they came. stdout carries only GTP responses
(and the ``info``/``play`` lines of analysis commands); diagnostics go to stderr.
"""

from __future__ import annotations

import queue
import sys
import threading
from typing import BinaryIO, TextIO

from .engine import GtpEngine, log
from .protocol import GtpError, failure, parse, success


class _Reader:
    """Reads lines from a binary stream in a daemon thread; ``None`` marks end of input."""

    def __init__(self, stream: BinaryIO):
        self.queue: queue.Queue[str | None] = queue.Queue()
        self._held: list[str | None] = []
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True, name="azgo-stdin")
        self._thread.start()

    def _run(self, stream: BinaryIO) -> None:
        try:
            for raw in iter(stream.readline, b""):
                self.queue.put(raw.decode("utf-8", errors="replace"))
        except (OSError, ValueError):
            pass
        self.queue.put(None)

    def get(self) -> str | None:
        if self._held:
            return self._held.pop()
        return self.queue.get()

    def wait(self) -> None:
        """Block until a line (or end of input) is available, leaving it to be read."""
        if not self._held:
            self._held.append(self.queue.get())


class _Channel:
    def __init__(self, out: TextIO, reader: _Reader):
        self.out = out
        self.reader = reader
        self.lock = threading.Lock()

    def write(self, text: str) -> None:
        with self.lock:
            self.out.write(text)
            self.out.flush()

    def wait_for_input(self) -> None:
        self.reader.wait()


def run(engine: GtpEngine, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Serve GTP until ``quit`` or end of input. Returns the process exit status (0)."""
    reader = _Reader(stdin if stdin is not None else sys.stdin.buffer)
    channel = _Channel(stdout if stdout is not None else sys.stdout, reader)
    try:
        while True:
            line = reader.get()
            if line is None:
                break
            engine.stop()
            cmd = parse(line)
            if cmd is None:
                continue
            try:
                text = engine.execute(cmd, channel)
                if text is not None:
                    channel.write(success(cmd.id, text))
            except GtpError as e:
                channel.write(failure(cmd.id, str(e)))
            except Exception as e:  # a bug must not kill the engine: answer and keep going
                log(f"azgo: internal error in {cmd.name}: {type(e).__name__}: {e}")
                channel.write(failure(cmd.id, f"internal error: {type(e).__name__}"))
            if engine.quit_requested:
                break
            engine.after_response()
    except KeyboardInterrupt:
        pass
    finally:
        engine.stop()
    return 0
