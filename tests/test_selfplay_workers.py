"""Self-play worker processes (``azgo.training.workers``): how a worker stops when it is terminated."""

import os
import signal
import subprocess
import sys
import time

import pytest

import fake_gtp
from azgo.nets.registry import default_net_path
from azgo.training.workers import _STOP, _stop_on_sigterm

WORKER = """
import sys
from azgo.training.selfplay import SelfPlayConfig
from azgo.training.workers import worker_main
cfg = SelfPlayConfig(size=9, full_visits=2, cheap_visits=2, concurrent_games=2, opponent=sys.argv[3],
                     opponent_fraction=1.0)
worker_main(0, sys.argv[1], sys.argv[2], None, 0, cfg, seed=1, threads=1)
print("worker returned", flush=True)
"""


def test_the_first_sigterm_asks_the_second_exits():
    _STOP["asked"] = False
    try:
        _stop_on_sigterm(signal.SIGTERM, None)  # returns: the worker stops at its next check
        assert _STOP["asked"]
        with pytest.raises(SystemExit):
            _stop_on_sigterm(signal.SIGTERM, None)
    finally:
        _STOP["asked"] = False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent's parent) counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_terminated_worker_stops_its_opponents_and_returns(tmp_path):
    """SIGTERM while every game waits on an outside opponent that never answers: the worker leaves play() through
    its cleanup (the opponent process is killed), returns normally with exit status 0 and prints nothing about
    ignored exceptions; no half-written game is left."""
    marker = tmp_path / "hanging"
    opponent = f"{sys.executable} {fake_gtp.PATH} {marker} hang"
    out = tmp_path / "games"
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(out), str(default_net_path(9)), opponent],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.time()
        while not marker.exists() and time.time() - t0 < 60 and proc.poll() is None:
            time.sleep(0.1)
        assert marker.exists(), "the opponent was never asked for a move"
        opp_pid = int(marker.read_text())
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert "worker returned" in stdout
    assert "Exception ignored" not in stderr and "Traceback" not in stderr, stderr
    t0 = time.time()
    while _alive(opp_pid) and time.time() - t0 < 10:
        time.sleep(0.1)
    assert not _alive(opp_pid), "the opponent outlived its worker"
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
