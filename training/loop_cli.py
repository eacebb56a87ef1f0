"""The ``azgo loop`` command: a recipe's generations (``--recipe``, `azgo.training.recipe_run`) or the plain loop
of `azgo.training.loop` configured by options.
"""

from __future__ import annotations

import os
import sys

import click

from .loop import Loop, LoopConfig
from .selfplay import SelfPlayConfig


@click.command("loop")
@click.option("--recipe", "recipe_file", type=click.Path(dir_okay=False),
              help="Run the generations of this recipe (TOML, see recipes/README.md); the other settings below "
                   "are then the recipe's, except --generations, --device, --workers and --ray.")
@click.option("--run-dir", type=click.Path(file_okay=False),
              help="With --recipe: the run folder (created or resumed)  [default: runs/<recipe name>]")
@click.option("--plan", is_flag=True, help="With --recipe: print what the next generation will do, and from which "
                                           "state, and stop (nothing is run or written).")
@click.option("--publish", is_flag=True, help="With --recipe: write the run's resume state into the recipe's lineage "
                                              "folder now (the generation in progress, its self-play so far as shards) "
                                              "and stop; before a run folder is lost (a session's end), then commit it.")
@click.option("--promote", "promote_gen", type=click.IntRange(min=0), metavar="G",
              help="With --recipe: make finished generation G, which its gate did not promote, the best network "
                   "(registry entries, cards, lineage) on games decided outside the gate, then publish and stop; "
                   "needs --reason. Stop the loop first; the same loop command then goes on with G as the best.")
@click.option("--package", "package_gen", type=click.IntRange(min=0), metavar="G",
              help="With --recipe: apply the recipe's packaging rule as it stands now ([promotion]: lines, each "
                   "registry file on its own board sizes) to generation G, the best network, and replace the "
                   "registry files it passes, then publish and stop; needs --reason. For a [promotion] changed "
                   "after G's lines were played. Stop the loop first.")
@click.option("--reason", help="With --promote or --package: why, and where the games that decided it are (kept in "
                               "the state, the card and the lineage).")
@click.option("--dir", "folder", type=click.Path(file_okay=False), help="Loop folder (created or resumed); without --recipe.")
@click.option("--generations", type=click.IntRange(min=1),
              help="Stop after this many generations, counted from the first this run folder ran (the same "
                   "command resumes a killed run).")
@click.option("--hours", type=click.FloatRange(min=0, min_open=True), help="Stop starting generations after this much loop time.")
@click.option("--net", default=LoopConfig.net, show_default=True, help="Network size for generation 0.")
@click.option("--size", default=9, show_default=True, type=click.IntRange(7, 19))
@click.option("--komi", default=7.5, show_default=True, type=float)
@click.option("--games-per-generation", default=LoopConfig.games_per_generation, show_default=True, type=click.IntRange(min=1))
@click.option("--workers", default=LoopConfig.workers, show_default=True, type=click.IntRange(min=1),
              help="Self-play processes (with --ray: Ray actors, default one per CPU of the cluster).")
@click.option("--full-visits", default=SelfPlayConfig.full_visits, show_default=True, type=click.IntRange(min=1))
@click.option("--cheap-visits", default=SelfPlayConfig.cheap_visits, show_default=True, type=click.IntRange(min=1))
@click.option("--full-prob", default=SelfPlayConfig.full_prob, show_default=True, type=click.FloatRange(0, 1),
              help="Share of self-play moves searched fully and trained on.")
@click.option("--train-steps", default=LoopConfig.train_steps, show_default=True, type=click.IntRange(min=1))
@click.option("--batch-size", default=LoopConfig.batch_size, show_default=True, type=click.IntRange(min=1))
@click.option("--window", default=LoopConfig.window, show_default=True, type=click.IntRange(min=1), help="Most recent games trained on.")
@click.option("--lr", default=LoopConfig.lr, show_default=True, type=float)
@click.option("--surprise-weight", default=LoopConfig.surprise_weight, show_default=True, type=click.FloatRange(0, 1),
              help="Training samples positions partly by their policy surprise (azgo train --surprise-weight).")
@click.option("--size-mix", default="", metavar="N=W,...",
              help="Board-size weights of the training batches when --extra-games add other sizes "
                   "(azgo train --size-mix, e.g. 19=0.6,13=0.4)  [default: by positions]")
@click.option("--max-final-margin", default=LoopConfig.max_final_margin, show_default=True, type=click.FloatRange(0, 2),
              help="Drop ownership/score targets of games won by more than this share of the board "
                   "(azgo train --max-final-margin; 0: keep all).")
@click.option("--gate-games", default=LoopConfig.gate_games, show_default=True, type=click.IntRange(min=1))
@click.option("--gate-visits", default=LoopConfig.gate_visits, show_default=True, type=click.IntRange(min=1))
@click.option("--gate-threshold", default=LoopConfig.gate_threshold, show_default=True, type=click.FloatRange(0, 1))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--init", "init_ckpt", type=click.Path(exists=True, dir_okay=False),
              help="Generation 0 from this training checkpoint (e.g. a supervised start) instead of random weights.")
@click.option("--extra-games", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Another SGF folder to train on with the loop's archive (repeatable; shares --window).")
@click.option("--device", default="auto", show_default=True,
              help="auto | cpu | cuda | cuda:N for training (torch) and self-play (onnxruntime); gating stays on the CPU.")
@click.option("--anchor", metavar="CMD",
              help="An outside GTP engine (e.g. \"gnugo --mode gtp --level 10\") every generation plays after its "
                   "gate: the ladder's fixed reference.")
@click.option("--anchor-games", default=LoopConfig.anchor_games, show_default=True, type=click.IntRange(min=1))
@click.option("--anchor-visits", default=LoopConfig.anchor_visits, show_default=True, type=click.IntRange(min=1),
              help="The generation's visits a move against the anchor.")
@click.option("--anchor-gate/--no-anchor-gate", default=LoopConfig.anchor_gate, show_default=True,
              help="With --anchor: promote a candidate that won its gate only if it scores against the anchor at "
                   "least as well as the best network (minus --anchor-margin); --no-anchor-gate: report only.")
@click.option("--anchor-margin", default=LoopConfig.anchor_margin, show_default=True, type=click.FloatRange(0, 1),
              help="How much lower a candidate's smoothed anchor score than the best's may be.")
@click.option("--precision", type=click.Choice(["fp32", "int8"]), default="fp32", show_default=True,
              help="int8: quantize every generation's network (calibrated on the newest games) and play self-play "
                   "and the gate with it (2-3x the positions a second on the CPU).")
@click.option("--int8-keep-fp32", "int8_keep_fp32", multiple=True, metavar="NODE",
              help="With --precision int8: a graph node every int8 copy leaves in fp32 (repeatable), e.g. "
                   "/stem/conv/Conv or /value_fc/Gemm where 7-bit weights move the value (the log prints each "
                   "copy's value MAE); as python3 -m azgo.nets.quantize --keep-fp32.")
@click.option("--ray", "ray_address", metavar="auto|local|ADDRESS",
              help="Self-play on Ray actors (extra azgo[cluster]): auto = the cluster `ray start` runs here, "
                   "local = Ray's default ray.init() (a cluster running here, else a one-machine Ray started now), "
                   "else HOST:6379 or ray://HOST:10001.")
@click.pass_context
def loop(ctx, recipe_file, run_dir, plan, publish, promote_gen, package_gen, reason, folder, generations, hours, net, size, komi, games_per_generation, workers, full_visits, cheap_visits,
         full_prob, train_steps, batch_size, window, lr, surprise_weight, size_mix, max_final_margin, gate_games, gate_visits, gate_threshold, seed,
         init_ckpt, extra_games, device, anchor, anchor_games, anchor_visits, anchor_gate, anchor_margin, precision,
         int8_keep_fp32, ray_address):
    """Generations of selfplay -> train -> export -> gate, resumable after a kill (same command).

    With --recipe FILE every setting comes from the recipe (azgo.training.recipe) and the run goes on
    unattended: killed at any moment, the same command resumes it; --plan shows the next generation."""
    from click.core import ParameterSource
    from azgo.nets.evaluator import parse_device
    if recipe_file:
        _run_recipe(ctx, recipe_file, run_dir, plan, publish, generations, device, workers, ray_address,
                    promote_gen, reason, package_gen)
        return
    if plan or run_dir or publish or promote_gen is not None or package_gen is not None or reason:
        raise click.UsageError("--plan, --publish, --promote, --package, --reason and --run-dir go with --recipe")
    if not folder:
        raise click.UsageError("Missing option '--dir' (or give --recipe)")

    from .cli import parse_size_mix
    parse_size_mix(size_mix or None)  # a malformed mix fails now, not at the first training
    if int8_keep_fp32 and precision != "int8":
        raise click.BadParameter("only with --precision int8", param_hint="--int8-keep-fp32")
    try:
        parse_device(device)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--device") from None
    if ray_address:
        from .ray_selfplay import require_ray
        require_ray()  # fail now, not after generation 0
        if ctx.get_parameter_source("workers") == ParameterSource.DEFAULT:
            workers = 0  # one actor per CPU of the cluster
    sp = SelfPlayConfig(size=size, komi=komi, full_visits=full_visits, cheap_visits=cheap_visits, full_prob=full_prob,
                        precision=precision)
    cfg = LoopConfig(net=net, games_per_generation=games_per_generation, workers=workers, train_steps=train_steps,
                     batch_size=batch_size, window=window, lr=lr, surprise_weight=surprise_weight,
                     size_mix=size_mix, max_final_margin=max_final_margin,
                     gate_games=gate_games, gate_visits=gate_visits, gate_threshold=gate_threshold, seed=seed, init=init_ckpt,
                     extra_games=tuple(os.path.abspath(d) for d in extra_games), device=device, ray=ray_address,
                     anchor=anchor, anchor_games=anchor_games, anchor_visits=anchor_visits, anchor_gate=anchor_gate,
                     anchor_margin=anchor_margin, int8_keep_fp32=tuple(int8_keep_fp32), selfplay=sp)
    from azgo.nets.registry import NetError
    try:
        Loop(folder, cfg).run(generations=generations, hours=hours)
    except NetError as e:  # e.g. an --int8-keep-fp32 node the network lacks: said plainly, the folder resumable
        raise click.ClickException(str(e)) from None


def _run_recipe(ctx, recipe_file, run_dir, plan, publish, generations, device, workers, ray_address,
                promote_gen=None, reason=None, package_gen=None) -> None:
    """``azgo loop --recipe``: check the recipe whole before any work, then plan or run it."""
    from click.core import ParameterSource

    from azgo.nets.evaluator import parse_device

    from .recipe import RecipeError, load_recipe
    from .recipe_run import RecipeRun
    given = [p for p in ctx.command.params
             if p.name not in ("recipe_file", "run_dir", "plan", "publish", "promote_gen", "package_gen", "reason",
                               "generations",
                               "device", "workers", "ray_address")
             and ctx.get_parameter_source(p.name) == ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"{given[0].opts[0]} is the recipe's to set, not the command line's (with --recipe)")
    try:
        parse_device(device)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--device") from None
    runner = None
    try:
        recipe = load_recipe(recipe_file)
        explicit = ctx.get_parameter_source("workers") == ParameterSource.COMMANDLINE
        runner = RecipeRun(recipe, run_dir or os.path.join("runs", recipe.name), device=device, ray=ray_address,
                           workers=workers if explicit else None)
        if plan:
            click.echo(runner.plan())
            return
        if reason is not None and promote_gen is None and package_gen is None:
            raise click.UsageError("--reason goes with --promote or --package")
        if promote_gen is not None and package_gen is not None:
            raise click.UsageError("--promote and --package: one at a time (--promote packages too)")
        if package_gen is not None:
            if reason is None:
                raise click.UsageError("--package needs --reason: why now, and where the games that decided it are")
            files = runner.package_by_hand(package_gen, reason)
            click.echo(f"generation {package_gen} is packaged into {', '.join(files)}")
            return
        if promote_gen is not None:
            if reason is None:
                raise click.UsageError("--promote needs --reason: why, and where the games that decided it are")
            runner.promote_by_hand(promote_gen, reason)
            click.echo(f"generation {promote_gen} is the best network of {runner.dir}")
            return
        if publish:
            path = runner.publish()
            if path is None:
                raise click.ClickException("nothing to publish: no run in this folder, or no [lineage] dir in the recipe")
            click.echo(path)
            return
        runner.run(generations=generations)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the stage in progress recorded its time and stopped its children
        where = (f" at generation {runner.state['generation']}, stage {runner.state['stage']}"
                 if runner is not None and runner.state else "")
        click.echo(f"azgo loop: stopped{where}; the same command resumes", err=True)
        sys.exit(130)
    except RecipeError as e:
        raise click.ClickException(str(e)) from None
