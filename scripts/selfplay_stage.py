"""One generation's self-play of a recipe, for a fixed time, on this machine: for a lent many-core machine.

``azgo loop --recipe`` plays a generation's self-play itself (stage 1). When another machine has more
cores for a few minutes only (and none of the run folder), this plays the same games there: the recipe's
komi draws, handicap share and forked starts (``selfplay.openings``, read from the recipe's sources as the
loop reads them), the network given, and the seed the loop would use for that generation and size. It
stops at the deadline (finished games kept, the games in progress dropped) and packs what it played::

    python3 scripts/selfplay_stage.py --recipe recipes/campaign19.toml --generation 2 \\
        --net NET19.onnx --size 19 --workers 16 --minutes 8 --out games/ --pack OUT/gen0002-19.tar.xz

Unpack the archive into ``RUN/genNNNN/selfplay/<size>/`` of the run folder before the loop reaches that
generation's self-play: the stage counts the games there and plays only the rest (its seed moved on by
the games it finds, so that no game is played twice). Prints ``RESULT selfplay_games N`` and
``RESULT selfplay_games_per_core_minute X``.
"""

from __future__ import annotations

import glob
import multiprocessing as mp
import os
import sys
import tarfile
import tempfile
import time

import click


def _play(out: str, count: int, workers: int, cfg, net: str, seed: int, device: str) -> None:
    from azgo.training.workers import run_selfplay
    run_selfplay(out, count, workers, cfg, net=net, seed=seed, show_progress=False, device=device)


@click.command()
@click.option("--recipe", "recipe_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--generation", required=True, type=click.IntRange(min=1), help="The generation these games belong to.")
@click.option("--net", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The best network (fp32 .onnx; its .int8.onnx beside it for int8 self-play).")
@click.option("--size", default=19, show_default=True, type=click.IntRange(7, 19))
@click.option("--workers", default=os.cpu_count() or 1, show_default=True, type=click.IntRange(min=1))
@click.option("--minutes", default=8.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Stop (finished games kept) after this long.")
@click.option("--games", type=click.IntRange(min=1), help="At most this many games (default: the recipe's share of this size).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False))
@click.option("--pack", type=click.Path(dir_okay=False), help="Also write the games as one .tar.xz here.")
@click.option("--device", default="cpu", show_default=True)
def main(recipe_file, generation, net, size, workers, minutes, games, out_dir, pack, device):
    from azgo.training.recipe import load_recipe
    from azgo.training.recipe_run import RecipeRun
    from azgo.training.workers import archive_games

    recipe = load_recipe(recipe_file).at_generation(generation)  # with its [[from_generation]] entries due by then
    count = games or recipe.games_per_size().get(size)
    if not count:
        raise click.BadParameter(f"the recipe plays no {size}x{size} self-play", param_hint="--size")
    run = RecipeRun(recipe, tempfile.mkdtemp(prefix="selfplay-stage-"), workers=workers)
    cfg = run.selfplay_config(size, net=os.path.abspath(net))
    seed = run._seed(generation, size)
    have = len(archive_games(out_dir)) if os.path.isdir(out_dir) else 0
    print(f"recipe {recipe.name}, generation {generation}, {size}x{size}: {have} -> {count} games, "
          f"{workers} workers, {len(cfg.openings)} forked starts, {minutes:g} min", file=sys.stderr, flush=True)
    t0 = time.time()
    proc = mp.get_context("spawn").Process(target=_play, args=(out_dir, count, workers, cfg, os.path.abspath(net),
                                                                seed, device))
    proc.start()
    deadline = t0 + minutes * 60
    last = 0.0
    while proc.is_alive() and time.time() < deadline:
        time.sleep(2)
        if time.time() - last > 60:
            last = time.time()
            print(f"  {(last - t0) / 60:.1f} min: {len(archive_games(out_dir)) - have} games", file=sys.stderr, flush=True)
    if proc.is_alive():
        proc.kill()  # its workers see their parent gone and stop between network calls, finished games kept
        time.sleep(3)
    spent = time.time() - t0
    files = archive_games(out_dir)
    played = len(files) - have
    if pack:
        tmp = pack + ".tmp"
        with tarfile.open(tmp, "w:xz") as tar:
            for f in files:
                tar.add(f, arcname=os.path.basename(f))
        os.replace(tmp, pack)
    left = glob.glob(os.path.join(out_dir, ".*.tmp"))
    print(f"{played} games in {spent / 60:.1f} min on {workers} workers ({len(left)} unfinished files left)",
          file=sys.stderr, flush=True)
    print(f"RESULT selfplay_games {played}")
    print(f"RESULT selfplay_games_per_core_minute {played / max(spent / 60 * workers, 1e-9):.3f}")


if __name__ == "__main__":
    main()
