"""Self-play on a Ray cluster: ``azgo selfplay --ray ...`` and ``azgo loop --ray ...`` (extra ``azgo[cluster]``).

The driver (the process running ``azgo selfplay``/``azgo loop``) owns the archive folder; nothing else
needs it, so the machines share no file system. Each worker is a Ray actor (`SelfPlayActor`, one CPU,
its own onnxruntime session with ``threads`` threads, 1 by default) on any machine of the cluster;
every machine needs this azgo installed.

* Network: the driver reads the network file (``--net``, or the archive's ``best.onnx``) and puts its
  bytes into Ray's object store once per change (``ray.put``; a promotion in ``azgo loop``); every actor
  gets that one object, writes it to a private temporary file and loads it.
* Games: an actor plays ``concurrent_games`` games at a time in a background thread (a
  `SelfPlayRunner`, leaves of all its games batched into one network call, exactly as a local worker)
  and keeps finished games as SGF bytes in a queue; the driver keeps one ``games(timeout)`` call
  outstanding per actor, and writes what comes back into the archive with the local workers' writer
  (:func:`azgo.training.selfplay.write_game_file`: the same atomic files, names and properties), so
  ``azgo train`` reads them unchanged. Worker names in the file names are ``rayK``.
* Target: ``games`` is a target count of games in the archive, as for local workers: the games missing
  are split between the actors, each plays its share to the end (no game is cut off at the target, so
  short games are not favoured), and the driver then halts them.
* Faults: an actor that dies (its process killed, its machine lost) loses only the games it had in
  progress: the driver sees ``ray.exceptions.RayActorError`` on its outstanding call, starts a
  replacement actor with a fresh seed for the rest of the dead one's share, and goes on until the
  target is met. Only the driver writes, one whole file at a time, so there is never a partial file;
  a game whose seed the archive already holds is not written twice, and none beyond the target.

Addresses (``--ray``): ``auto`` joins the cluster that ``ray start`` runs on this machine (Ray's own
meaning of ``address="auto"``: a ConnectionError when there is none); ``local`` is ``ray.init()`` with
no address, Ray's default: it joins the cluster named by ``RAY_ADDRESS`` or started by ``ray start`` on
this machine if there is one, else starts a one-machine Ray on this machine's cores for this command
(stopped when it ends); anything else is a cluster address, ``HOST:6379`` (the head's GCS port, from
``ray start --head``) or ``ray://HOST:10001`` (Ray Client). When Ray is already initialised in this
process (tests, notebooks), that session is used.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import sys
import tempfile
import threading
import time
import traceback
from typing import Callable

import click

from azgo.engine.atomic import atomic_write, remove_orphans
from .selfplay import SelfPlayConfig, SelfPlayRunner, write_game_file
from .archive import BEST_NET, archive_games, eval_config, net_id, network_file

CLUSTER_HINT = "python3 -m pip install 'azgo[cluster]'  (Ray 2.x)"
GAMES_WAIT_S = 1.0          # an actor's games() call returns after at most this long without a game
MAX_EXTRA_ACTORS = 10       # replacements allowed beyond 3 per worker before the driver gives up
_SEED_RE = re.compile(r"-(\d{10})-[0-9a-f]{8}\.sgf$")


def require_ray():
    """The ``ray`` module; ClickException naming the ``azgo[cluster]`` extra when it is missing."""
    try:
        import ray
    except ImportError as e:
        raise click.ClickException(f"--ray needs Ray, which is not installed here ({e}): {CLUSTER_HINT}") from None
    return ray


def connect(address: str):
    """Initialise Ray for ``address`` (see the module docstring) unless it already is; returns ``ray``."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    try:
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=True)
        else:
            ray.init(address=address, log_to_driver=True)
    except ConnectionError as e:
        hint = ("no Ray cluster runs on this machine: start one with `ray start --head`, or use --ray local"
                if address == "auto" else f"cannot reach the Ray cluster at {address}")
        raise click.ClickException(f"--ray {address}: {hint} ({e})") from None
    return ray


class SelfPlayActor:
    """One self-play worker inside a Ray actor (wrapped by ``ray.remote`` in `RaySelfPlay`).

    ``start`` loads a network (bytes) and starts a thread playing a number of games; ``games`` hands
    back the finished ones; ``halt`` stops the thread and drops what was not handed back.
    """

    def __init__(self, cfg: SelfPlayConfig, threads: int, device: str, name: str) -> None:
        self.cfg, self.threads, self.device, self.name = cfg, threads, device, name
        self.evaluator = None
        self.digest = None
        self.thread: threading.Thread | None = None
        self.stop = threading.Event()
        self.finished: queue.Queue = queue.Queue()
        self.error: str | None = None

    def pid(self) -> int:
        """This actor's process id (tests kill it)."""
        return os.getpid()

    def start(self, net: bytes, ident: str, seed: int, games: int) -> None:
        """Play ``games`` games to the end with the network ``net`` (ONNX bytes, named ``ident`` in the
        games), from runner seed ``seed``.

        Games in progress are dropped; finished ones wait for ``games``. A failure (an unusable network or
        device) is kept and raised by the next ``games`` call.
        """
        self._stop_thread()
        self.error = None
        try:
            digest = hashlib.sha256(net).hexdigest()
            if digest != self.digest:
                from azgo.nets.evaluator import OnnxEvaluator
                # The file lives only while onnxruntime loads it: an actor killed by Ray runs no finaliser,
                # so a folder kept for the actor's life was left behind in the temp folder.
                with tempfile.TemporaryDirectory(prefix="azgo-ray-net-") as tmp:
                    path = os.path.join(tmp, f"{digest[:16]}.onnx")
                    atomic_write(path, net)
                    evaluator = OnnxEvaluator(path, eval_config(self.threads, seed, self.device, self.cfg.precision))
                    evaluator.file_sha256  # hashed now, while the file is there
                self.evaluator, self.digest = evaluator, digest
        except Exception as e:  # NetError, OSError
            self.error = f"{self.name}: {e}"
            return
        self.stop.clear()
        self.thread = threading.Thread(target=self._play, args=(ident, seed, games), daemon=True)
        self.thread.start()

    def _play(self, ident: str, seed: int, games: int) -> None:
        runner = SelfPlayRunner(self.evaluator, self.cfg, seed=seed, net_id=ident, out_dir=None, worker=self.name)

        def hand_over(stats) -> None:
            from azgo.engine.sgf import write_sgf
            while runner.finished:
                _, rec = runner.finished.pop(0)
                self.finished.put((write_sgf(rec), int(rec.root_props["AZS"]), stats.moves, stats.evals))
                stats.moves = stats.evals = 0

        try:
            runner.play(games, progress=hand_over, should_stop=self.stop.is_set)
        except Exception:
            self.error = f"{self.name}: self-play failed:\n{traceback.format_exc()}"

    def games(self, timeout: float = GAMES_WAIT_S) -> tuple[list[tuple[bytes, int, int, int]], bool]:
        """``(finished games, still playing)``: the games as ``(sgf bytes, game seed, moves, evaluations)``,
        waiting up to ``timeout`` s for the first; raises RuntimeError when starting or playing failed."""
        out = []
        deadline = time.monotonic() + timeout
        while not out and self.error is None and self.thread is not None:
            try:
                out.append(self.finished.get(timeout=min(0.1, max(deadline - time.monotonic(), 0.0))))
            except queue.Empty:
                if time.monotonic() >= deadline or not self.thread.is_alive():
                    break
        playing = self.thread is not None and self.thread.is_alive()  # when not, its games are all queued
        while True:
            try:
                out.append(self.finished.get_nowait())
            except queue.Empty:
                break
        if self.error is not None and not out:
            raise RuntimeError(self.error)
        return out, playing

    def _stop_thread(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def halt(self) -> None:
        """Stop playing (games in progress are dropped) and drop finished games not handed back."""
        self._stop_thread()
        while True:
            try:
                self.finished.get_nowait()
            except queue.Empty:
                break


class RaySelfPlay:
    """The driver: Ray actors playing self-play games into an archive folder on this machine.

    ``workers``: actors (None: one per CPU of the cluster); ``threads``: onnxruntime threads (and
    Ray CPUs) per actor; ``device``: where each actor's network runs. The actors live until `close`
    and keep their network between `play` calls (``azgo loop`` sends a new one after a promotion).
    """

    def __init__(self, address: str, cfg: SelfPlayConfig, workers: int | None = None, threads: int = 1,
                 device: str = "cpu", log: Callable[[str], None] | None = None) -> None:
        self.ray = connect(address)
        self.cfg, self.threads, self.device = cfg, threads, device
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        self.workers = workers or max(1, cpus // threads)
        if self.workers * threads > cpus:
            self.log(f"warning: {self.workers} actors x {threads} CPUs but the Ray cluster has {cpus}: "
                     "some actors wait for CPUs")
        self._cls = self.ray.remote(num_cpus=threads, max_restarts=0)(SelfPlayActor)
        self.actors: list = [None] * self.workers
        self.started = 0          # actors started with a network (each gets its own seed)
        self.replaced = 0         # actors replaced after dying
        self._net_key = None      # (path, mtime, size) of the network now in the object store
        self._net_ref = None
        self._net_ident = ""
        for i in range(self.workers):  # the actors start (imports, a process each) while the driver goes on
            self._spawn(i)

    # ----------------------------------------------------------------- actors
    def _spawn(self, i: int):
        self.actors[i] = self._cls.remote(self.cfg, self.threads, self.device, f"ray{i}")
        return self.actors[i]

    def _start(self, i: int, seed: int, games: int) -> None:
        """(Re)start actor i on the current network for ``games`` games, with a runner seed (so game
        seeds) no other actor of this pool got."""
        runner_seed = (seed * 7919 + self.started * 104_729) & 0x7FFFFFFF
        self.started += 1
        self.actors[i].start.remote(self._net_ref, self._net_ident, runner_seed, games)

    def pids(self) -> list[int]:
        """The process id of every live actor (for tests and diagnostics)."""
        return self.ray.get([a.pid.remote() for a in self.actors if a is not None])

    def _refresh_net(self, path: str) -> bool:
        """Put the network file into the object store when it changed; True when it did.

        With ``precision`` int8 (or auto) the file sent is the network's ``.int8.onnx`` sibling."""
        path = network_file(path, self.cfg.precision)
        try:
            st = os.stat(path)
        except OSError:
            raise click.ClickException(f"no network at {path}") from None
        key = (path, st.st_mtime_ns, st.st_size)
        if key == self._net_key:
            return False
        with open(path, "rb") as f:
            data = f.read()
        self._net_ref = self.ray.put(data)  # once per network: every actor reads this one object
        self._net_ident = net_id(path)
        self._net_key = key
        return True

    # ----------------------------------------------------------------- the driver loop
    def play(self, out_dir: str, games: int, net: str | None = None, archive: str | None = None,
             seed: int | None = None, show_progress: bool = True,
             on_game: Callable[[str, int], None] | None = None) -> int:
        """Fill ``out_dir`` up to ``games`` games (0: until interrupted); returns the games written now.

        The games to play are split between the actors as between local workers; each actor plays its
        share to the end (so no game is cut off at the target, and short games are not favoured). An
        actor that dies is replaced and the replacement plays what the dead one had not handed back.
        The network is ``net``, else ``archive/best.onnx``; when that file changes, every actor restarts
        on the new network with the rest of its share (its games in progress are dropped).
        ``on_game(path, written)`` runs after each game is written.

        (Longer than 80 lines on purpose: one loop over the actors' replies, whose bookkeeping, the games each
        actor still owes, the seeds seen, the pending calls and the progress bar, every branch updates.)
        """
        ray = self.ray
        from ray.exceptions import RayActorError, RayTaskError
        os.makedirs(out_dir, exist_ok=True)
        remove_orphans(out_dir)
        have = archive_games(out_dir)
        todo = max(0, games - len(have)) if games else 0
        if games and todo == 0:
            return 0
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "little") & 0x7FFFFFF
        seed = seed + len(have) * 31  # as local workers: a resumed run does not replay its games
        seen = {int(m.group(1)) for m in map(_SEED_RE.search, have) if m}
        path = net or os.path.join(archive or out_dir, BEST_NET)
        self._refresh_net(path)
        n = self.workers
        share = [todo // n + (1 if i < todo % n else 0) for i in range(n)] if games else [2 ** 62] * n
        left = list(share)  # games actor i still owes (its share minus the games it handed back)
        pending: dict = {}

        def launch(i: int) -> None:
            self._start(i, seed, left[i])
            pending[self.actors[i].games.remote()] = i

        for i in range(n):
            if self.actors[i] is None:
                self._spawn(i)
            if left[i]:
                launch(i)
        bar = _progress_bar(todo, show_progress)
        written, moves, evals, t0 = 0, 0, 0, time.time()
        try:
            while not games or written < todo:
                if self._refresh_net(path):
                    self.log(f"new network {self._net_ident}: sent to the actors")
                    for i in range(n):
                        if left[i] > 0:
                            self._start(i, seed, left[i])
                if not pending:  # cannot happen: written + sum(left) == todo, and owing actors are polled
                    raise click.ClickException(f"Ray self-play: {todo - written} games missing and no actor playing")
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=5.0)
                for ref in ready:
                    i = pending.pop(ref)
                    try:
                        batch, playing = ray.get(ref)
                    except RayActorError as e:
                        self._replace(i, e)
                        launch(i)
                        continue
                    except RayTaskError as e:
                        raise click.ClickException(f"Ray self-play actor failed: {getattr(e, 'cause', e)}") from None
                    for data, game_seed, m, ev in batch:
                        moves, evals = moves + m, evals + ev
                        if games and written >= todo:  # (after a restart on a new network) target met
                            break
                        if game_seed in seen:  # not by construction; the actor then plays one more
                            continue
                        left[i] -= 1
                        out = write_game_file(out_dir, data, f"ray{i}", game_seed)
                        seen.add(game_seed)
                        written += 1
                        if bar is not None:
                            el = max(time.time() - t0, 1e-9)
                            bar.update(1)
                            bar.set_postfix(moves_s=f"{moves / el:.0f}", evals_s=f"{evals / el:.0f}")
                        if on_game is not None:
                            on_game(out, written)
                    if left[i] > 0 and playing:
                        pending[self.actors[i].games.remote()] = i
                    elif left[i] > 0:  # its runner is done but games were skipped: play the rest anew
                        launch(i)
        finally:
            if bar is not None:
                bar.close()
            self._halt_all()
        return written

    def _replace(self, i: int, error: Exception) -> None:
        self.replaced += 1
        if self.replaced > 3 * self.workers + MAX_EXTRA_ACTORS:
            raise click.ClickException(f"Ray self-play actors keep dying ({self.replaced} replaced); "
                                       f"last: {error}")
        self.log(f"self-play actor ray{i} died ({type(error).__name__}); its games in progress are lost, "
                 "starting a replacement")
        self._spawn(i)

    def _halt_all(self) -> None:
        """Stop every live actor's games (they stay, with their network, for the next `play`)."""
        refs = [a.halt.remote() for a in self.actors if a is not None]
        try:
            self.ray.get(refs, timeout=60)
        except Exception:  # a dead actor: replaced at the next play
            for i, a in enumerate(self.actors):
                try:
                    self.ray.get(a.pid.remote(), timeout=10)
                except Exception:
                    self.actors[i] = None

    def close(self) -> None:
        """Kill the actors (the Ray session itself stays as it is)."""
        for a in self.actors:
            if a is not None:
                self.ray.kill(a)
        self.actors = [None] * self.workers


def _progress_bar(todo: int, show: bool):
    if not show:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=todo or None, unit="game", file=sys.stderr, dynamic_ncols=True)
