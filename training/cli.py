"""The training verbs of the ``azgo`` command line, loaded on demand by ``azgo.gtp.cli.LazyGroup``.

One section per command. This module must not import torch at module level (``azgo --help`` imports
it); each command imports what it needs when it runs.
"""

from __future__ import annotations

import os
import shlex
import sys

import click

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _command_line() -> str:
    """The command as typed, for provenance (``azgo`` plus the arguments)."""
    return shlex.join(["azgo", *sys.argv[1:]])


def _explicit(ctx: click.Context, names) -> set[str]:
    """The parameters given on the command line or through the environment (not defaults)."""
    from click.core import ParameterSource
    given = set()
    for name in names:
        if ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            given.add(name)
    return given


def _int_list(ctx, param, value):
    if value is None or value == "":
        return None
    try:
        return [int(x) for x in value.replace(",", " ").split()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from None


def _float_list(ctx, param, value):
    if value is None or value == "":
        return None
    try:
        out = [float(x) for x in value.replace(",", " ").split()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers, got {value!r}") from None
    if len(out) != 4 or any(w < 0 for w in out):
        raise click.BadParameter("expected 4 non-negative numbers: policy,value,ownership,score")
    return out


def _source_items(values, sep: str, form: str, parse):
    """``SRC=VALUE[<sep>EXTRA]`` options as lists: ``parse(value, has_extra, extra)`` returns the list's tail
    or None when out of range (then BadParameter names ``form``); None when no option was given."""
    if not values:
        return None
    out = []
    for v in values:
        src, eq, rest = v.rpartition("=")
        value, has_extra, extra = rest.partition(sep)
        try:
            tail = parse(value, bool(has_extra), extra) if eq and src else None
        except ValueError:
            tail = None
        if tail is None:
            raise click.BadParameter(f"expected {form}, got {v!r}")
        out.append([src, *tail])
    return out


def parse_source_weights(values):
    """``[[src, w, p], ...]`` from ("runs/x=8:0.25", ...) (None when none given)."""
    def parse(w, has_p, p):
        sw, pw = float(w), float(p) if has_p else 1.0
        return [sw, pw] if sw >= 0 and 0 <= pw <= 1 else None
    return _source_items(values, ":", "SRC=W[:P] with W >= 0 and P in 0..1", parse)


def parse_source_shares(values):
    """``[[src, share(, group)], ...]`` from ("runs/x=0.4", "runs/y=0.5@mine", ...) (None when none given)."""
    def parse(share, has_group, group):
        sh = float(share)
        if not 0 <= sh <= 1 or (has_group and not group):
            return None
        return [sh, group] if has_group else [sh]
    return _source_items(values, "@", "SRC=SHARE[@GROUP] with SHARE in 0..1", parse)


def parse_size_mix(value):
    """``{19: 0.6, 13: 0.3}`` from "19=0.6,13=0.3" (None when not given)."""
    if value is None or value == "":
        return None
    mix = {}
    for part in value.replace(" ", "").split(","):
        size, eq, weight = part.partition("=")
        try:
            n, w = int(size), float(weight)
        except ValueError:
            raise click.BadParameter(f"expected SIZE=WEIGHT pairs such as 19=0.6,13=0.4, got {value!r}") from None
        if not eq or not 7 <= n <= 19 or w < 0 or n in mix:
            raise click.BadParameter(f"expected distinct sizes 7-19 with weights >= 0, got {value!r}")
        mix[n] = w
    if sum(mix.values()) <= 0:
        raise click.BadParameter("the size weights sum to 0")
    return mix


# ============================================================================================ train

@click.command("train", context_settings=CONTEXT)
@click.argument("sources", nargs=-1, metavar="[SGF_SOURCES]...")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Run folder: checkpoint.pt, train_log.csv, tb/ (TensorBoard).")
@click.option("--net", default="b6c64", show_default=True,
              help="Network size for a fresh start (b2c16, b6c64, b6c96, b10c128).")
@click.option("--init", "init", type=click.Path(dir_okay=False, exists=True),
              help="Start from this checkpoint's weights (fresh optimizer, step 0).")
@click.option("--resume", is_flag=True,
              help="Continue the run in --out from its checkpoint (same data files, step, optimizer, "
                   "RNG); options given now override the recorded ones.")
@click.option("--steps", default=1000, show_default=True, type=click.IntRange(min=0),
              help="Train until this step count (total, including resumed steps).")
@click.option("--batch-size", default=256, show_default=True, type=click.IntRange(min=1))
@click.option("--lr", default=0.02, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="SGD learning rate.")
@click.option("--lr-steps", callback=_int_list, metavar="S1,S2,...",
              help="Multiply the learning rate by --lr-decay at each of these steps.")
@click.option("--lr-decay", default=0.1, show_default=True, type=click.FloatRange(min=0, min_open=True))
@click.option("--momentum", default=0.9, show_default=True, type=click.FloatRange(0, 1, max_open=True))
@click.option("--weight-decay", default=1e-4, show_default=True, type=click.FloatRange(min=0),
              help="L2 on convolution and linear weights.")
@click.option("--loss-weights", callback=_float_list, metavar="P,V,O,S",
              help="Weights of the policy, value, ownership and score losses  [default: 1,1,0.5,0.2]")
@click.option("--window", type=click.IntRange(min=1),
              help="Use only the N most recent games (file mtime, then name)  [default: all]")
@click.option("--val-fraction", default=0.05, show_default=True, type=click.FloatRange(0, 1, max_open=True),
              help="Fraction of games held out for validation (by a hash of the file name).")
@click.option("--val-positions", default=4096, show_default=True, type=click.IntRange(min=1),
              help="Held-out positions evaluated per validation.")
@click.option("--checkpoint-every", default=500, show_default=True, type=click.IntRange(min=0),
              help="Write the checkpoint every N steps (and at the end, and on Ctrl-C/SIGTERM).")
@click.option("--log-every", default=50, show_default=True, type=click.IntRange(min=1),
              help="Write a train_log.csv / TensorBoard row every N steps.")
@click.option("--validate-every", default=500, show_default=True, type=click.IntRange(min=0),
              help="Validate every N steps (0: only at the end).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of the initial weights and of batch sampling.")
@click.option("--threads", type=click.IntRange(min=1), help="torch threads  [default: torch's choice]")
@click.option("--workers", default=0, show_default=True, type=click.IntRange(min=0),
              help="Processes decoding uncached games (0: one per core when there are many).")
@click.option("--cache-dir", type=click.Path(file_okay=False),
              help="Folder for decoded-position caches  [default: .azgo-cache beside the SGF files]")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="Cache decoded positions per SGF file.")
@click.option("--tensorboard/--no-tensorboard", default=True, show_default=True,
              help="Also write TensorBoard event files (needs the tensorboard package).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bars on stderr.")
@click.option("--device", default="auto", show_default=True,
              help="auto | cpu | cuda | cuda:N (auto: CUDA when torch sees a GPU). On CUDA the network runs "
                   "in mixed precision (float16 autocast + GradScaler); checkpoints load on either.")
@click.option("--swa-from", default=0, show_default=True, type=click.IntRange(min=0),
              help="Stochastic weight averaging: average the weights of every --swa-every-th step from this "
                   "step on and write them, validated, to OUT/swa.pt at the end (0: off).")
@click.option("--swa-every", default=50, show_default=True, type=click.IntRange(min=1))
@click.option("--surprise-weight", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="KataGo's policy surprise weighting: this share of each position's sampling weight goes in "
                   "proportion to its policy surprise (AZK, written by azgo selfplay), the rest is uniform; "
                   "positions without AZK keep weight 1 (0: uniform sampling).")
@click.option("--size-mix", callback=lambda c, p, v: parse_size_mix(v), metavar="N=W,...",
              help="Draw each batch's board size with these weights, e.g. 19=0.6,13=0.3,9=0.1 (sizes left "
                   "out are not trained on)  [default: in proportion to the positions of each size]")
@click.option("--komi-augment", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Train this share of the positions of played-out games at another komi (-10 to 20): the final "
                   "board's margin does not depend on komi, so the komi plane, score and value targets follow it "
                   "(0: off).")
@click.option("--handicap-weight", default=1.0, show_default=True, type=click.FloatRange(0, 100),
              help="Draw the positions of games begun with 2 or more handicap stones (SGF HA) this many times as "
                   "often as the other positions of their source (with --source-share, the source's share holds).")
@click.option("--komi-inputs", is_flag=True,
              help="Let the komi reach the score and value heads directly (the score head predicts the margin on "
                   "the board, komi is added as the game adds it): turns them on for a network initialised "
                   "without them; a checkpoint made with them keeps them.")
@click.option("--max-final-margin", default=0.0, show_default=True, type=click.FloatRange(0, 2),
              help="Drop the ownership/score targets of games that ended with an area margin above this share "
                   "of the board (e.g. 0.75: played out until the loser's groups were all dead); 0 keeps all.")
@click.option("--source-weight", "source_weights", multiple=True, callback=lambda c, p, v: parse_source_weights(v),
              metavar="SRC=W[:P]",
              help="Draw the training games under SRC (a folder or file) W times as often as the others, and "
                   "scale their policy loss by P (0-1, default 1), e.g. runs/vs_gnugo=8:0.25 (repeatable; "
                   "the first matching SRC wins).")
@click.option("--source-share", "source_shares", multiple=True, callback=lambda c, p, v: parse_source_shares(v),
              metavar="SRC=SHARE[@GROUP]",
              help="The positions under SRC make SHARE (0-1) of the draws of their board size's batches, whatever "
                   "their number (sources of one @GROUP, each listed with the group's share, hold it together, split "
                   "by positions); sources not named share the rest by positions (repeatable; replaces "
                   "--source-weight's sample weight, keeps its policy weight).")
@click.pass_context
def train(ctx, sources, **opts):
    """Train a network on SGF games: folders (searched recursively), globs or files.

    azgo self-play archives give visit-count policy targets (AZX, else AZP; cheap-search moves,
    AZT[0], are left out); other SGF collections give the played move. Value from RE; ownership and
    score only from games played out to two passes.
    """
    from azgo.training.train import TrainConfig, TrainError, run

    values = dict(opts)
    values["data"] = list(sources)
    if values["lr_steps"] is None:
        values["lr_steps"] = []
    if values["loss_weights"] is None:
        values.pop("loss_weights")
    if values["size_mix"] is None:
        values["size_mix"] = {}
    if values["source_weights"] is None:
        values["source_weights"] = []
    if values["source_shares"] is None:
        values["source_shares"] = []
    config = TrainConfig(**values)
    explicit = _explicit(ctx, [p.name for p in ctx.command.params if p.name != "sources"])
    if sources:
        explicit.add("data")
    try:
        summary = run(config, explicit=explicit, command=_command_line())
    except TrainError as e:
        raise click.ClickException(str(e)) from None
    if summary["stopped"] is not None:
        sys.exit(130)
    click.echo(f"step {summary['step']}: checkpoint {summary['checkpoint']}")


# ============================================================================================ export

@click.command("export", context_settings=CONTEXT)
@click.argument("checkpoint", type=click.Path(exists=True))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="The .onnx file to write; the net card <name>.json goes beside it.")
@click.option("--parity/--no-parity", default=True, show_default=True,
              help="Check onnxruntime against torch on random positions (9x9, 13x13, 19x19).")
@click.option("--bn-data", multiple=True, type=click.Path(exists=True),
              help="SGF games (folder, glob or file; repeatable) whose --bn-size positions the batch-norm "
                   "statistics are recalibrated on before export: a network for that board size.")
@click.option("--bn-size", type=click.IntRange(7, 19), help="The board size of --bn-data positions to use.")
@click.option("--bn-batches", default=64, show_default=True, type=click.IntRange(min=1),
              help="Batches of 128 positions averaged for the recalibrated statistics.")
def export(checkpoint, out, parity, bn_data, bn_size, bn_batches):
    """Export a training checkpoint (a file, or a run folder's checkpoint.pt) to ONNX + net card.

    The card's "training" field is the provenance the checkpoint recorded (steps, samples, games and
    positions trained on, training time, command lines).

    Training draws one board size per batch, so the batch-norm statistics a checkpoint carries are those
    of its most common size; --bn-data DIR --bn-size 19 recalibrates them on 19x19 positions first (the
    weights are untouched), which a network meant for 19x19 needs (see azgo.training.export).
    """
    from pathlib import Path

    from azgo.training.export import ExportError, export_checkpoint

    path = Path(checkpoint)
    if path.is_dir():
        path = path / "checkpoint.pt"
        if not path.exists():
            raise click.ClickException(f"no checkpoint.pt in {checkpoint}")
    try:
        if bn_data and bn_size is None:
            raise click.BadParameter("--bn-data needs --bn-size", param_hint="--bn-size")
        onnx_path, card = export_checkpoint(path, out, check=parity, bn_data=list(bn_data) or None, bn_size=bn_size,
                                            bn_batches=bn_batches, log=lambda m: click.echo(m, err=True))
    except (ExportError, KeyError, RuntimeError, OSError) as e:
        raise click.ClickException(f"cannot export {path}: {e}") from None
    click.echo(f"wrote {onnx_path} ({onnx_path.stat().st_size / 1e6:.2f} MB) and {card}")


# ============================================================================================ quantize

@click.command("quantize", context_settings=CONTEXT)
@click.argument("net", type=click.Path(exists=True, dir_okay=False))
@click.option("--games", "games", multiple=True, type=click.Path(exists=True),
              help="SGF games (folder or file, repeatable) whose positions calibrate the int8 copy.")
@click.option("--calibration", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help=".npy files of float32 planes [n, 26, N, N] (instead of --games).")
@click.option("--size", type=click.IntRange(7, 19), default=19, show_default=True,
              help="The board size of the --games positions to use.")
@click.option("--positions", type=click.IntRange(min=16), default=500, show_default=True)
@click.option("--keep-fp32", "keep_fp32", multiple=True, metavar="NODE",
              help="A graph node left unquantized (repeatable), e.g. /stem/conv/Conv.")
@click.option("--int8-everywhere", is_flag=True,
              help="Quantize the stem, the value/score/ownership head and the global-pooling matrices too (by "
                   "default they stay fp32: the analysis figures depend on them most, at a small cost in speed).")
@click.option("--analysis", is_flag=True,
              help="8-bit weights and percentile (99.999) activation ranges: score leads within about 0.25 points "
                   "of fp32's (7-bit MinMax: 0.2-0.5). Written as <name>.int8-vnni.onnx, which azgo analysis uses "
                   "(--precision vnni) in place of <name>.int8.onnx on a CPU with VNNI; play keeps the 7-bit copy.")
@click.option("--percentile", type=click.FloatRange(50, 100, min_open=True), default=None, metavar="P",
              help="Activation ranges at this percentile of the calibration values (e.g. 99.999) instead of their "
                   "extremes; the weights stay 7-bit (runs in int8 on every CPU) unless --analysis.")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Output file  [default: <name>.int8.onnx beside NET; with --analysis <name>.int8-vnni.onnx]")
@click.option("--note", default="", help="Free text stored with the calibration record.")
@click.option("--seed", default=0, show_default=True, type=int)
def quantize(net, games, calibration, size, positions, keep_fp32, int8_everywhere, analysis, percentile, out, note,
             seed):
    """Make the static int8 (QDQ) copy of a network, calibrated on real positions, and report its accuracy
    against the fp32 network (top move, value and score lead) on the last 256 of them."""
    import numpy as np

    from azgo.nets.quantize import ANALYSIS_PERCENTILE, compare_int8, int8_vnni_path_for, quantize_int8
    from azgo.nets.registry import NetError

    from .calibration import games_of_size, sample_positions
    from .dataset import find_sgf_files
    if bool(games) == bool(calibration):
        raise click.UsageError("give --games (SGF) or --calibration (.npy), one of them")
    if calibration:
        arrays = [np.load(f) for f in calibration]
    else:
        planes = sample_positions(games_of_size(sorted(find_sgf_files(list(games))), size), positions, seed=seed)
        if len(planes) == 0:
            raise click.ClickException(f"no {size}x{size} positions in {' '.join(games)}")
        arrays = [planes]
        from .portable import portable_paths
        named = portable_paths(list(games), os.getcwd())
        note = note or f"{len(planes)} positions of {size}x{size} games in {' '.join(named)}"
    try:
        path = quantize_int8(net, arrays, out or (int8_vnni_path_for(net) if analysis else None),
                             calibration_note=note, keep_fp32=keep_fp32,
                             default_fp32=not int8_everywhere, full_range=analysis,
                             percentile=percentile or (ANALYSIS_PERCENTILE if analysis else None))
    except NetError as e:
        raise click.ClickException(str(e)) from None
    r = compare_int8(net, path, arrays[0][-min(len(arrays[0]), 256):])
    lead = f", score lead MAE {r['lead_mae']:.3f} points (median {r['lead_median_abs']:.3f})" if "lead_mae" in r else ""
    click.echo(f"wrote {path}; on {int(r['positions'])} calibration positions: top-1 agreement "
               f"{r['top1_agreement']:.3f}, value MAE {r['value_mae']:.4f} (winrate median {r['winrate_median_abs']:.4f})"
               + lead)


# ============================================================================================ shards

@click.group("shards", context_settings=CONTEXT)
def shards():
    """SGF archives in git as compressed shards (data/<name>/<name>-NNNN.tar.xz, under 19 MB each)."""


@shards.command("pack")
@click.argument("src", type=click.Path(exists=True, file_okay=False))
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--per-shard", default=2000, show_default=True, type=click.IntRange(min=1))
def shards_pack(src, dest, per_shard):
    """Add the games of SRC not yet in DEST's shards as a new shard (never rewrites one)."""
    from .shards import ShardError, pack
    try:
        n, written = pack(src, dest, per_shard)
    except ShardError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{n} new games in {len(written)} shards; {dest}/MANIFEST.txt lists them all")


@shards.command("unpack")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.argument("out", type=click.Path(file_okay=False))
def shards_unpack(folder, out):
    """Write the games of FOLDER's shards into OUT (games already there are skipped; file times kept)."""
    from .shards import unpack
    click.echo(f"{unpack(folder, out)} games unpacked into {out}")


# ============================================================================================ gnugo-games

@click.command("gnugo-games", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                                "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def gnugo_games(args):
    """GNU Go self-play games as an SGF archive (a supervised start): azgo gnugo-games --help."""
    from .gnugo_games import main as games_main
    sys.exit(games_main(list(args)))


# ============================================================================================ grow

@click.command("grow", context_settings=CONTEXT)
@click.argument("checkpoint", type=click.Path(exists=True))
@click.option("--net", "net", required=True, help="The deeper size to grow into (e.g. b10c64 from b6c64).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="The grown checkpoint (a file; `azgo train --init` it).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the new blocks' other weights.")
def grow(checkpoint, net, out, seed):
    """Grow a checkpoint's network deeper without changing its outputs (new blocks start as identities).

    The grown checkpoint trains on with `azgo train --init OUT` (step 0, a fresh optimiser); before any
    training it plays exactly as the network it came from, only slower. The check below runs both networks
    on random positions of 9x9, 13x13 and 19x19 and refuses to write a file that differs.
    """
    from pathlib import Path

    from azgo.training.checkpoints import load_checkpoint, save_atomic
    from azgo.training.errors import TrainError
    from azgo.training.grow import grow_checkpoint, max_output_difference

    path = Path(checkpoint)
    if path.is_dir():
        path = path / "checkpoint.pt"
    try:
        ckpt = load_checkpoint(path)
        grown = grow_checkpoint(ckpt, net, seed=seed)
        diff = max_output_difference(ckpt, grown)
        if diff > 1e-3:
            raise TrainError(f"the grown network's outputs differ by {diff:.3g} (expected float rounding)")
        save_atomic(grown, out)
    except (TrainError, ValueError, OSError) as e:
        raise click.ClickException(f"cannot grow {path}: {e}") from None
    click.echo(f"wrote {out}: {ckpt['net']} -> {net}, largest output difference {diff:.2e}")
