"""``azgo selfplay``: self-play worker processes writing into a shared SGF archive folder.

Each worker is an independent process (one onnxruntime thread by default) running a
``SelfPlayRunner``; it writes finished games into the archive atomically and, when no ``--net`` is
given, plays with the archive's current best network ``ARCHIVE/best.onnx``, re-reading it when it
changes (the training loop replaces it atomically). Workers on several machines can therefore share
one archive folder (a network file system) with the trainer on one of them. ``--games N`` is a target
count of games in the output folder: a worker killed at any moment loses only the game in progress
(half-written files are ``.*.tmp`` and are ignored and removed), and running the same command again
plays only the missing games.

``--device`` (auto, cpu, cuda, cuda:N) says where each worker's network runs (see
``azgo.nets.evaluator.choose_providers``); when it resolves to CUDA on this machine, the default
``--concurrent-games`` is ``GPU_CONCURRENT_GAMES`` instead of 16, so that each network call carries
4x the leaves (a GPU's time per call grows little with the batch at these sizes; not measured on a
GPU here).

``--ray auto|local|ADDRESS`` plays with Ray actors instead of local processes: see
:mod:`azgo.training.ray_selfplay`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import time

import click

from azgo.engine.atomic import remove_orphans

from .archive import BEST_NET, _load, archive_games, eval_config, net_id, network_file  # noqa: F401
from .selfplay import SelfPlayConfig, SelfPlayRunner, load_openings

GPU_CONCURRENT_GAMES = 64  # default games per worker when its network runs on CUDA (not tuned on a GPU here)


def default_concurrent_games(device: str) -> int:
    """Games per worker by default: ``GPU_CONCURRENT_GAMES`` when ``device`` is CUDA on this machine."""
    import onnxruntime as ort

    from azgo.nets.evaluator import CPU_PROVIDER, choose_providers
    try:
        on_gpu = choose_providers(device, ort.get_available_providers())[0] != CPU_PROVIDER
    except ValueError:  # explicit cuda without the provider: the workers will say so
        on_gpu = False
    return GPU_CONCURRENT_GAMES if on_gpu else SelfPlayConfig.concurrent_games


_STOP = {"asked": False}  # set by SIGTERM in a worker process


def _stop_on_sigterm(signum, frame) -> None:
    """The first SIGTERM asks the worker to stop at its next check (between network calls), so that play()'s
    cleanup closes outside opponents in order; a second one exits at once."""
    if _STOP["asked"]:
        raise SystemExit(0)
    _STOP["asked"] = True


def worker_main(worker: int, out_dir: str, net: str | None, archive: str | None, games: int, cfg: SelfPlayConfig,
                seed: int, threads: int, queue=None, chunk: int | None = None, device: str = "cpu") -> None:
    """One worker process: play ``games`` games (0 = until killed) in chunks, reporting to ``queue``."""
    done = 0
    chunk = chunk or cfg.concurrent_games
    parent = os.getppid()
    _STOP["asked"] = False
    signal.signal(signal.SIGTERM, _stop_on_sigterm)  # terminated: stop between network calls, opponents closed

    def orphaned() -> bool:  # terminated, or the parent (azgo selfplay / azgo loop) was killed: stop, keep games
        return _STOP["asked"] or os.getppid() != parent
    current, evaluator, ident, mtime = None, None, "", None
    round_no = 0
    while (games == 0 or done < games) and not orphaned():
        path = net or os.path.join(archive, BEST_NET)
        try:
            m = os.stat(path).st_mtime_ns
        except OSError:
            if queue is not None:
                queue.put(("error", worker, f"no network at {path}"))
            return
        if path != current or m != mtime:
            try:
                evaluator = _load(path, threads, seed + worker, device, cfg.precision)
            except ValueError as e:  # NetError: unusable network or device
                if queue is None:
                    raise
                queue.put(("error", worker, str(e)))
                return
            ident, current, mtime = net_id(str(evaluator.path)), path, m  # the file played (int8 or not)
        n = chunk if games == 0 else min(chunk, games - done)
        runner = SelfPlayRunner(evaluator, cfg, seed=(seed * 7919 + worker * 104_729 + round_no * 13) & 0x7FFFFFFF,
                                net_id=ident, out_dir=out_dir, worker=f"w{worker}")
        round_no += 1

        def progress(stats, _runner=runner):
            if queue is not None:
                queue.put(("game", worker, stats.moves, stats.evals, stats.seconds))
                stats.moves = 0
                stats.evals = 0

        stats = runner.play(n, progress=progress, should_stop=orphaned)
        if stats.games == 0 and stats.dropped:  # every game lost to a failing outside opponent: say so, stop
            if queue is not None:
                queue.put(("error", worker, f"{stats.dropped} games against the opponent dropped, none finished "
                                            "(see the messages above)"))
                return
            raise RuntimeError(f"{stats.dropped} games against the opponent dropped, none finished")
        done += stats.games


def run_selfplay(out_dir: str, games: int, workers: int, cfg: SelfPlayConfig, net: str | None = None,
                 archive: str | None = None, seed: int | None = None, threads: int = 1,
                 show_progress: bool = True, device: str = "cpu") -> int:
    """Fill ``out_dir`` up to ``games`` games with ``workers`` processes; returns games played now.

    ``device``: where each worker's network runs (auto, cpu, cuda, cuda:N).
    """
    os.makedirs(out_dir, exist_ok=True)
    remove_orphans(out_dir)
    have = len(archive_games(out_dir))
    todo = max(0, games - have) if games else 0
    if games and todo == 0:
        return 0
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little") & 0x7FFFFFF
    seed = seed + have * 31  # a resumed run does not replay the games it already has
    per = [todo // workers + (1 if i < todo % workers else 0) for i in range(workers)] if games else [0] * workers
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker_main, args=(i, out_dir, net, archive, per[i], cfg, seed, threads, queue),
                         kwargs={"device": device}, daemon=True) for i in range(workers) if per[i] or not games]
    for p in procs:
        p.start()
    bar = None
    if show_progress:
        try:
            from tqdm import tqdm
            bar = tqdm(total=todo or None, unit="game", file=sys.stderr, dynamic_ncols=True)
        except ImportError:  # pragma: no cover
            bar = None
    played, moves, evals = 0, 0, 0
    t0 = time.time()
    try:
        while any(p.is_alive() for p in procs) or not queue.empty():
            try:
                msg = queue.get(timeout=0.5)
            except Exception:
                continue
            if msg[0] == "error":
                raise click.ClickException(f"worker {msg[1]}: {msg[2]}")
            played += 1
            moves += msg[2]
            evals += msg[3]
            el = max(time.time() - t0, 1e-9)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(moves_s=f"{moves / el:.0f}", evals_s=f"{evals / el:.0f}")
    finally:
        for p in procs:
            p.join(timeout=1)
            if p.is_alive():
                p.terminate()
        if bar is not None:
            bar.close()
    return played


@click.command("selfplay")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Archive folder for the SGF games.")
@click.option("--net", type=click.Path(dir_okay=False, exists=True), help="Network (default: OUT/best.onnx, re-read when it changes).")
@click.option("--archive", type=click.Path(file_okay=False), help="Folder holding best.onnx (default: --out).")
@click.option("--games", default=64, show_default=True, type=click.IntRange(min=0), help="Target number of games in OUT (0 = play until killed).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Worker processes (with --ray: Ray actors, default one per CPU of the cluster).")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(min=1), help="onnxruntime threads per worker.")
@click.option("--size", default=9, show_default=True, type=click.IntRange(7, 19))
@click.option("--komi", default=7.5, show_default=True, type=float)
@click.option("--full-visits", default=SelfPlayConfig.full_visits, show_default=True, type=click.IntRange(min=1))
@click.option("--cheap-visits", default=SelfPlayConfig.cheap_visits, show_default=True, type=click.IntRange(min=1))
@click.option("--full-prob", default=SelfPlayConfig.full_prob, show_default=True, type=click.FloatRange(0, 1),
              help="Share of moves searched fully and recorded (playout cap randomization).")
@click.option("--resign-threshold", default=SelfPlayConfig.resign_threshold, show_default=True, type=click.FloatRange(0, 1))
@click.option("--no-resign-fraction", default=SelfPlayConfig.no_resign_fraction, show_default=True, type=click.FloatRange(0, 1))
@click.option("--concurrent-games", type=click.IntRange(min=1),
              help=f"Games per worker advancing together (their leaves share network calls)  "
                   f"[default: {SelfPlayConfig.concurrent_games}; {GPU_CONCURRENT_GAMES} when the network runs on CUDA]")
@click.option("--max-moves", type=click.IntRange(min=1), help="Maximum game length (default 2*size*size).")
@click.option("--precision", type=click.Choice(["fp32", "int8", "auto"]), default="fp32", show_default=True,
              help="int8: play with the network's .int8.onnx sibling (python -m azgo.nets.quantize; 2-3x the "
                   "positions a second on the CPU); auto: int8 where that sibling exists.")
@click.option("--openings", multiple=True, type=click.Path(exists=True),
              help="SGF games (file or folder, repeatable) whose openings start some games (forked starts): "
                   "a game drawn to fork begins with the first 1..--opening-moves moves of a random one of them, "
                   "played without search and not trained on (AZT[0]).")
@click.option("--opening-moves", default=8, show_default=True, type=click.IntRange(min=1),
              help="The longest opening taken from an --openings game.")
@click.option("--opening-fraction", default=0.5, show_default=True, type=click.FloatRange(0, 1),
              help="Share of the games that start from an --openings opening (with --openings).")
@click.option("--komi-stdev", default=0.0, show_default=True, type=click.FloatRange(min=0),
              help="Each game's komi drawn from a normal spread of this many points around --komi (rounded to 0.5).")
@click.option("--komi-wide-fraction", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Share of the games whose komi is drawn uniformly over --komi-range instead.")
@click.option("--komi-range", nargs=2, type=float, default=SelfPlayConfig.komi_range, show_default=True,
              metavar="LOW HIGH", help="The komi drawn stays within this range.")
@click.option("--handicap-fraction", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Share of the games started from fixed handicap stones (komi --handicap-komi, White first).")
@click.option("--handicap-stones", nargs=2, type=click.IntRange(2, 9), default=SelfPlayConfig.handicap_stones,
              show_default=True, metavar="FEWEST MOST", help="Handicap stones of such a game (capped by the board).")
@click.option("--handicap-komi", default=SelfPlayConfig.handicap_komi, show_default=True, type=float)
@click.option("--gumbel-m", default=0, show_default=True, type=click.IntRange(min=0),
              help="Gumbel root search: sample this many root moves and spend the visits by sequential halving; "
                   "full searches record the improved policy as their target (0: PUCT with Dirichlet noise).")
@click.option("--opponent", metavar="COMMAND", default="",
              help="A GTP engine's command line (e.g. \"gnugo --mode gtp --chinese-rules --capture-all-dead\"): "
                   "--opponent-fraction of the games are azgo against it; its moves are recorded but not trained "
                   "on (AZT[0]), every azgo move is a full search.")
@click.option("--opponent-fraction", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Share of the games against --opponent.")
@click.option("--opponent-name", default="", help="The opponent's name in the records (default: its program).")
@click.option("--seed", type=int, help="Random seed (default: fresh).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--device", default="auto", show_default=True,
              help="auto | cpu | cuda | cuda:N: where each worker's network runs (auto: CUDA when onnxruntime-gpu "
                   "has it, pip install 'azgo[gpu]'; else the CPU).")
@click.option("--ray", "ray_address", metavar="auto|local|ADDRESS",
              help="Play with Ray actors (extra azgo[cluster]): auto = the cluster `ray start` runs here, "
                   "local = Ray's default ray.init() (a cluster running here, else a one-machine Ray started now), else "
                   "HOST:6379 or ray://HOST:10001. Games come back "
                   "to this process, which writes them into OUT; no shared folder needed.")
@click.pass_context
def selfplay(ctx, out_dir, net, archive, games, workers, threads, size, komi, full_visits, cheap_visits, full_prob,
             resign_threshold, no_resign_fraction, concurrent_games, max_moves, precision, openings, opening_moves,
             opening_fraction, komi_stdev, komi_wide_fraction, komi_range, handicap_fraction, handicap_stones,
             handicap_komi, gumbel_m, opponent, opponent_fraction, opponent_name, seed, no_progress, device,
             ray_address):
    """Play self-play games into an SGF archive folder (resumable; several workers or machines)."""
    from click.core import ParameterSource
    from azgo.nets.evaluator import parse_device
    try:
        parse_device(device)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--device") from None
    if concurrent_games is None:
        concurrent_games = SelfPlayConfig.concurrent_games if ray_address else default_concurrent_games(device)
    forks: tuple[tuple[int, ...], ...] = ()
    if openings:
        try:
            forks = load_openings(openings, size, opening_moves)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--openings") from None
        click.echo(f"{len(forks)} openings; {opening_fraction:g} of the games start from one", err=True)
    try:
        cfg = SelfPlayConfig(size=size, komi=komi, full_visits=full_visits, cheap_visits=cheap_visits,
                             full_prob=full_prob, resign_threshold=resign_threshold,
                             no_resign_fraction=no_resign_fraction, concurrent_games=concurrent_games,
                             max_moves=max_moves, precision=precision, openings=forks,
                             opening_fraction=opening_fraction if forks else 0.0, komi_stdev=komi_stdev,
                             komi_wide_fraction=komi_wide_fraction, komi_range=tuple(komi_range),
                             handicap_fraction=handicap_fraction, handicap_stones=tuple(handicap_stones),
                             handicap_komi=handicap_komi, gumbel_m=gumbel_m, opponent=opponent,
                             opponent_fraction=opponent_fraction, opponent_name=opponent_name)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if net is None:
        best = os.path.join(archive or out_dir, BEST_NET)
        if not os.path.isfile(best):
            raise click.ClickException(f"no --net given and no {best}: pass --net or put a network there")
    if ray_address:
        from .ray_selfplay import RaySelfPlay
        explicit = ctx.get_parameter_source("workers") != ParameterSource.DEFAULT
        pool = RaySelfPlay(ray_address, cfg, workers=workers if explicit else None, threads=threads, device=device)
        try:
            n = pool.play(out_dir, games, net=net, archive=archive or out_dir, seed=seed, show_progress=not no_progress)
        finally:
            pool.close()
        click.echo(f"played {n} games with {pool.workers} Ray actors ({pool.replaced} replaced); "
                   f"{len(archive_games(out_dir))} games in {out_dir}", err=True)
        return
    n = run_selfplay(out_dir, games, workers, cfg, net=net, archive=archive or out_dir, seed=seed,
                     threads=threads, show_progress=not no_progress, device=device)
    click.echo(f"played {n} games; {len(archive_games(out_dir))} games in {out_dir}", err=True)
