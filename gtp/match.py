"""Engine-vs-engine matches over GTP (``azgo match``): any two GTP command lines, alternating colours.

Each game: ``boardsize``, ``clear_board``, ``komi`` (and ``time_settings`` when a time control is
given) to both engines, then ``genmove`` to the side to move and ``play`` of its answer to the other.
The runner keeps its own board (azgo's rules, positional superko) and adjudicates: an illegal or
unparsable move loses (``B+F``/``W+F``), ``resign`` loses (``B+R``/``W+R``), running out of time loses
(``B+T``/``W+T``), two consecutive passes end the game and Tromp-Taylor area scoring of the final
board decides (no dead-stone removal: engines are expected to play it out), a game over the move cap
is scored as it stands. An engine that dies (its process exits or stops answering) loses the game
(``+F``) and is started again for the next one; with ``replay_crashes`` naming that engine (``"b"``, the
opponent, in a strength line; ``"a"`` or ``"both"``) such a game is void instead (written under ``void/``
with ``RE[Void]``) and played again, so a strength line is not scored by an opponent's bug (GNU Go 3.8
segfaults now and then on 19x19) while a crash of the engine measured still loses. With
``void_time_losses`` a game lost on time is void and played again the same way: on a shared machine a
flag measures the load (another job taking the cores), not the engines; an engine that overruns again and
again still loses after ``max_replays`` tries. Every game is
written as SGF. The summary gives wins, the win rate of engine A with a 95% Wilson interval, and the
Elo difference with the interval mapped through the same logistic formula.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field

from azgo.engine.atomic import atomic_write
from azgo.engine.board import BLACK, WHITE, IllegalMove, Rules
from azgo.engine.coords import CoordinateError, gtp_to_move, move_to_gtp
from azgo.engine.game import Game
from azgo.engine.scoring import area_score, result_string
from azgo.engine.timecontrol import Clock, TimeSettings, parse_time_settings, settings_words

from .client import EngineError, GtpClient  # noqa: F401  (re-exported: the match's engines)


@dataclass
class GameOutcome:
    """One finished game. ``winner`` is BLACK, WHITE or None (draw); ``a_black``: engine A had Black."""

    winner: int | None
    result: str
    reason: str
    a_black: bool
    moves: list[tuple[int, int]] = field(default_factory=list)
    game: Game | None = None
    seconds: dict = field(default_factory=dict)
    crashed: str | None = None  # the name of an engine that died during the game (its loss is a "+F")
    flagged: str | None = None  # the name of an engine that ran out of time (its loss is a "+T")


def send_time_settings(engine: GtpClient, s: TimeSettings) -> None:
    """Tell ``engine`` the clock ``s`` as gtp2ogs does: Fischer through ``kata-time_settings`` (else Canadian
    with one stone a period), byo-yomi through ``kgs-time_settings`` (else Canadian), the rest by
    ``time_settings``."""
    if s.kind == "fischer":
        try:
            engine.send("kata-time_settings " + " ".join(settings_words(s)))
        except EngineError:
            engine.send(f"time_settings {max(s.main - s.increment, 0):g} {max(s.increment, 1):g} 1")
    elif s.kind == "byoyomi":
        try:
            engine.send(f"kgs-time_settings byoyomi {s.main:g} {s.period:g} {s.periods}")
        except EngineError:
            engine.send(f"time_settings {s.main + s.period * (s.periods - 1):g} {s.period:g} 1")
    elif s.kind == "canadian":
        engine.send(f"time_settings {s.main:g} {s.period:g} {s.stones}")
    else:
        engine.send(f"time_settings {s.main:g} 0 0")


def send_time_left(engine: GtpClient, clock: Clock, color: int) -> None:
    """``time_left`` for ``color`` before its move: main time with 0 stones, or the current overtime period
    (byo-yomi: the periods left; Canadian: the stones left). An engine that refuses it plays on."""
    c = clock.clocks[color]
    if c.in_overtime:
        left = c.period_left
        stones = c.periods_left if clock.settings.kind == "byoyomi" else c.stones_left
    else:
        left, stones = c.main_left, 0
    try:
        engine.send(f"time_left {'black' if color == BLACK else 'white'} {int(left)} {stones}")
    except EngineError:
        pass


def play_game(black: GtpClient, white: GtpClient, size: int, komi: float, time_settings: TimeSettings | None = None,
              max_moves: int | None = None, rules: Rules = Rules(), handicap: int = 0,
              opening: list[tuple[int, int]] | None = None) -> GameOutcome:
    """Play one game between two started engines; returns the outcome (``a_black`` left False).

    ``handicap`` stones: both engines get ``fixed_handicap N`` and White moves first. ``opening``: ``(color,
    move)`` pairs (moves as in ``azgo.engine.coords``) played first and sent to both engines as ``play``, so that
    the game goes on from that position (the clock starts after them)."""
    engines = {BLACK: black, WHITE: white}
    for e in engines.values():
        e.send(f"boardsize {size}")
        e.send("clear_board")
        e.send(f"komi {komi:g}")
    game = Game(size, komi, rules)
    if handicap:
        points = game.place_fixed_handicap(handicap)
        want = sorted(points)
        for e in engines.values():
            got = e.send(f"fixed_handicap {handicap}").split()
            if sorted(gtp_to_move(v, size) for v in got) != want:
                raise EngineError(f"{e.name} placed handicap {' '.join(got)}, not the GTP points")
    for c, move in opening or ():
        game.play(move, c)
        for e in engines.values():
            e.send(f"play {'black' if c == BLACK else 'white'} {move_to_gtp(move, size)}")
    clock = Clock(time_settings or TimeSettings())
    if time_settings is not None and time_settings.kind != "none":
        for e in engines.values():
            send_time_settings(e, time_settings)
    cap = max_moves if max_moves is not None else 3 * size * size
    spent = {BLACK: 0.0, WHITE: 0.0}
    color = game.to_move
    letter = {BLACK: "B", WHITE: "W"}
    while True:
        if game.over:
            score = area_score(game.board, komi)
            winner = BLACK if score > 0 else WHITE if score < 0 else None
            return GameOutcome(winner, result_string(score), "score", False, game.moves, game, spent)
        if game.move_number >= cap:
            score = area_score(game.board, komi)
            winner = BLACK if score > 0 else WHITE if score < 0 else None
            return GameOutcome(winner, result_string(score), "move cap", False, game.moves, game, spent)
        me, other = engines[color], engines[3 - color]
        if clock.settings.kind != "none":
            send_time_left(me, clock, color)
        t = time.monotonic()
        try:
            reply = me.send(f"genmove {'black' if color == BLACK else 'white'}").lower()
        except EngineError as e:
            return GameOutcome(3 - color, f"{letter[3 - color]}+F", f"{me.name}: {e}", False, game.moves, game, spent,
                               crashed=me.name if me.died() else None)
        elapsed = time.monotonic() - t
        spent[color] += elapsed
        clock.spend(color, elapsed)
        if clock.clocks[color].flagged:
            return GameOutcome(3 - color, f"{letter[3 - color]}+T", f"time: {me.name} took {elapsed:.2f} s",
                               False, game.moves, game, spent, flagged=me.name)
        if reply == "resign":
            return GameOutcome(3 - color, f"{letter[3 - color]}+R", "resign", False, game.moves, game, spent)
        try:
            move = gtp_to_move(reply, size)
            game.play(move, color)
        except (CoordinateError, IllegalMove) as e:
            return GameOutcome(3 - color, f"{letter[3 - color]}+F", f"{me.name} played {reply!r}: {e}",
                               False, game.moves, game, spent)
        try:
            other.send(f"play {'black' if color == BLACK else 'white'} {move_to_gtp(move, size)}")
        except EngineError as e:
            return GameOutcome(color, f"{letter[color]}+F", f"{other.name}: {e}", False, game.moves, game, spent,
                               crashed=other.name if other.died() else None)
        color = 3 - color


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a win rate (draws count half)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def elo(p: float) -> float:
    """Elo difference for win probability ``p`` (clamped away from 0 and 1)."""
    p = min(max(p, 1e-4), 1 - 1e-4)
    return -400.0 * math.log10(1.0 / p - 1.0)


def _elo_text(p: float) -> str:
    """Elo of a win rate for printing: a clean sweep has no finite Elo, so 0 and 1 print as -inf/+inf."""
    if p <= 0.0:
        return "-inf"
    if p >= 1.0:
        return "+inf"
    return f"{elo(p):+.0f}"


@dataclass
class MatchSummary:
    games: int
    a_wins: float
    b_wins: float
    draws: int
    a_name: str
    b_name: str
    seconds: dict = field(default_factory=lambda: {"a": [0.0, 0], "b": [0.0, 0]})  # engine -> [seconds, moves]
    scores: list = field(default_factory=list)  # A's score of each game in order (1, 0.5, 0)
    by_colour: dict = field(default_factory=lambda: {"black": [0.0, 0.0], "white": [0.0, 0.0]})  # A's [score, games]

    def add_time(self, engine: str, seconds: float, moves: int) -> None:
        """Count an engine's (``"a"`` or ``"b"``) thinking time over ``moves`` genmoves of one game."""
        self.seconds[engine][0] += seconds
        self.seconds[engine][1] += moves

    def per_move(self, engine: str) -> float | None:
        """Seconds per genmove of engine ``"a"`` or ``"b"`` over the games timed (None: none)."""
        total, moves = self.seconds[engine]
        return total / moves if moves else None

    def add(self, black_won: bool | None, a_black: bool) -> None:
        """Count one game: ``black_won`` None for a draw."""
        self.games += 1
        colour = self.by_colour["black" if a_black else "white"]
        colour[0] += 0.5 if black_won is None else float(black_won == a_black)
        colour[1] += 1
        if black_won is None:
            self.draws += 1
            self.scores.append(0.5)
        elif black_won == a_black:
            self.a_wins += 1
            self.scores.append(1.0)
        else:
            self.b_wins += 1
            self.scores.append(0.0)

    def merge(self, other: "MatchSummary") -> None:
        """Add the games of ``other`` (another part of the same line, A the same engine) to these."""
        self.games += other.games
        self.a_wins += other.a_wins
        self.b_wins += other.b_wins
        self.draws += other.draws
        self.scores += other.scores
        for e in ("a", "b"):
            self.add_time(e, *other.seconds[e])
        for c in ("black", "white"):
            self.by_colour[c][0] += other.by_colour[c][0]
            self.by_colour[c][1] += other.by_colour[c][1]

    @property
    def rate(self) -> float:
        return (self.a_wins + 0.5 * self.draws) / self.games if self.games else 0.0

    def lines(self) -> list[str]:
        lo, hi = wilson(self.a_wins + 0.5 * self.draws, self.games)
        return [
            f"{self.a_name} vs {self.b_name}: {self.games} games, {self.a_name} won {self.a_wins:g}, "
            f"{self.b_name} won {self.b_wins:g}, draws {self.draws}",
            f"win rate of {self.a_name}: {100 * self.rate:.1f}% (95% interval {100 * lo:.1f}% - {100 * hi:.1f}%)",
            f"Elo difference: {_elo_text(self.rate)} (95% interval {_elo_text(lo)} .. {_elo_text(hi)})",
            f"{self.a_name} " + ", ".join(f"as {c.capitalize()} {s:g}-{n - s:g}" for c, (s, n) in self.by_colour.items()),
        ] + ([f"seconds per move: {self.a_name} {self._per_move_text('a')}, {self.b_name} {self._per_move_text('b')}"]
             if self.seconds["a"][1] or self.seconds["b"][1] else [])

    def _per_move_text(self, engine: str) -> str:
        t = self.per_move(engine)
        return "-" if t is None else f"{t:.2f} ({self.seconds[engine][1]} moves)"


def run_match(cmd_a: str, cmd_b: str, games: int, size: int = 9, komi: float = 7.5,
              time_settings: TimeSettings | None = None, sgf_dir: str | None = None,
              max_moves: int | None = None, log=print, name_a: str = "", name_b: str = "",
              engine_timeout: float = 600.0, resume: bool = False, replay_crashes: str = "",
              max_replays: int = 3, handicap: int = 0, should_stop=None, a_colour: str = "alternate",
              colour_offset: int = 0, void_time_losses: bool = False, recorded=None) -> MatchSummary:
    """Play ``games`` games of A vs B (A takes Black in even games, counted from ``colour_offset``, or always
    the colour ``a_colour`` names: ``"black"`` or ``"white"``); write SGFs; return the summary.

    With ``resume``, games already written to ``sgf_dir`` (``gameNNNN.sgf``, each written whole) are
    counted from their ``RE`` and only the missing ones are played, so a killed match goes on.
    An engine that died is started again before the next game. With ``replay_crashes`` (``"a"``, ``"b"``
    or ``"both"``: whose deaths are void) a game in which that engine died is void
    (``void/gameNNNN-K.sgf``, ``RE[Void]``) and played again, at most ``max_replays`` times, after which
    it counts as the forfeit it was. With ``void_time_losses`` a game either engine lost on time is void and
    played again the same way (the tries counted together with crashes).

    Each engine's thinking time is kept (the SGF root's ``AZC[B:seconds:moves W:seconds:moves]``, read
    back on resume) and the summary gives its seconds per move. ``handicap``: fixed handicap stones for
    Black in every game (White moves first). ``should_stop(summary)``, asked after every game, ends the
    match early (a sequential test); on resume it is asked only once every game on disk is counted, so a
    resumed line's record holds all of them whatever order they are read in. ``recorded(summary)`` is called
    once, after the recorded games are counted and before the first game is played or the match ends.
    """
    if a_colour not in ("alternate", "black", "white"):
        raise ValueError(f"a_colour is 'alternate', 'black' or 'white', not {a_colour!r}")
    if replay_crashes not in ("", "a", "b", "both"):
        raise ValueError(f"replay_crashes is '', 'a', 'b' or 'both', not {replay_crashes!r}")
    from azgo.engine.sgf import parse_result, record_from_game, write_sgf
    if sgf_dir:
        os.makedirs(sgf_dir, exist_ok=True)
    done = _recorded_games(sgf_dir, games) if resume and sgf_dir else {}
    errs = os.path.join(sgf_dir, "engines.stderr.log") if sgf_dir else None
    a = GtpClient(cmd_a, name_a, errs, engine_timeout)
    b = GtpClient(cmd_b, name_b, errs, engine_timeout)
    if a.name == b.name:
        a.name, b.name = a.name + " (A)", b.name + " (B)"
    summary = MatchSummary(0, 0, 0, 0, a.name, b.name)
    voidable = {"": set(), "a": {a.name}, "b": {b.name}, "both": {a.name, b.name}}[replay_crashes]

    def a_black_in(i: int) -> bool:  # the colour rule: A is Black in even games (from colour_offset) or always one
        return (i + colour_offset) % 2 == 0 if a_colour == "alternate" else a_colour == "black"

    try:
        for i in sorted(done):  # resumed: count every finished game first, A in the colour its record names
            a_black = a_black_in(i)
            res, clock, names = done[i]
            if a_colour == "alternate" and a.name in names and names[0] != names[1]:
                a_black = names[0] == a.name
            outcome = parse_result(res)  # a finished game's RE is a win or a draw
            summary.add(outcome > 0 if outcome else None, a_black)
            for colour, (sec, moves) in clock.items():
                summary.add_time("a" if (colour == BLACK) == a_black else "b", sec, moves)
            log(f"game {i + 1}/{games}: already played ({res}); {summary.a_name} {summary.a_wins:g} - "
                f"{summary.b_wins:g} {summary.b_name}")
        if recorded is not None:
            recorded(summary)
        for i in range(games):
            if i in done:
                continue
            a_black = a_black_in(i)
            if should_stop is not None and summary.games and should_stop(summary):
                log(f"stopped after {summary.games} games: decided")
                break
            black, white = (a, b) if a_black else (b, a)
            out = _play_replaying_voids(
                i, games, black, white, lambda: play_game(black, white, size, komi, time_settings, max_moves,
                                                          handicap=handicap),
                voidable, max_replays, sgf_dir, log, void_time_losses)
            out.a_black = a_black
            summary.add(None if out.winner is None else out.winner == BLACK, a_black)
            clock = {c: (out.seconds.get(c, 0.0), sum(1 for col, m in out.moves if col == c and m is not None))
                     for c in (BLACK, WHITE)}
            clock = _parse_clock(_clock_text(clock))  # as the SGF keeps it, so --resume sums the same seconds
            for colour, (sec, moves) in clock.items():
                summary.add_time("a" if (colour == BLACK) == a_black else "b", sec, moves)
            if sgf_dir and out.game is not None:
                rec = record_from_game(out.game, black=black.name, white=white.name, result=out.result,
                                       root_props={"AZS": str(i), "AZC": _clock_text(clock)})
                atomic_write(os.path.join(sgf_dir, f"game{i:04d}.sgf"), write_sgf(rec))
            per = {c: f"{sec / moves:.2f}" if moves else "-" for c, (sec, moves) in clock.items()}
            log(f"game {i + 1}/{games}: {black.name} (B) vs {white.name} (W): {out.result} ({out.reason}), "
                f"{len(out.moves)} moves, s/move B {per[BLACK]} W {per[WHITE]}; "
                f"{summary.a_name} {summary.a_wins:g} - {summary.b_wins:g} {summary.b_name}")
    finally:
        a.close()
        b.close()
    return summary


def split_games(games: int, parts: int) -> list[int]:
    """``games`` shared out over ``parts`` sub-lines as evenly as possible (the first ones take the rest)."""
    return [games // parts + (1 if k < games % parts else 0) for k in range(parts)]


def run_match_parts(cmd_a: str, cmd_b: str, games: int, parallel: int = 1, sgf_dir: str | None = None,
                    log=print, should_stop=None, **kw) -> MatchSummary:
    """``run_match`` as ``parallel`` sub-lines at once (threads, each with its own two engines), the games
    shared out by ``split_games``; sub-line k writes to ``sgf_dir/part<k>`` (``sgf_dir`` itself when
    ``parallel`` is 1), so a resumed line finds each part's games where it left them. Colours alternate over
    each part, part k starting with A Black when k is even (so the colours do not depend on how many games
    the line has, and a resumed line with more games keeps every recorded game's colours): with two parts A
    has Black in half of the games, or one game more or less, unless ``a_colour`` fixes them.
    ``should_stop(summary)`` sees the games of every part together, and on resume not before every part has
    counted the games it finds on disk; the first part to find it true stops, and the others after their
    current game. Returns the parts' summaries merged; an error in any part is
    raised after all have stopped."""
    import threading
    if parallel < 1:
        raise ValueError(f"parallel is at least 1, not {parallel}")
    counts = split_games(games, parallel)  # a part with no games starts no engines
    live: list[MatchSummary | None] = [None] * parallel
    lock = threading.Lock()
    decided = threading.Event()
    counted = threading.Barrier(max(1, sum(1 for c in counts if c)))  # every part's games on disk are in
    errors: list[BaseException] = []

    def merged() -> MatchSummary:
        out = None
        for s in live:
            if s is None:
                continue
            if out is None:
                out = MatchSummary(0, 0, 0, 0, s.a_name, s.b_name)
            out.merge(s)
        return out if out is not None else MatchSummary(0, 0, 0, 0, kw.get("name_a", ""), kw.get("name_b", ""))

    def part(k: int) -> None:
        def stop(summary: MatchSummary) -> bool:
            with lock:
                live[k] = summary
                if decided.is_set():
                    return True
                if should_stop is not None and should_stop(merged()):
                    decided.set()
                    return True
                return False

        def recorded(summary: MatchSummary) -> None:
            with lock:
                live[k] = summary
            try:
                counted.wait()
            except threading.BrokenBarrierError:  # a part failed before counting: its error is raised below
                pass
        if not counts[k]:
            return
        sub = sgf_dir if parallel == 1 or not sgf_dir else os.path.join(sgf_dir, f"part{k}")
        say = log if parallel == 1 else (lambda msg, k=k: log(f"[part {k}] {msg}"))
        try:
            s = run_match(cmd_a, cmd_b, counts[k], sgf_dir=sub, log=say, should_stop=stop,
                          colour_offset=k, recorded=recorded, **kw)
        except BaseException as e:  # raised below, once every part has stopped
            errors.append(e)
            counted.abort()  # no part waits for this one's count
            return
        with lock:
            live[k] = s

    if parallel == 1:
        part(0)
    else:
        threads = [threading.Thread(target=part, args=(k,), daemon=True) for k in range(parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return merged()


def _recorded_games(sgf_dir: str, games: int) -> dict[int, tuple[str, dict]]:
    """Games already written (``gameNNNN.sgf``): index -> (``RE``, per-colour thinking time from ``AZC``,
    (``PB``, ``PW``))."""
    from azgo.engine.sgf import load_sgf
    done = {}
    for i in range(games):
        path = os.path.join(sgf_dir, f"game{i:04d}.sgf")
        if os.path.exists(path):
            rec = load_sgf(path)
            done[i] = (rec.result.strip(), _parse_clock(rec.root_props.get("AZC", "")), (rec.black, rec.white))
    return done


def _play_replaying_voids(i: int, games: int, black: GtpClient, white: GtpClient, play, voidable: set,
                            max_replays: int, sgf_dir: str | None, log, void_time_losses: bool = False
                            ) -> GameOutcome:
    """Game ``i`` by ``play()``, restarting dead engines first; a game in which an engine of ``voidable`` died
    (or, with ``void_time_losses``, in which either engine ran out of time) is void (kept under ``void/``)
    and played again, at most ``max_replays`` times."""
    from azgo.engine.sgf import record_from_game, write_sgf
    tries = 0
    while True:
        for e in (black, white):
            if not e.alive:
                log(f"engine {e.name} had exited (status {e.proc.returncode}); started again")
                e.restart()
        out = play()
        void_it = out.crashed in voidable or (void_time_losses and out.flagged is not None)
        if not (void_it and tries < max_replays):
            return out
        tries += 1
        void = ""
        if sgf_dir and out.game is not None:
            rec = record_from_game(out.game, black=black.name, white=white.name, result="Void",
                                   root_props={"AZS": str(i), "GC": f"void: {out.reason}"})
            void = os.path.join(sgf_dir, "void", f"game{i:04d}-{tries}.sgf")
            atomic_write(void, write_sgf(rec))
            void = f", kept in {void}"
        what = f"{out.crashed} died" if out.crashed in voidable else f"{out.flagged} ran out of time"
        log(f"game {i + 1}/{games}: void, {what} at move {len(out.moves) + 1} ({out.reason})"
            f"{void}; played again")


def _clock_text(clock: dict) -> str:
    """``B:seconds:moves W:seconds:moves`` of one game (the SGF root's ``AZC``)."""
    return " ".join(f"{'B' if c == BLACK else 'W'}:{sec:.3f}:{moves}" for c, (sec, moves) in sorted(clock.items()))


def _parse_clock(text: str) -> dict:
    """``{BLACK: (seconds, moves), WHITE: ...}`` from an ``AZC`` text (empty for games without one)."""
    out = {}
    for part in text.split():
        try:
            c, sec, moves = part.split(":")
            out[BLACK if c == "B" else WHITE] = (float(sec), int(moves))
        except ValueError:
            return {}
    return out


def parse_time_control(text: str) -> TimeSettings:
    """A match's clock from ``kata-time_settings`` words (``azgo.engine.timecontrol.TIME_GRAMMAR``)."""
    try:
        return parse_time_settings(text.split())
    except ValueError as e:
        raise ValueError(f"bad time control {text!r}: {e} (seconds)") from None


def stderr_log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
