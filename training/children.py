"""Child processes of the training loops (``azgo train``, ``azgo export``) that do not outlive them.

A loop stopped by SIGTERM (or ``kill -9``) used to leave its ``azgo train`` running on, orphaned: a
second loop started on the same run folder then trained beside it into the same files. `run_child`
asks Linux to send the child SIGTERM when the loop dies (``PR_SET_PDEATHSIG``: ``kill -9`` included), so
``azgo train`` saves its checkpoint at the next step and exits; and when the loop stops with an exception
(Ctrl-C) it ends the child the same way and waits for it. Elsewhere than Linux only the second half holds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int):
    def arm() -> None:  # pragma: no cover (runs in the child, between fork and exec)
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # the parent died before the request was made
            os._exit(143)
    return arm


def run_child(cmd: list[str], grace: float = 120.0) -> None:
    """Run ``cmd`` to the end like ``subprocess.run(cmd, check=True)``, but never leave it running
    without this process: SIGTERM to it (then ``grace`` seconds to save, then SIGKILL) if this process
    stops first."""
    proc = subprocess.Popen(cmd, preexec_fn=_die_with_parent(os.getpid()) if sys.platform.startswith("linux") else None)
    try:
        code = proc.wait()
    except BaseException:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        raise
    if code != 0:
        raise subprocess.CalledProcessError(code, cmd)

