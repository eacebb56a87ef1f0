"""GTP command handlers around one game, one search tree and one network.

Every handler either returns its success text or raises ``GtpError`` with the canonical error text;
a failed command leaves the game as it was. Analysis commands (``lz-analyze``, ``kata-analyze``,
``lz-genmove_analyze``, ``kata-genmove_analyze``) write their own output through the ``Channel`` the
command loop gives them and run until the next input line arrives (analysis) or the move is chosen.

`GtpEngine` holds the state and the game commands (board, moves, handicap, SGF); three mixins hold the
rest, one concept each: `clock_cmds` (time settings), `scoring_cmds` (final score and status) and
`analysis_cmds` (the streaming analysis commands). GTP's argument syntax and the stderr logger are in
`protocol`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from azgo.engine.board import BLACK, WHITE, IllegalMove
from azgo.engine.coords import CoordinateError, gtp_to_move, move_to_gtp
from azgo.engine.dynkomi import DynamicKomi
from azgo.engine.game import Game
from azgo.engine.handicap import HandicapError, fixed_handicap, max_fixed_handicap
from azgo.engine.mcts import LADDERS_OFF, SearchConfig
from azgo.engine.memory import default_memory_mb
from azgo.engine.threads import plan_threads
from azgo.engine.player import Player, PlayerConfig
from azgo.engine.resign import ResignConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.timecontrol import Clock

from . import analysis as A
from .analysis_cmds import ANALYSIS_COMMANDS, GENMOVE_ANALYZE, AnalysisCommands
from .clock_cmds import ClockCommands
from .config import DEFAULT_VISITS, EngineConfig
from .protocol import Channel, Command, GtpError, float_arg as _float_arg, int_arg as _int_arg, log  # noqa: F401
from .scoring_cmds import ScoringCommands

ENGINE_NAME = "azgo"


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("azgo")
    except Exception:  # pragma: no cover
        return "0.0"


# Lizzie 0.7.4 (featurecat/lizzie, analysis/Leelaz.java, parseLine) treats every engine whose `name`
# does not start with "KataGo" as Leela Zero: it takes the first space-separated word of the `version`
# reply, splits it on '.', and Integer.parseInt()s the second piece; below 15 it shows a modal
# "Lizzie requires version 0.15 or later of Leela Zero" dialog at every start (and a piece that is not
# an integer throws inside its reader thread). 0.17 is the Leela Zero release that added the `lcb` field
# to lz-analyze output (Lizzie's "support 0.17 engine" change reads it), and azgo's lz-analyze prints it.
LIZZIE_LZ_LEVEL = "0.17"


def lizzie_version() -> str:
    """``version`` under ``--lizzie``: the Leela Zero level Lizzie checks as the first word, then azgo's
    own name and version (``name`` stays ``azgo``)."""
    return f"{LIZZIE_LZ_LEVEL} (azgo {_version()}, Leela Zero {LIZZIE_LZ_LEVEL} analysis commands)"


class GtpEngine(ClockCommands, ScoringCommands, AnalysisCommands):
    """The state behind ``azgo gtp``: configuration, network, game, search tree, clock, resignation."""

    def __init__(self, config: EngineConfig = EngineConfig(), evaluator=None, size: int = 19):
        """``size``: the board size to start on (GTP's default 19; ``azgo genmove`` passes its
        position's, so only that size's network is loaded)."""
        self.config = config
        self.pool = None  # the networks by board size, when no evaluator is given
        self.threads = plan_threads(config.threads)
        self.max_memory = config.max_memory if config.max_memory is not None else default_memory_mb()
        self._capped_said = False
        if evaluator is None:
            from azgo.nets.evaluator import EvalConfig
            from azgo.nets.pool import EvaluatorPool
            self.pool = EvaluatorPool(config.net, EvalConfig(
                threads=self.threads.intra_op, symmetry=config.symmetry, cache_size=config.cache_size,
                precision=config.precision, seed=config.seed, device=config.device))
            evaluator = self.pool.for_size(size)
        self.min_size = int(getattr(evaluator, "min_size", 2) or 2)
        self.max_size = int(getattr(evaluator, "max_size", 25) or 25)
        self._use(evaluator)
        self.player = Player(self.searcher, PlayerConfig(
            resign=ResignConfig(enabled=config.resign_threshold > 0, threshold=config.resign_threshold,
                                consecutive=config.resign_moves), lag=config.lag,
            pass_replies_pass=not config.pass_after_move, dynamic_komi=DynamicKomi(config.dynamic_komi)))
        self.clock = Clock()
        self.size = next((n for n in (size, 19) if self.min_size <= n <= self.max_size), self.max_size)
        self.komi = 7.5
        self.game = Game(self.size, self.komi)
        self.handlers: dict[str, Callable[[tuple[str, ...]], str]] = {}
        for name in dir(self):
            if name.startswith("cmd_"):
                self.handlers[name[4:].replace("__", "-")] = getattr(self, name)
        self.streaming = {n: self._analyze for n in ANALYSIS_COMMANDS}
        self.streaming.update({n: self._genmove_analyze for n in GENMOVE_ANALYZE})
        self.quit_requested = False
        self._ponder_after = False
        net = f"network {self.evaluator.describe()}; " if hasattr(self.evaluator, "describe") else ""
        log(f"azgo: {net}{self.threads.describe()}; memory cap {self.max_memory:.0f} MB"
            + (" (--max-memory default: a quarter of RAM, at most 4096)" if config.max_memory is None else ""))

    def _use(self, evaluator) -> None:
        """Search with ``evaluator`` from now on (a fresh tree; ``gpu_batch_size`` leaves per network
        call when it runs on CUDA, else ``batch_size``)."""
        self.evaluator = evaluator
        cfg = self.config
        batch = cfg.gpu_batch_size if getattr(evaluator, "on_gpu", False) else cfg.batch_size
        self.search_config = SearchConfig(batch_size=batch, lcb=cfg.lcb, threads=self.threads.search,
                                          max_memory_mb=self.max_memory, score_utility=cfg.score_utility,
                                          **({} if cfg.ladders else LADDERS_OFF))
        self.searcher = Searcher(evaluator, self.search_config, seed=cfg.seed)
        if getattr(self, "player", None) is not None:
            self.player.use_searcher(self.searcher)

    def _set_size(self, n: int) -> None:
        """Play on n x n boards, with the packaged network for that size (see nets/registry.json)."""
        if self.pool is not None:
            evaluator = self.pool.for_size(n)
            if evaluator is not self.evaluator:
                self.searcher.stop_pondering()
                self._use(evaluator)
                if hasattr(evaluator, "describe"):
                    log(f"azgo: {n}x{n}: network {evaluator.describe()}")
        self.size = n

    def load_game(self, game: Game) -> None:
        """Go on from ``game`` (its size chooses the network; the clock and resignation start anew)."""
        if not self.min_size <= game.size <= self.max_size:
            raise GtpError("unacceptable size")
        self._set_size(game.size)
        self.komi = game.komi
        self.game = game
        self.player.reset()

    # ----------------------------------------------------------------- dispatch
    def commands(self) -> list[str]:
        return sorted(set(self.handlers) | set(self.streaming))

    def execute(self, cmd: Command, channel: Channel | None = None) -> str | None:
        """Run one command: its success text, or None when it wrote its own streamed response.
        Raises GtpError on failure."""
        self.searcher.stop_pondering()
        self._ponder_after = False
        if cmd.name in self.streaming:
            if channel is None:
                raise GtpError(f"{cmd.name} needs a streaming channel")
            self.streaming[cmd.name](cmd, channel)
            return None
        handler = self.handlers.get(cmd.name)
        if handler is None:
            raise GtpError("unknown command")
        return handler(cmd.args)

    def after_response(self) -> None:
        """Called once the response went out: start pondering after our move if enabled."""
        if self._ponder_after and self.config.ponder and not self.game.over:
            self.searcher.ponder(self.player.search_view(self.game, 3 - self.game.to_move)[0])
        self._ponder_after = False

    def stop(self) -> None:
        self.searcher.stop_pondering()

    # ----------------------------------------------------------------- helpers
    def _color(self, tok: str) -> int:
        return A.parse_color(tok)

    def _vertex(self, tok: str) -> int:
        try:
            return gtp_to_move(tok, self.size)
        except CoordinateError as e:
            raise GtpError(f"syntax error: {e}") from None

    def _nargs(self, args, n: int, usage: str) -> None:
        if len(args) != n:
            raise GtpError(f"syntax error: usage {usage}")

    def _new_game(self) -> None:
        self.game = Game(self.size, self.komi)
        self.player.reset()
        self.clock.reset(self.clock.settings)
        # A new game starts from nothing: with the evaluation cache and tree of the last game, a
        # deterministic search would replay the last game move for move (matches need variety).
        self._forget()

    def _forget(self) -> None:
        clear = getattr(self.evaluator, "clear_cache", None)
        if clear:
            clear()
        self.searcher.root = None

    def _set_to_move(self, color: int) -> None:
        if self.game.to_move != color:
            b = self.game.board.copy()
            b.to_move = color
            self.game.boards[-1] = b

    def _policy(self, game: Game) -> np.ndarray:
        """The network's move probabilities ``[N*N+1]`` for the game's current position."""
        from azgo.engine.features import encode_game
        planes = encode_game(game)[None]
        legal = game.board.legal_mask()[None]
        return np.array(self.evaluator.evaluate(planes, legal).policy[0], dtype=np.float64)

    def _limits(self, color: int) -> tuple[Limits, float | None]:
        cfg = self.config
        budget = self.player.budget(self.clock, self.game, color)
        visits = cfg.visits
        if visits is None and cfg.seconds is None and budget is None:
            visits = DEFAULT_VISITS
        early = cfg.early_stop == "always" or (budget is not None and self.clock.banks_time(color))
        return Limits(visits=visits, seconds=cfg.seconds, early_stop=early), budget

    def think(self, color: int, exclude=None, callback=None, interval=0.5):
        """Search for ``color`` to move; returns (SearchResult, move or None for resign)."""
        self._set_to_move(color)
        limits, budget = self._limits(color)
        decision = self.player.genmove(self.game, limits, budget=budget, exclude=exclude, callback=callback,
                                       interval=interval)
        result = decision.result
        self._note_cap(result.memory_capped)
        move, resign = decision.move, decision.resigned
        lead = f", lead {result.score_lead:+.1f}" if result.score_lead is not None else ""
        if decision.komi_offset:
            lead += f" (searched at komi {self.game.komi + decision.komi_offset:g}: dynamic komi)"
        log(f"azgo: {move_to_gtp(move, self.size)} winrate {100 * result.winrate:.1f}%{lead}, "
            f"{result.visits} visits ({result.reused_visits} reused), {result.playouts} playouts in "
            f"{result.seconds:.2f} s, {result.playouts_per_second:.0f} playouts/s")
        return result, (None if resign else move)

    def _note_cap(self, capped: bool) -> None:
        if capped and not self._capped_said:
            self._capped_said = True
            log(f"azgo: memory cap reached ({self.max_memory:.0f} MB): the search tree stops growing "
                "(moves come from the tree as it is; --max-memory raises the cap)")

    def _play_own(self, color: int, move: int | None, elapsed: float) -> str:
        if move is None:
            return "resign"
        self.game.play(move, color)
        self.clock.spend(color, elapsed)
        self._ponder_after = True
        return move_to_gtp(move, self.size)

    # ----------------------------------------------------------------- core commands
    def cmd_protocol_version(self, args) -> str:
        return "2"

    def cmd_name(self, args) -> str:
        return ENGINE_NAME

    def cmd_version(self, args) -> str:
        return lizzie_version() if self.config.lizzie else _version()

    def cmd_known_command(self, args) -> str:
        self._nargs(args, 1, "known_command NAME")
        return "true" if args[0] in self.handlers or args[0] in self.streaming else "false"

    def cmd_list_commands(self, args) -> str:
        return "\n".join(self.commands())

    def cmd_quit(self, args) -> str:
        self.quit_requested = True
        return ""

    def cmd_boardsize(self, args) -> str:
        self._nargs(args, 1, "boardsize SIZE")
        if not (args[0].isdigit() and args[0].isascii()) or len(args[0]) > 10:
            raise GtpError("unacceptable size")
        n = int(args[0])
        if not self.min_size <= n <= self.max_size:
            raise GtpError("unacceptable size")
        self._set_size(n)
        self._new_game()
        return ""

    def cmd_clear_board(self, args) -> str:
        self._new_game()
        return ""

    def cmd_komi(self, args) -> str:
        self._nargs(args, 1, "komi FLOAT")
        k = _float_arg(args[0])
        if abs(k) > 1000:
            raise GtpError("syntax error: komi out of range")
        self.komi = k
        self.game.komi = k
        return ""

    def cmd_play(self, args) -> str:
        self._nargs(args, 2, "play COLOR VERTEX")
        color = self._color(args[0])
        if args[1].lower() == "resign":
            return ""
        move = self._vertex(args[1])
        try:
            self.game.play(move, color)
        except IllegalMove:
            raise GtpError("illegal move") from None
        return ""

    def cmd_genmove(self, args) -> str:
        self._nargs(args, 1, "genmove COLOR")
        color = self._color(args[0])
        result, move = self.think(color)
        self._chat(result, move, color)
        return self._play_own(color, move, result.seconds)

    def _chat(self, result, move: int | None, color: int) -> None:
        """With ``--ogs-chat``: the line gtp2ogs posts in the game's chat (`azgo.gtp.ogs_chat`)."""
        if self.config.ogs_chat:
            from .ogs_chat import chat_line
            log(chat_line(result, move, color, self.size))

    def cmd_reg_genmove(self, args) -> str:
        self._nargs(args, 1, "reg_genmove COLOR")
        color = self._color(args[0])
        before = self.game.board
        history = self.player.resign_snapshot(color)
        result, move = self.think(color)
        self.game.boards[-1] = before
        self.player.restore_resign(color, history)  # the move is not played: it must not count towards resigning
        return "resign" if move is None else move_to_gtp(move, self.size)

    def cmd_kgs__genmove_cleanup(self, args) -> str:
        self._nargs(args, 1, "kgs-genmove_cleanup COLOR")
        color = self._color(args[0])
        exclude = {self.game.board.pass_move} if self._opponent_has_dead_stones(color) else None
        result, move = self.think(color, exclude=exclude)
        self._chat(result, move, color)
        return self._play_own(color, move, result.seconds)

    def cmd_undo(self, args) -> str:
        try:
            self.game.undo()
        except IndexError:
            raise GtpError("cannot undo") from None
        return ""

    def cmd_showboard(self, args) -> str:
        b = self.game.board
        side = "Black" if b.to_move == BLACK else "White"
        return (f"\n{b}\nmove {self.game.move_number}, {side} to move, komi {self.komi:g}, "
                f"captures B {b.prisoners[BLACK]} W {b.prisoners[WHITE]}")

    # ----------------------------------------------------------------- handicap
    def _check_empty(self) -> None:
        if self.game.moves or self.game.board.counts[BLACK] or self.game.board.counts[WHITE]:
            raise GtpError("board not empty")

    def cmd_fixed_handicap(self, args) -> str:
        self._nargs(args, 1, "fixed_handicap N")
        n = _int_arg(args[0])
        self._check_empty()
        try:
            points = self.game.place_fixed_handicap(n)
        except HandicapError:
            raise GtpError("invalid number of stones") from None
        return " ".join(move_to_gtp(p, self.size) for p in points)

    def cmd_place_free_handicap(self, args) -> str:
        self._nargs(args, 1, "place_free_handicap N")
        n = _int_arg(args[0])
        self._check_empty()
        area = self.size * self.size
        if n < 2 or n >= area:
            raise GtpError("invalid number of stones")
        top = max_fixed_handicap(self.size)
        points = list(fixed_handicap(self.size, min(n, top))) if top >= 2 else []
        while len(points) < n:  # more stones than fixed points: the network's favourite points
            trial = Game(self.size, self.komi)
            trial.setup(black=points, to_move=BLACK)
            policy = self._policy(trial)[:-1]
            policy[points] = -1.0
            points.append(int(np.argmax(policy)))
        self.game.set_handicap(points)
        return " ".join(move_to_gtp(p, self.size) for p in points)

    def cmd_set_free_handicap(self, args) -> str:
        self._check_empty()
        try:
            points = [gtp_to_move(a, self.size) for a in args]
        except CoordinateError:
            raise GtpError("bad vertex list") from None
        if len(points) < 2 or len(set(points)) != len(points) or self.game.board.pass_move in points \
                or len(points) >= self.size * self.size:
            raise GtpError("bad vertex list")
        try:
            self.game.set_handicap(points)
        except ValueError:
            raise GtpError("bad vertex list") from None
        return ""

    # ----------------------------------------------------------------- SGF
    def cmd_loadsgf(self, args) -> str:
        if len(args) not in (1, 2):
            raise GtpError("syntax error: usage loadsgf FILE [MOVE_NUMBER]")
        from azgo.engine.sgf import SgfError, load_sgf
        until = None
        if len(args) == 2:
            n = _int_arg(args[1])
            until = max(n - 1, 0)  # the position before move N is played
        try:
            rec = load_sgf(args[0])
            if not self.min_size <= rec.size <= self.max_size:
                raise GtpError("cannot load file: board size not supported by the network")
            game = rec.to_game(until)
        except SgfError as e:
            raise GtpError(f"cannot load file: {e}") from None
        self.load_game(game)
        return ""

    def cmd_printsgf(self, args) -> str:
        from azgo.engine.sgf import record_from_game, write_sgf
        rec = record_from_game(self.game, black="", white="")
        text = write_sgf(rec).decode("utf-8")
        if args:
            try:
                with open(args[0], "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as e:
                raise GtpError(f"cannot write file: {e.strerror or e}") from None
            return ""
        return text

    # ----------------------------------------------------------------- KGS and misc
    def cmd_kgs__game_over(self, args) -> str:
        self.searcher.stop_pondering()
        return ""

    def cmd_clear_cache(self, args) -> str:
        self._forget()
        return ""
