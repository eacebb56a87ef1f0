"""The ``azgo`` command line (click): gtp, genmove, board, analysis, match here; the training verbs (selfplay,
train, export, quantize, shards, loop) load from azgo.training only when used (``LazyGroup``)."""

from __future__ import annotations

import os
import sys

import click

from azgo.engine.board import BLACK, WHITE, IllegalMove
from azgo.engine.coords import CoordinateError, gtp_to_move, move_to_gtp
from azgo.engine.game import Game


def parse_move_list(text: str, size: int) -> list[tuple[int, int]]:
    """``"B D4 W Q16 B pass"`` (or ``"D4 Q16"``, colours alternating from Black) -> [(colour, move)].

    Raises click.BadParameter naming the bad token.
    """
    tokens = text.replace(",", " ").split()
    out: list[tuple[int, int]] = []
    colour = None
    for tok in tokens:
        low = tok.lower()
        if low in ("b", "black", "w", "white"):
            if colour is not None:
                raise click.BadParameter(f"colour {tok!r} is not followed by a vertex")
            colour = BLACK if low.startswith("b") else WHITE
            continue
        try:
            move = gtp_to_move(tok, size)
        except CoordinateError as e:
            raise click.BadParameter(str(e)) from None
        if colour is None:
            colour = (3 - out[-1][0]) if out else BLACK
        out.append((colour, move))
        colour = None
    if colour is not None:
        raise click.BadParameter("the move list ends with a colour and no vertex")
    return out


def load_position(sgf_path: str | None, moves: str | None, size: int, komi: float | None,
                  move_number: int | None) -> Game:
    """A Game from an SGF file (up to ``move_number`` moves) or a move list on an empty board."""
    if sgf_path:
        from azgo.engine.sgf import SgfError, load_sgf
        try:
            game = load_sgf(sgf_path).to_game(move_number)
        except SgfError as e:
            raise click.ClickException(f"{sgf_path}: {e}") from None
        if komi is not None:
            game.komi = komi
    else:
        game = Game(size, 7.5 if komi is None else komi)
    for colour, move in parse_move_list(moves or "", game.size):
        try:
            game.play(move, colour)
        except IllegalMove as e:
            who = "B" if colour == BLACK else "W"
            raise click.ClickException(f"{who} {move_to_gtp(move, game.size)}: {e}") from None
    return game


def engine_options(f):
    """The play settings shared by ``azgo gtp`` and ``azgo genmove`` (fields of EngineConfig)."""
    from .config import DEFAULT_VISITS, GPU_BATCH_SIZE
    opts = [
        click.option("--config", "config_file", type=click.Path(dir_okay=False),
                     help="TOML file with these settings (explicit options override it)."),
        click.option("--net", help="ONNX network file (default: the packaged network)."),
        click.option("--visits", type=click.IntRange(min=1),
                     help=f"Visits per move (default {DEFAULT_VISITS} when no time limit applies)."),
        click.option("--seconds", type=click.FloatRange(min=0, min_open=True), help="Seconds per move."),
        click.option("--threads", default="auto", show_default=True, callback=_threads_option,
                     help="Cores to use: 'auto' (all) or a number; split into search threads (up to 4) "
                          "and onnxruntime threads, said on stderr at start."),
        click.option("--max-memory", type=click.FloatRange(min=1), help="Resident-memory cap in MB: at the "
                     "cap the search tree stops growing (default: a quarter of RAM, at most 4096)."),
        click.option("--batch-size", type=click.IntRange(min=1), default=8, show_default=True,
                     help="Leaves per network call."),
        click.option("--resign-threshold", type=click.FloatRange(0, 1, max_open=True), default=0.05,
                     show_default=True, help="Resign below this winrate (0 = never resign)."),
        click.option("--resign-moves", type=click.IntRange(min=1), default=3, show_default=True,
                     help="...for this many of our moves in a row."),
        click.option("--ponder/--no-ponder", default=False, show_default=True,
                     help="Think on the opponent's time."),
        click.option("--lag", type=click.FloatRange(min=0), default=1.0, show_default=True,
                     help="Seconds kept back per move for network/GUI lag under a time control."),
        click.option("--lcb/--no-lcb", default=True, show_default=True,
                     help="Choose moves by lower confidence bound (else most visits)."),
        click.option("--ladders/--no-ladders", default=True, show_default=True,
                     help="Read ladders in the search: lower the prior of running out of atari into a "
                          "ladder that is lost, raise the prior of an atari that wins one."),
        click.option("--score-utility", type=click.FloatRange(min=0), default=0.0, show_default=True,
                     help="Weight of the score lead beside the winrate in what the search maximises "
                          "(KataGo's score utility; 0 = the winrate alone). Keeps a winning (or losing) "
                          "engine telling a move that keeps a group from one that loses it."),
        click.option("--early-stop", type=click.Choice(["always", "banked"]), default="banked", show_default=True,
                     help="End a timed search once no other move can overtake the best: always, or banked = only "
                          "where the clock keeps the seconds saved (main time, Fischer, Canadian), so that in a "
                          "byo-yomi period or under --seconds the whole time is searched (the tree is reused "
                          "next move)."),
        click.option("--dynamic-komi", type=click.Choice(["off", "linear", "ahead"]), default="off", show_default=True,
                     help="linear: as White giving 2+ handicap stones, search as if White's komi were about the "
                          "stones' worth higher at the start, falling to the real komi by move 0.55 x the board's "
                          "points (Pachi's linear dynamic komi), so the search compares moves near a 50% winrate; "
                          "ahead: either colour, leading by more than 3% of the board's points (10.8 on 19x19), "
                          "searches as if its komi were worse by the rest of its lead, so that moves giving points "
                          "away lose winrate. Scores, resignation and analysis use the real komi."),
        click.option("--pass-after-move/--no-pass-after-move", default=False, show_default=True,
                     help="--pass-after-move: may pass when the opponent's last move was not a pass. The default, --no-pass-after-move, passes "
                          "only after a pass and otherwise plays a move about as good (within 0.1 of the pass's "
                          "value): a pass hands the opponent a free move."),
        click.option("--symmetry", type=click.Choice(["none", "random", "average"]), default="random",
                     show_default=True, help="Board symmetry per network evaluation."),
        click.option("--seed", type=int, help="Random seed (reproducible searches)."),
        click.option("--precision", type=click.Choice(["auto", "fp32", "int8", "vnni"]), default="auto",
                     show_default=True,
                     help="Network precision: auto = int8 when <net>.int8.onnx is beside the net (the packaged "
                          "networks have one) and the net runs on the CPU, else fp32; vnni = <net>.int8-vnni.onnx "
                          "where it is beside the net and this CPU has VNNI (closer to fp32's winrates and "
                          "score leads; the 19x19 one at about 0.7x the speed), else as auto."),
        click.option("--device", default="auto", show_default=True, callback=_device_option,
                     help="auto | cpu | cuda | cuda:N: where the network runs (auto: CUDA when "
                          "onnxruntime-gpu has it, pip install 'azgo[gpu]'; else the CPU)."),
        click.option("--gpu-batch-size", type=click.IntRange(min=1), default=GPU_BATCH_SIZE, show_default=True,
                     help="Leaves per network call when the network runs on CUDA (in place of --batch-size)."),
        click.option("--lizzie/--no-lizzie", default=False, show_default=True,
                     help="Answer `version` as '0.17 (azgo VERSION, ...)' so that Lizzie, which reads "
                          "it as a Leela Zero version, starts without its 'requires 0.15' dialog."),
        click.option("--ogs-chat/--no-ogs-chat", default=False, show_default=True,
                     help="After every move azgo plays (genmove), one stderr line 'MALKOVICH:...' with its "
                          "visits, winrate, score lead and principal variation, which gtp2ogs posts in the "
                          "game's malkovich chat on OGS (its send_chats / --aichat)."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def make_config(ctx: click.Context, params: dict):
    """EngineConfig from a TOML file (if any) overridden by options given on the command line."""
    import dataclasses
    from click.core import ParameterSource
    from .config import EngineConfig, load_toml
    fields = {f.name for f in dataclasses.fields(EngineConfig)}
    values = {}
    if params.get("config_file"):
        try:
            values.update(load_toml(params["config_file"]))
        except ValueError as e:
            raise click.UsageError(str(e)) from None
    for name in fields & set(params):
        explicit = ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)
        if explicit or name not in values:
            if params[name] is not None or explicit:
                values[name] = params[name]
    try:
        return EngineConfig(**values)
    except (TypeError, ValueError) as e:
        raise click.UsageError(f"bad settings: {e}") from None


def _handicap_option(value):
    if value == 1:
        raise click.BadParameter("fixed handicap takes 2 to 9 stones (0: none)")
    return value


def _threads_option(ctx, param, value):
    from azgo.engine.threads import parse_threads
    try:
        n = parse_threads(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    return "auto" if n is None else n


def _device_option(ctx, param, value):
    """Check a ``--device`` value (auto, cpu, cuda, cuda:N) without importing onnxruntime."""
    kind, sep, index = value.strip().lower().partition(":")
    if kind in ("auto", "cpu", "cuda") and not sep or kind == "cuda" and index.isdigit():
        return value.strip().lower()
    raise click.BadParameter(f"{value!r}: use auto, cpu, cuda or cuda:N")


def make_engine(config, size: int = 19):
    from azgo.nets.registry import NetError
    from .engine import GtpEngine
    try:
        return GtpEngine(config, size=size)
    except NetError as e:
        raise click.ClickException(str(e)) from None


class LazyGroup(click.Group):
    """A click group whose training verbs live in ``azgo.training.cli`` and load only when used,
    so ``azgo gtp``/``azgo genmove`` never import the training package (or torch)."""

    lazy = {
        "selfplay": "azgo.training.workers:selfplay",
        "train": "azgo.training.cli:train",
        "export": "azgo.training.cli:export",
        "grow": "azgo.training.cli:grow",
        "loop": "azgo.training.loop_cli:loop",
        "quantize": "azgo.training.cli:quantize",
        "shards": "azgo.training.cli:shards",
        "gnugo-games": "azgo.training.cli:gnugo_games",
    }

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy and name not in self.commands:
            import importlib
            module, attr = self.lazy[name].split(":")
            try:
                return getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as e:
                return _unavailable(name, e)
        return super().get_command(ctx, name)


def _unavailable(name: str, error: Exception) -> click.Command:
    @click.command(name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                   help=f"(unavailable: {error})")
    def cmd():
        raise click.ClickException(f"azgo {name} is unavailable: {error}. "
                                   "Install the training extras: python3 -m pip install 'azgo[train]'")
    return cmd


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="azgo", prog_name="azgo")
def main() -> None:
    """azgo: a Go engine in the AlphaGo Zero style (ONNX network + PUCT search, GTP)."""


@main.command("board")
@click.option("--sgf", "sgf_path", type=click.Path(dir_okay=False), help="Read the position from an SGF file.")
@click.option("--move", "move_number", type=click.IntRange(min=0), help="Stop the SGF after this many moves.")
@click.option("--moves", default="", help='Moves to play, e.g. "B D4 W Q16 B pass" or "D4 Q16".')
@click.option("--size", default=19, show_default=True, type=click.IntRange(2, 25), help="Board size.")
@click.option("--komi", type=float, help="Komi (default 7.5, or the SGF's KM).")
def board_cmd(sgf_path, move_number, moves, size, komi):
    """Show a position, the side to move and its area (Tromp-Taylor) score."""
    from azgo.engine.scoring import area_score, result_string
    game = load_position(sgf_path, moves, size, komi, move_number)
    b = game.board
    click.echo(str(b))
    side = "Black" if b.to_move == BLACK else "White"
    score = area_score(b, game.komi)
    legal = int(b.legal_mask().sum()) - 1
    click.echo(f"move {game.move_number}, {side} to move, {legal} legal points, "
               f"captures B {b.prisoners[BLACK]} W {b.prisoners[WHITE]}, komi {game.komi:g}, "
               f"area score {result_string(score)}")


@main.command("gtp")
@engine_options
@click.pass_context
def gtp_cmd(ctx, **params):
    """Speak GTP on stdin/stdout (for Sabaki, Lizzie, gtp2ogs, GoGui, match runners)."""
    from .loop import run
    engine = make_engine(make_config(ctx, params))
    status = run(engine)
    # Exit at once: the stdin reader thread may still be blocked in readline (stdin left open after
    # `quit`), and a normal interpreter shutdown then aborts on the buffered reader's lock.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _default_memory_mb() -> float:
    """A quarter of the machine's memory, at most 4 GB (see ``azgo.engine.memory.default_memory_mb``)."""
    from azgo.engine.memory import default_memory_mb
    return default_memory_mb()


def _exit_with_parent(log) -> None:
    """Exit when the parent process dies. KaTrain starts a custom engine through ``sh -c``, and on
    a restart kills only that shell: without this, azgo would be left running with its pipes open
    (and KaTrain's reader threads would wait on them for ever)."""
    import threading
    import time
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                log("azgo analysis: the parent process is gone; exiting")
                os._exit(0)
    threading.Thread(target=watch, name="azgo-parent-watch", daemon=True).start()


@main.command("analysis")
@click.option("--net", help="ONNX network file for every size (default: the packaged network for each size).")
@click.option("--visits", type=click.IntRange(min=1), default=500, show_default=True,
              help="maxVisits of a query that gives none.")
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), help="Seconds per position when a query gives no maxTime.")
@click.option("--analysis-threads", "positions", type=click.IntRange(min=1), default=4, show_default=True,
              help="Positions searched at the same time (their leaves share network calls).")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True, help="onnxruntime intra-op threads.")
@click.option("--batch-size", type=click.IntRange(min=1), default=8, show_default=True, help="Leaves per search per step.")
@click.option("--max-memory", type=click.FloatRange(min=1), help="Resident-memory cap in MB (default: a quarter of RAM, at most 4096).")
@click.option("--report-as", type=click.Choice(["SIDETOMOVE", "BLACK", "WHITE"], case_sensitive=False),
              default="SIDETOMOVE", show_default=True, help="Default reportAnalysisWinratesAs.")
@click.option("--symmetry", type=click.Choice(["none", "random", "average"]), default="random", show_default=True)
@click.option("--cache-size", type=click.IntRange(min=0), default=100_000, show_default=True, help="Evaluation cache entries.")
@click.option("--seed", type=int, help="Random seed.")
@click.option("--quit-without-waiting", is_flag=True, help="At end of input, stop searches at once instead of finishing the queue.")
@click.option("--device", default="auto", show_default=True, callback=_device_option,
              help="auto | cpu | cuda | cuda:N: where the network runs.")
@click.option("--precision", type=click.Choice(["auto", "fp32", "int8", "vnni"]), default="vnni", show_default=True,
              help="vnni = <net>.int8-vnni.onnx where it is beside the net and this CPU has VNNI (8-bit weights: "
                   "winrates and score leads closer to fp32's); where it is beside the net on a CPU without VNNI, "
                   "fp32; else as auto; auto = int8 when <net>.int8.onnx is beside the net and the net runs on "
                   "the CPU, else fp32.")
def analysis_cmd(net, visits, max_time, positions, threads, batch_size, max_memory, report_as, symmetry,
                 cache_size, seed, quit_without_waiting, device, precision):
    """KataGo's JSON analysis protocol on stdin/stdout (KaTrain, review scripts)."""
    from azgo.nets.evaluator import EvalConfig
    from azgo.nets.pool import EvaluatorPool
    from azgo.nets.registry import NetError
    from .analysis_server import AnalysisServer, ServerConfig, serve
    from .kata_query import Defaults
    pool = EvaluatorPool(net, EvalConfig(threads=threads, symmetry=symmetry, cache_size=cache_size, seed=seed,
                                         device=device, precision=precision))
    try:
        first = pool.for_size(19)  # fail now, not at the first query, if the network is missing
    except NetError as e:
        raise click.ClickException(str(e)) from None
    cap = max_memory if max_memory is not None else _default_memory_mb()
    config = ServerConfig(positions=positions, batch_size=batch_size, max_memory_mb=cap,
                          defaults=Defaults(visits, max_time, report_as.upper()), seed=seed,
                          quit_without_waiting=quit_without_waiting)

    def write(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def for_size(n: int):
        try:
            return pool.for_size(n)
        except NetError as e:  # pragma: no cover - a registry entry without its file
            log(f"azgo analysis: {e}; using {first.path}")
            return first

    log(f"azgo analysis: network {first.describe()}, {first.net_name}, {positions} positions at a time, "
        f"memory cap {cap:.0f} MB; ready")
    server = AnalysisServer(for_size, config, write, log, first.min_size, first.max_size, pool.loaded)
    _exit_with_parent(log)
    serve(server)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@main.command("genmove")
@engine_options
@click.option("--sgf", "sgf_path", type=click.Path(dir_okay=False), help="Read the position from an SGF file.")
@click.option("--move", "move_number", type=click.IntRange(min=0), help="Use the SGF position after this many moves.")
@click.option("--moves", default="", help='Moves to play first, e.g. "B D4 W Q16" or "D4 Q16".')
@click.option("--size", default=19, show_default=True, type=click.IntRange(2, 25), help="Board size.")
@click.option("--komi", type=float, help="Komi (default 7.5, or the SGF's KM).")
@click.option("--color", type=click.Choice(["b", "w", "black", "white"], case_sensitive=False),
              help="Colour to move (default: whoever is to move).")
@click.option("--json", "as_json", is_flag=True, help="Print move, winrate, score lead, visits and PV as JSON.")
@click.pass_context
def genmove_cmd(ctx, sgf_path, move_number, moves, size, komi, color, as_json, **params):
    """Answer one position: print the move azgo would play, and exit."""
    config = make_config(ctx, params)
    game = load_position(sgf_path, moves, size, komi, move_number)
    engine = make_engine(config, size=game.size)
    if not engine.min_size <= game.size <= engine.max_size:
        raise click.ClickException(f"the network plays {engine.min_size}x{engine.min_size} to "
                                   f"{engine.max_size}x{engine.max_size}, not {game.size}x{game.size}")
    engine.load_game(game)
    who = game.to_move if color is None else (BLACK if color.lower().startswith("b") else WHITE)
    result, move = engine.think(who)
    text = "resign" if move is None else move_to_gtp(move, game.size)
    if as_json:
        import json
        click.echo(json.dumps({
            "move": text, "color": "B" if who == BLACK else "W", "winrate": round(result.winrate, 4),
            "score_lead": None if result.score_lead is None else round(result.score_lead, 2),
            "visits": result.visits, "playouts": result.playouts, "seconds": round(result.seconds, 3),
            "pv": [move_to_gtp(m, game.size) for m in next(
                (c.pv for c in result.candidates if c.move == move), [] if move is None else [move])],
        }))
    else:
        click.echo(text)


@main.command("match")
@click.option("--engine-a", "-a", required=True, help='GTP command line of engine A, e.g. "azgo gtp --visits 200".')
@click.option("--engine-b", "-b", required=True, help='GTP command line of engine B, e.g. "gnugo --mode gtp --level 10".')
@click.option("--games", "-n", default=10, show_default=True, type=click.IntRange(min=1), help="Games (colours alternate; A is Black first).")
@click.option("--size", default=9, show_default=True, type=click.IntRange(2, 25), help="Board size.")
@click.option("--komi", default=7.5, show_default=True, type=float, help="Komi.")
@click.option("--time", "time_control", default="none", show_default=True,
              help="Time control sent to both engines and enforced: 'absolute MAIN', 'byoyomi MAIN PERIOD PERIODS', "
                   "'canadian MAIN PERIOD STONES', 'fischer MAIN INC' (kata-time_settings), 'fischer-capped MAIN INC LIMIT MAXMOVE'.")
@click.option("--max-moves", type=click.IntRange(min=1), help="Score the game as it stands after this many moves (default 3*size*size).")
@click.option("--sgf-dir", type=click.Path(file_okay=False), help="Write each game as SGF here (and the engines' stderr).")
@click.option("--name-a", default="", help="Name for engine A (default: its GTP name).")
@click.option("--name-b", default="", help="Name for engine B.")
@click.option("--resume", is_flag=True, help="Count the games already in --sgf-dir and play only the missing ones.")
@click.option("--replay-crashes", type=click.Choice(["a", "b", "both"]), default=None,
              help="A game in which this engine died (rather than lost) is void (--sgf-dir/void/, RE[Void]) and "
                   "played again, up to 3 times (b: the opponent's crashes, for a strength line). Otherwise the "
                   "engine that died loses the game (+F); either way it is started again for the next game.")
@click.option("--replay-time-losses", is_flag=True,
              help="A game lost on time (+T) is void and played again, up to 3 times (with --replay-crashes, "
                   "3 tries in all): on a shared machine a flag measures the load, not the engines.")
@click.option("--handicap", default=0, show_default=True, type=click.IntRange(0, 9), callback=lambda c, p, v: _handicap_option(v),
              help="Fixed handicap stones for Black in every game (fixed_handicap to both engines; White moves first).")
@click.option("--a-colour", type=click.Choice(["alternate", "black", "white"]), default="alternate", show_default=True,
              help="Engine A's colour: alternating (Black first), or the same in every game (a handicap line: "
                   "--a-colour white --handicap 2 has A give B two stones each game).")
@click.option("--parallel", default=1, show_default=True, type=click.IntRange(min=1),
              help="Games at once: the games are shared out over this many sub-lines, each with its own two "
                   "engines and its SGFs in --sgf-dir/part<k>, and the summary adds them up. Give each engine "
                   "its share of the cores (e.g. --threads 1 for azgo, threads=1 for Pachi).")
def match_cmd(engine_a, engine_b, games, size, komi, time_control, max_moves, sgf_dir, name_a, name_b, resume,
              replay_crashes, replay_time_losses, handicap, a_colour, parallel):
    """Play two GTP engines against each other; print wins, win rate (95% interval), Elo and each engine's
    seconds per move."""
    from .match import EngineError, parse_time_control, run_match_parts, stderr_log
    try:
        tc = parse_time_control(time_control)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--time") from None
    try:
        summary = run_match_parts(engine_a, engine_b, games, parallel, sgf_dir=sgf_dir, log=stderr_log,
                                  size=size, komi=komi, time_settings=tc, max_moves=max_moves, name_a=name_a,
                                  name_b=name_b, resume=resume, replay_crashes=replay_crashes or "",
                                  handicap=handicap, a_colour=a_colour, void_time_losses=replay_time_losses)
    except EngineError as e:
        raise click.ClickException(str(e)) from None
    for line in summary.lines():
        click.echo(line)


@main.command("strength", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                           "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def strength_cmd(args):
    """Measure the strength table: azgo match lines against GNU Go 3.8 and Pachi 11.99 (azgo strength --help)."""
    from .strength import main as strength_main
    sys.exit(strength_main(list(args)))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
