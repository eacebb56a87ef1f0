"""Child processes of the training loops end with the loop (kill -9 of the loop included)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from azgo.training.children import run_child


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its (new) parent to reap it has ended too
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def test_a_failing_child_raises():
    with pytest.raises(subprocess.CalledProcessError):
        run_child([sys.executable, "-c", "raise SystemExit(3)"])
    run_child([sys.executable, "-c", "pass"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_child_ends_when_the_loop_is_killed(tmp_path):
    pid_file = tmp_path / "child.pid"
    child = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    parent = textwrap.dedent(f"""
        import sys
        from azgo.training.children import run_child
        run_child([sys.executable, "-c", {child!r}])
    """)
    loop = subprocess.Popen([sys.executable, "-c", parent])
    try:
        deadline = time.time() + 30
        while not (pid_file.exists() and pid_file.read_text()) and time.time() < deadline:
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        assert _alive(pid)
        loop.send_signal(signal.SIGKILL)  # no handler can run: the kernel's request must end the child
        loop.wait()
        deadline = time.time() + 10
        while _alive(pid) and time.time() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "the training child outlived its loop"
    finally:
        if loop.poll() is None:
            loop.kill()
