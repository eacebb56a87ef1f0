"""Self-play: many games per process advance together so that their leaves share one network call.

Per move (KataGo's efficiency tricks, shared/research/engines.md R5):

* playout cap randomization: with probability ``full_prob`` a full search (``full_visits``, fresh
  tree, root Dirichlet noise, forced playouts) whose result is recorded for training (``AZT[1]``);
  otherwise a cheap search (``cheap_visits``, tree reused, no noise) that is played but not trained
  on (``AZT[0]``);
* forced playouts with policy-target pruning (``AZX``), root policy temperature;
* the policy surprise of every full search (``AZK``: KL of the target from the network's raw prior),
  which ``azgo train --surprise-weight`` samples by;
* move choice: visits^(1/T) with T = 1 for the first ``temperature_moves`` moves, then the most visits;
* resignation when the root winrate stays under ``resign_threshold`` for ``resign_moves`` moves of
  that player, except in ``no_resign_fraction`` of the games, which are played out so that the
  false-resignation rate can be measured (``false_resignations``);
* no pass while the area score of the board as it stands says the mover loses (as in play), so
  that random early networks do not end games after a few moves;
* a maximum game length;
* forked starts (optional): ``opening_fraction`` of the games begin from the first 1..L moves of a
  random one of ``openings`` (e.g. the openings of real games against an opponent, ``load_openings``;
  ``opening_min_moves`` or, per opening, ``opening_lows`` instead of 1: see `azgo.training.fork_peaks`),
  played without search and recorded with ``AZT[0]`` (never trained on as policy targets) and the
  number of such moves in the root's ``AZO``, so that self-play also visits the positions those
  openings lead to;
* komi and handicap (optional, KataGo's way of teaching a network every komi): each game's komi is
  drawn around ``komi`` (the fair komi of the board: a normal spread of ``komi_stdev`` points, or in
  ``komi_wide_fraction`` of the games uniformly over ``komi_range``), rounded to a multiple of 0.5;
  ``handicap_fraction`` of the games start instead from 2..9 fixed handicap stones (as many as the
  board takes) with ``handicap_komi`` and White to move. Forked starts apply to even games only. Unless
  ``handicap_resign``, handicap games are played out: the score head learns what stones are worth only from
  games that reach a final position.
* an outside opponent (optional, ``opponent``: a GTP engine's command line, e.g. GNU Go): ``opponent_fraction``
  of the games are azgo against it, azgo's colour drawn per game (forked games: ``opponent_fork_fraction``
  of them, and with ``opponent_fork_side = "winner"`` the opponent takes the colour that won the game the
  start was forked from, per ``opening_winners``: it goes on from where the kill was played). Self-play
  cannot show the network a kill that neither side of it sees; an engine that reads tactics (GNU Go kills
  the big groups azgo's network counts alive) plays those kills, and the game's result and final ownership
  label azgo's positions. azgo's moves in such
  games are all full searches (``AZT[1]``: policy, value, ownership targets); the opponent's carry ``AZT[0]``
  (never trained on) and the root ``AZE`` names its colour and name (``W:GNU Go``). The engine gets the same
  start (handicap stones by ``set_free_handicap``, the forked opening's moves) and plays in a thread of its
  own while the other games' searches go on; a game whose engine fails or plays an illegal move is dropped.
* Gumbel root search (optional, ``gumbel_m`` > 0; Danihelka et al. 2022, `azgo.engine.gumbel`): the root
  samples ``gumbel_m`` moves by Gumbel-top-k and spends the visits by sequential halving instead of PUCT
  with Dirichlet noise; the move played is the one left, and a full search records the improved policy
  ``softmax(logits + sigma(completed q))`` (in thousandths) as its ``AZX`` target, which stays informative
  at few visits where visit counts are noise.

Each finished game is written as one SGF file into the archive folder, atomically (a temporary
file, then a rename), with azgo's private properties (see ``azgo.engine.sgf``). Imports no torch.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import math
import os
import random
import shlex
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from azgo.engine import planes as P
from azgo.engine.atomic import atomic_write
from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import CoordinateError, gtp_to_move, move_to_gtp
from azgo.engine.game import Game
from azgo.engine.handicap import max_fixed_handicap
from azgo.engine.mcts import SearchConfig
from azgo.engine.scoring import area_score, result_string
from azgo.engine.player import Player, PlayerConfig
from azgo.engine.resign import ResignConfig, ResignTracker
from azgo.engine.search import Searcher
from azgo.engine.sgf import FORMAT_VERSION, SgfError, encode_visits, load_sgf, record_from_game, write_sgf

from azgo.gtp.client import EngineError, GtpClient

from .dataset import find_sgf_files
from .targets import policy_target


OPPONENT_TIMEOUT = 300.0  # seconds an outside opponent may take for one reply before its game is dropped


@dataclass(frozen=True)
class SelfPlayConfig:
    """Self-play settings (defaults for 9x9 on a few CPU cores)."""

    size: int = 9
    komi: float = 7.5
    full_visits: int = 160
    cheap_visits: int = 32
    full_prob: float = 0.25
    noise_fraction: float = 0.25
    dirichlet_total: float = 10.83
    forced_playouts_k: float = 2.0
    root_policy_temperature: float = 1.1
    temperature_moves: int = 8
    max_moves: int | None = None  # default 2 * size * size
    resign_threshold: float = 0.05
    resign_moves: int = 3
    no_resign_fraction: float = 0.1
    concurrent_games: int = 16
    leaves_per_game: int = 4
    precision: str = "fp32"  # the network file: fp32 | int8 (its .int8.onnx sibling) | auto (int8 where beside)
    openings: tuple[tuple[int, ...], ...] = ()  # move sequences from the empty board, Black first (move indices)
    opening_fraction: float = 0.0  # share of the games that start from a random prefix of one of ``openings``
    opening_min_moves: int = 1  # the shortest prefix taken (the longest: the whole opening)
    opening_lows: tuple[int, ...] = ()  # per opening, its shortest prefix instead (``fork_peaks.peak_openings``)
    komi_stdev: float = 0.0  # a game's komi ~ N(komi, komi_stdev), rounded to 0.5 and clipped to komi_range
    komi_wide_fraction: float = 0.0  # share of the games with a komi uniform over komi_range instead
    komi_range: tuple[float, float] = (-10.0, 20.0)
    handicap_fraction: float = 0.0  # share of the games started from fixed handicap stones
    handicap_stones: tuple[int, int] = (2, 9)  # fewest and most stones (capped by what the board takes)
    handicap_komi: float = 0.5
    handicap_resign: bool = True  # False: handicap games are played out (score and ownership targets from each)
    gumbel_m: int = 0  # > 0: Gumbel root search with sequential halving over this many sampled moves
    opponent: str = ""  # a GTP engine's command line: ``opponent_fraction`` of the games are azgo against it
    opponent_fraction: float = 0.0
    opponent_name: str = ""  # its name in the records (``PB``/``PW``, ``AZE``); default the program's file name
    opponent_fork_fraction: float | None = None  # share of the forked games against it (None: opponent_fraction)
    opponent_fork_side: str = "any"  # forked games: "any" colour, or "winner": the colour that won the source game
    opening_winners: tuple[int, ...] = ()  # per opening, the colour that won the game it comes from (0: unknown)

    def __post_init__(self) -> None:
        if not 0 <= self.opponent_fraction <= 1:
            raise ValueError("opponent_fraction must be in [0, 1]")
        if self.opponent_fraction > 0 and not self.opponent.strip():
            raise ValueError("opponent_fraction > 0 needs an opponent (a GTP engine's command line)")
        if self.opponent_fork_fraction is not None:
            if not 0 <= self.opponent_fork_fraction <= 1:
                raise ValueError("opponent_fork_fraction must be in [0, 1]")
            if self.opponent_fork_fraction > 0 and not self.opponent.strip():
                raise ValueError("opponent_fork_fraction > 0 needs an opponent (a GTP engine's command line)")
        if self.opponent_fork_side not in ("any", "winner"):
            raise ValueError(f"opponent_fork_side must be any or winner, got {self.opponent_fork_side!r}")
        if self.opening_winners and (len(self.opening_winners) != len(self.openings) or any(
                w not in (0, BLACK, WHITE) for w in self.opening_winners)):
            raise ValueError("opening_winners needs one colour per opening (BLACK, WHITE or 0 when unknown)")
        if not 0 <= self.opening_fraction <= 1:
            raise ValueError("opening_fraction must be in [0, 1]")
        if self.opening_fraction > 0 and not self.openings:
            raise ValueError("opening_fraction > 0 needs openings")
        if any(not seq for seq in self.openings):
            raise ValueError("every opening needs at least one move")
        if self.opening_min_moves < 1:
            raise ValueError("opening_min_moves must be >= 1")
        if self.opening_lows and (len(self.opening_lows) != len(self.openings) or any(
                not 1 <= lo <= len(seq) for lo, seq in zip(self.opening_lows, self.openings))):
            raise ValueError("opening_lows needs one shortest prefix per opening, each from 1 to its length")
        if self.precision not in ("fp32", "int8", "auto"):
            raise ValueError(f"precision must be fp32, int8 or auto, got {self.precision!r}")
        if not 0 <= self.full_prob <= 1 or not 0 <= self.no_resign_fraction <= 1:
            raise ValueError("probabilities must be in [0, 1]")
        if self.full_visits < 1 or self.cheap_visits < 1:
            raise ValueError("visits must be >= 1")
        if self.gumbel_m < 0:
            raise ValueError("gumbel_m must be >= 0")
        if self.concurrent_games < 1 or self.leaves_per_game < 1:
            raise ValueError("concurrent_games and leaves_per_game must be >= 1")
        lo, hi = self.komi_range
        if not (self.komi_stdev >= 0 and lo <= hi and 0 <= self.komi_wide_fraction <= 1):
            raise ValueError("komi_stdev must be >= 0, komi_range (low, high) with low <= high, "
                             "komi_wide_fraction in [0, 1]")
        if (self.komi_stdev > 0 or self.komi_wide_fraction > 0) and not lo <= self.komi <= hi:
            raise ValueError(f"komi {self.komi} lies outside komi_range {self.komi_range}")
        a, b = self.handicap_stones
        if not (0 <= self.handicap_fraction <= 1 and 2 <= a <= b <= 9):
            raise ValueError("handicap_fraction must be in [0, 1] and handicap_stones (fewest, most) within 2..9")

    def draw_komi(self, rng: random.Random) -> float:
        """One game's komi (see the module docstring); ``komi`` itself when no spread is set."""
        lo, hi = self.komi_range
        if self.komi_wide_fraction > 0 and rng.random() < self.komi_wide_fraction:
            k = rng.uniform(lo, hi)
        elif self.komi_stdev > 0:
            k = rng.gauss(self.komi, self.komi_stdev)
        else:
            return self.komi
        return min(max(round(k * 2) / 2, math.ceil(lo * 2) / 2), math.floor(hi * 2) / 2)

    def draw_handicap(self, rng: random.Random) -> int:
        """Handicap stones for one game (0: an even game)."""
        top = min(self.handicap_stones[1], max_fixed_handicap(self.size))
        if self.handicap_fraction <= 0 or top < 2 or rng.random() >= self.handicap_fraction:
            return 0
        return rng.randint(min(self.handicap_stones[0], top), top)

    @property
    def move_cap(self) -> int:
        return self.max_moves if self.max_moves is not None else 2 * self.size * self.size


def load_openings(paths, size: int, max_moves: int = 8) -> tuple[tuple[int, ...], ...]:
    """The first ``max_moves`` moves of every ``size`` x ``size`` game in ``paths`` (SGF files or folders,
    searched recursively) as move-index tuples for ``SelfPlayConfig.openings``, in sorted path order.

    Games with setup stones or handicap, other board sizes, or that do not begin with Black are left out;
    an opening ends before the first pass or illegal move (`opening_moves`). Duplicate openings are kept once.
    Raises ``ValueError`` when no opening is found (``DatasetError`` for a path that matches nothing).
    """
    seen: dict[tuple[int, ...], None] = {}
    for f in sorted(find_sgf_files(paths)):
        seq = opening_moves(f, size, max_moves)
        if seq:
            seen.setdefault(seq, None)
    if not seen:
        raise ValueError(f"no {size}x{size} openings in {', '.join(map(str, paths))}")
    return tuple(seen)


def opening_moves(path: str, size: int, max_moves: int) -> tuple[int, ...]:
    """The first ``max_moves`` moves of the SGF game ``path`` as move indices, up to its first pass or
    illegal move; ``()`` for an unreadable file, another board size, setup stones or handicap."""
    try:
        rec = load_sgf(path)
    except SgfError:
        return ()
    if rec.size != size or rec.handicap or any(rec.setup or ()):
        return ()
    game = Game(size, rec.komi)
    seq: list[int] = []
    for node in rec.nodes:
        if len(seq) >= max_moves or node.setup or node.color is None or node.move is None:
            break
        if node.color != game.to_move or node.move == game.board.pass_move or not game.board.is_legal(node.move):
            break
        game.play(node.move)
        seq.append(int(node.move))
    return tuple(seq)


def policy_surprise(counts, prior) -> float:
    """KL(target || prior) in nats: ``counts`` are a search's (pruned) visit counts and ``prior`` the
    network's policy over the same moves (both 1-D, same order). 0 when the search agreed with the
    network; large where it found what the network did not expect (KataGo's policy surprise)."""
    t = np.asarray(counts, np.float64)
    total = t.sum()
    if total <= 0:
        return 0.0
    t = t / total
    p = np.maximum(np.asarray(prior, np.float64), 1e-8)
    p = p / p.sum()
    nz = t > 0
    return float(max(0.0, np.sum(t[nz] * np.log(t[nz] / p[nz]))))


def thousandths(p: np.ndarray) -> np.ndarray:
    """A distribution as whole thousandths that sum to exactly 1000 (largest remainders round up)."""
    scaled = np.asarray(p, dtype=np.float64) * 1000.0 / max(float(np.sum(p)), 1e-12)
    out = np.floor(scaled).astype(np.int64)
    short = 1000 - int(out.sum())
    if short > 0:
        out[np.argsort(-(scaled - out), kind="stable")[:short]] += 1
    return out


def player_config(cfg: SelfPlayConfig) -> PlayerConfig:
    """Self-play's move rules: sampled opening moves, no answering passes, resignation from move 1."""
    return PlayerConfig(temperature_moves=cfg.temperature_moves, answer_pass=False,
                        resign=ResignConfig(enabled=True, threshold=cfg.resign_threshold,
                                            consecutive=cfg.resign_moves, min_move_fraction=0.0))


def search_config(cfg: SelfPlayConfig) -> SearchConfig:
    return SearchConfig(batch_size=cfg.leaves_per_game, noise_fraction=cfg.noise_fraction,
                        dirichlet_total=cfg.dirichlet_total, forced_playouts_k=cfg.forced_playouts_k,
                        root_policy_temperature=cfg.root_policy_temperature, lcb=False)


@dataclass
class _Slot:
    """One game in progress and the search for its next move."""

    game: Game
    searcher: Searcher
    player: Player
    seed: int
    resign_on: bool
    rng: random.Random
    props: list[dict] = field(default_factory=list)
    opening: int = 0  # moves of a forked start played before the first search
    full: bool = False
    target: int = 0
    result: str | None = None
    started: float = field(default_factory=time.time)
    opp: int = 0  # the outside opponent's colour (0: a self-play game)
    engine: GtpClient | None = None  # the opponent's process, once started
    pending: cf.Future | None = None  # the opponent's next reply (a GTP vertex, "resign"), or its start
    dropped: str = ""  # why the game is given up (its opponent failed)


@dataclass
class SelfPlayStats:
    games: int = 0
    moves: int = 0
    evals: int = 0
    network_calls: int = 0
    nn_seconds: float = 0.0
    seconds: float = 0.0
    opponent_games: int = 0  # of ``games``: those against the outside opponent
    dropped: int = 0  # games given up because their outside opponent failed


def write_game_file(out_dir: str, data: bytes, worker: str, seed: int) -> str:
    """Write one game's SGF bytes into the archive ``out_dir`` atomically; returns the file's path.

    The name is ``<local time>-<worker>-<game seed, 10 digits>-<sha1 of the bytes, 8 hex>.sgf``; the
    bytes are written with `azgo.engine.atomic.atomic_write`, so a reader (or a kill) never sees half a
    game.
    """
    os.makedirs(out_dir, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:8]
    name = f"{time.strftime('%Y%m%d-%H%M%S')}-{worker}-{seed:010d}-{digest}.sgf"
    return str(atomic_write(os.path.join(out_dir, name), data))


class SelfPlayRunner:
    """Plays games with one evaluator, ``cfg.concurrent_games`` at a time, batching their leaves."""

    def __init__(self, evaluator, cfg: SelfPlayConfig = SelfPlayConfig(), seed: int = 0, net_id: str = "",
                 out_dir: str | None = None, worker: str = "w0"):
        self.evaluator = evaluator
        self.cfg = cfg
        self.seed = seed
        self.net_id = net_id
        self.out_dir = out_dir
        self.worker = worker
        self.scfg = search_config(cfg)
        self.pcfg = player_config(cfg)
        self.rng = random.Random(seed)
        self._next_game = 0
        self.stats = SelfPlayStats()
        self.finished: list[tuple[str | None, object]] = []
        self._pool: cf.ThreadPoolExecutor | None = None  # the outside opponents' replies, one thread per game
        self._opponent_started = False

    # ------------------------------------------------------------------ game slots
    def _new_slot(self) -> _Slot:
        gseed = (self.seed * 1_000_003 + self._next_game) & 0x7FFFFFFF
        self._next_game += 1
        rng = random.Random(gseed)
        searcher = Searcher(self.evaluator, self.scfg, seed=gseed)
        cfg = self.cfg
        resign_on = rng.random() >= cfg.no_resign_fraction
        stones = cfg.draw_handicap(rng)
        if stones and not cfg.handicap_resign:
            resign_on = False
        game = Game(cfg.size, cfg.handicap_komi if stones else cfg.draw_komi(rng))
        if stones:
            game.place_fixed_handicap(stones)
        slot = _Slot(game, searcher, Player(searcher, self.pcfg), gseed, resign_on=resign_on, rng=rng)
        fork = None
        if not stones and cfg.openings and rng.random() < cfg.opening_fraction:
            i = fork = rng.randrange(len(self.cfg.openings))
            seq = self.cfg.openings[i]
            low = self.cfg.opening_lows[i] if self.cfg.opening_lows else min(self.cfg.opening_min_moves, len(seq))
            for move in seq[:rng.randint(low, len(seq))]:
                if not slot.game.board.is_legal(move):
                    break
                slot.game.play(move)
                slot.props.append({"AZT": "0"})
                slot.opening += 1
        against = cfg.opponent_fraction
        if fork is not None and cfg.opponent_fork_fraction is not None:
            against = cfg.opponent_fork_fraction
        if against > 0 and rng.random() < against:
            winner = cfg.opening_winners[fork] if fork is not None and cfg.opening_winners else 0
            if cfg.opponent_fork_side == "winner" and winner:
                slot.opp = winner  # the opponent goes on with the side that won the game the start comes from
            else:
                slot.opp = rng.choice((BLACK, WHITE))
        return slot

    # ------------------------------------------------------------------ the outside opponent
    @property
    def opponent_name(self) -> str:
        return self.cfg.opponent_name or os.path.basename(shlex.split(self.cfg.opponent)[0])

    def _ask_opponent(self, slot: _Slot) -> None:
        """Ask the opponent for its move in a thread (``slot.pending``): the whole game so far the first time
        (its process is started here), afterwards azgo's last move."""
        g = slot.game
        cmds: list[str] = []
        if self._pool is None:
            self._pool = cf.ThreadPoolExecutor(max_workers=self.cfg.concurrent_games, thread_name_prefix="opponent")
        if slot.engine is None:
            try:
                slot.engine = GtpClient(self.cfg.opponent, name=self.opponent_name, timeout=OPPONENT_TIMEOUT,
                                        ask_name=False)
            except EngineError as e:
                if not self._opponent_started:
                    raise  # never started: a wrong command line, said at once
                failed: cf.Future = cf.Future()  # started before: this game is dropped like any failure
                failed.set_exception(e)
                slot.pending = failed
                return
            self._opponent_started = True
            cmds = [f"boardsize {g.size}", "clear_board", f"komi {g.komi:g}"]
            stones = g.boards[0].stones(BLACK)
            if stones:
                cmds.append("set_free_handicap " + " ".join(move_to_gtp(m, g.size) for m in stones))
            moves = g.moves
        else:
            moves = g.moves[-1:]
        cmds += [f"play {'b' if c == BLACK else 'w'} {move_to_gtp(m, g.size)}" for c, m in moves if m is not None]
        colour = "b" if slot.opp == BLACK else "w"
        engine = slot.engine

        def turn() -> str:
            engine.batch(cmds, check=True)
            return engine.send(f"genmove {colour}")
        slot.pending = self._pool.submit(turn)

    def _opponent_moved(self, slot: _Slot) -> None:
        """Play the opponent's finished reply into the game (or end the game by its resignation, or drop it)."""
        fut, slot.pending = slot.pending, None
        g = slot.game
        try:
            reply = fut.result().strip().lower()
            if reply == "resign":
                slot.result = ("B" if slot.opp == WHITE else "W") + "+R"
                return
            move = gtp_to_move(reply, g.size)
            if not g.board.is_legal(move):
                raise ValueError(f"illegal move {reply!r} by the opponent")
            g.play(move)
        except (EngineError, CoordinateError, ValueError) as e:
            slot.dropped = str(e)
            return
        slot.props.append({"AZT": "0"})
        self.stats.moves += 1
        if g.over or g.move_number >= self.cfg.move_cap:
            slot.result = result_string(area_score(g.board, g.komi))

    def _close_engine(self, slot: _Slot) -> None:
        if slot.engine is not None:
            slot.engine.close(kill=slot.pending is not None and not slot.pending.done())
            slot.engine = None

    def _start_move(self, slot: _Slot) -> None:
        if slot.opp and slot.game.to_move == slot.opp:
            self._ask_opponent(slot)
            return
        # every azgo move against an opponent is a full (recorded) search
        slot.full = bool(slot.opp) or slot.rng.random() < self.cfg.full_prob
        slot.target = self.cfg.full_visits if slot.full else self.cfg.cheap_visits
        gumbel = (self.cfg.gumbel_m, slot.target) if self.cfg.gumbel_m > 0 else None
        slot.searcher.begin(slot.game, noise=slot.full, reuse=not slot.full, gumbel=gumbel)

    # ------------------------------------------------------------------ moves
    def _finish_move(self, slot: _Slot) -> None:
        cfg = self.cfg
        s = slot.searcher
        g = slot.game
        root = s.root
        me = g.to_move
        n = g.size
        if root.terminal is not None or not root.expanded or root.N is None or root.N.sum() == 0:
            move = g.board.pass_move
        else:
            move = slot.player.choose(g)
        visits = {int(m): int(c) for m, c in zip(root.moves, root.N)} if root.expanded else {}
        props = {"AZN": str(int(root.N.sum()) if root.expanded else 0), "AZT": "1" if slot.full else "0",
                 "AZQ": f"{root.q():.4f}", "AZV": f"{root.value:.4f}", "AZP": encode_visits(visits, n)}
        if slot.full and root.expanded and s.gumbel is not None and root.N.sum() > 0:
            improved = s.gumbel.policy_target(root)  # the Gumbel target, in thousandths
            parts = thousandths(improved)
            props["AZX"] = encode_visits({int(m): int(c) for m, c in zip(root.moves, parts) if c > 0}, n)
            net = s.root_policy[root.moves] if s.root_policy is not None else root.raw_prior
            props["AZK"] = f"{policy_surprise(improved, net):.4f}"
        elif slot.full and root.expanded:
            target = policy_target(s, prune=cfg.forced_playouts_k > 0)  # the recorded target, computed once
            if cfg.forced_playouts_k > 0:
                pruned = {int(m): int(target[m]) for m in root.moves if target[m] > 0}
                if pruned != {k: v for k, v in visits.items() if v > 0}:
                    props["AZX"] = encode_visits(pruned, n)
            if root.N.sum() > 0:
                net = s.root_policy[root.moves] if s.root_policy is not None else root.raw_prior
                props["AZK"] = f"{policy_surprise(target[root.moves], net):.4f}"
        winrate = (root.q() + 1) / 2
        lead = root.score if root.expanded else None  # the network's lead at the root, ``me``'s
        if slot.player.should_resign(g, me, winrate, enabled=slot.resign_on, lead=lead):
            slot.result = ("W" if me == BLACK else "B") + "+R"
            return
        g.play(move)
        slot.props.append(props)
        self.stats.moves += 1
        if g.over or g.move_number >= cfg.move_cap:
            slot.result = result_string(area_score(g.board, g.komi))

    def _write(self, slot: _Slot) -> str | None:
        g = slot.game
        root_props = {"AZF": str(FORMAT_VERSION), "AZM": self.net_id or "unknown",
                      "AZR": f"{self.cfg.resign_threshold:g}" if slot.resign_on else "off",
                      "AZS": str(slot.seed)}
        if slot.opening:
            root_props["AZO"] = str(slot.opening)
        black = white = self.net_id
        if slot.opp:
            root_props["AZE"] = f"{'B' if slot.opp == BLACK else 'W'}:{self.opponent_name}"
            if slot.opp == BLACK:
                black = self.opponent_name
            else:
                white = self.opponent_name
        rec = record_from_game(g, black=black, white=white, result=slot.result or "",
                               root_props=root_props, move_props=slot.props)
        if not self.out_dir:
            self.finished.append((None, rec))
            return None
        path = write_game_file(self.out_dir, write_sgf(rec), self.worker, slot.seed)
        self.finished.append((path, rec))
        return path

    # ------------------------------------------------------------------ the loop
    def play(self, games: int, progress=None, should_stop=None) -> SelfPlayStats:
        """Play ``games`` games to the end and write them. ``progress(stats)`` after every game;
        ``should_stop()`` is checked between network calls (finished games are kept)."""
        slots: list[_Slot] = []
        try:
            return self._play(games, slots, progress, should_stop)
        finally:
            for slot in slots:  # unfinished games (stopped): their opponents go
                self._close_engine(slot)
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None

    def _play(self, games: int, slots: list, progress, should_stop) -> SelfPlayStats:
        cfg = self.cfg
        t0 = time.perf_counter()
        started = 0
        n = cfg.size
        while True:
            while len(slots) < cfg.concurrent_games and started < games:
                slot = self._new_slot()
                started += 1
                slots.append(slot)
                self._start_move(slot)
            if not slots or (should_stop is not None and should_stop()):
                break
            work = []
            for slot in slots:
                if slot.pending is not None:  # the opponent is thinking
                    continue
                s = slot.searcher
                want = min(cfg.leaves_per_game, max(1, slot.target - s.root.visits))
                pending, _ = s.gather(want)
                if pending:
                    work.append((slot, pending))
            total = sum(len(p) for _, p in work)
            if total:
                planes = np.zeros((total, P.NUM_PLANES, n, n), dtype=np.float32)
                legal = np.empty((total, n * n + 1), dtype=bool)
                keys: list[int] = []
                offset = 0
                for slot, pending in work:
                    keys += slot.searcher.encode_leaves([leaf for _, leaf in pending], planes, legal, offset)
                    offset += len(pending)
                t = time.perf_counter()
                ev = self.evaluator.evaluate(planes, legal, keys or None)
                self.stats.nn_seconds += time.perf_counter() - t
                self.stats.network_calls += 1
                self.stats.evals += total
                offset = 0
                for slot, pending in work:
                    slot.searcher.complete(pending, ev, legal, offset)
                    offset += len(pending)
            elif all(slot.pending is not None for slot in slots):  # every game waits on its opponent
                cf.wait([slot.pending for slot in slots if slot.pending is not None], timeout=1.0,
                        return_when=cf.FIRST_COMPLETED)
            keep = []
            for slot in slots:
                if slot.pending is not None:
                    if not slot.pending.done():
                        keep.append(slot)
                        continue
                    self._opponent_moved(slot)
                elif slot.searcher.searching_done or slot.searcher.root.visits >= slot.target:
                    self._finish_move(slot)
                else:
                    keep.append(slot)
                    continue
                if slot.dropped:
                    self._close_engine(slot)
                    self.stats.dropped += 1
                    print(f"self-play: a game against {self.opponent_name} dropped at move "
                          f"{slot.game.move_number}: {slot.dropped}", file=sys.stderr, flush=True)
                    if self.stats.dropped <= max(3, games // 10):
                        started -= 1  # played again, unless the opponent keeps failing
                    continue
                if slot.result is not None:
                    self._close_engine(slot)
                    self._write(slot)
                    self.stats.games += 1
                    self.stats.opponent_games += bool(slot.opp)
                    self.stats.seconds = time.perf_counter() - t0
                    if progress is not None:
                        progress(self.stats)
                    continue
                self._start_move(slot)
                keep.append(slot)
            slots[:] = keep
        self.stats.seconds = time.perf_counter() - t0
        return self.stats


def false_resignations(paths, threshold: float | None = None, consecutive: int = 3) -> tuple[int, int]:
    """From resignation-disabled games (``AZR[off]``): (games where a player would have resigned,
    of those the games that player went on to win). Uses each move's ``AZQ`` (the mover's value)."""
    would, wrong = 0, 0
    for path in paths:
        try:
            rec = load_sgf(path)
        except ValueError:
            continue
        if rec.root_props.get("AZR") != "off" or not rec.result[:1] in ("B", "W"):
            continue
        cfg = ResignConfig(threshold=threshold if threshold is not None else 0.05, consecutive=consecutive,
                           min_move_fraction=0.0)  # self-play's rule (player_config)
        trackers = {BLACK: ResignTracker(cfg), WHITE: ResignTracker(cfg)}
        area = rec.size * rec.size
        loser = None
        for k, node in enumerate(rec.nodes):
            if node.move is None or "AZQ" not in node.props:
                continue
            wr = (float(node.props["AZQ"]) + 1) / 2
            if trackers[node.color].observe(wr, k, area):
                loser = node.color
                break
        if loser is not None:
            would += 1
            winner = BLACK if rec.result.startswith("B") else WHITE
            wrong += int(winner == loser)
    return would, wrong
