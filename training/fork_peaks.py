"""Where lost games turned: the move of a player's largest lead by the network, to fork self-play around it.

Every 19x19 game azgo lost to GNU Go in stages 23-24 of the campaign (41 of 41) passed through a position where
azgo's own search counted itself 15 or more points ahead (``benchmarks/lost_leads.py``: largest leads +18 to
+67 between moves 70 and 300, most of them 110-220); the groups it counted alive died afterwards. Self-play
forked from uniform points of those games (``[selfplay.openings] min_moves..max_moves``) spends many starts
before the misjudgement or after the collapse. With ``around_peak = [before, after]`` a recipe forks each
lost game between ``before`` moves before and ``after`` moves after the position where the network counted
the loser furthest ahead, so that self-play reads out the fights it misjudged.

With ``around_ko = [before, after]`` the fork point is instead the first ko capture of each lost game
(`first_ko`): against Pachi azgo wins 84-97% of the games without a ko and 12-46% of those with one
(``benchmarks/ko_fights.py``), so self-play (against the engine that won, ``fork_side = "winner"``) plays those
kos out again from just before they began.

`lead_peak` replays one game and asks the network (no search: one evaluation per position, the loser to move)
for its score lead from the loser's side (its value where the network has no score head); `lead_peaks` does
it for many files, with a cache; `peak_openings` turns the peaks into forked starts (sequences and their
shortest prefixes) for `azgo.training.selfplay.SelfPlayConfig`. numpy only.
"""

from __future__ import annotations

import json
import os
from typing import Callable, Iterable, Sequence

import numpy as np

from azgo.engine import features
from azgo.engine import planes as P
from azgo.engine.atomic import atomic_write
from azgo.engine.board import BLACK, WHITE, Board
from azgo.engine.sgf import SgfError, load_sgf

BATCH = 32  # positions per network call


def loser_colour(rec, player: str) -> int | None:
    """BLACK or WHITE when ``player`` (a case-insensitive part of PB/PW) lost the game, else None."""
    winner = (rec.result or "")[:1].upper()
    loser = WHITE if winner == "B" else BLACK if winner == "W" else None
    if loser is None:
        return None
    name = rec.white if loser == WHITE else rec.black
    return loser if player.lower() in (name or "").lower() else None


def ko_captures(rec, colour: int, max_moves: int | None = None) -> tuple[int | None, int, int]:
    """(moves played before the first ko capture or None, ko captures by ``colour``, by the other side) in the
    first ``max_moves`` moves (None: all) of ``rec`` (an `azgo.engine.sgf.GameRecord`), replayed from its setup
    stones: a ko capture is a move that leaves a simple-ko point the other side may not take back at once. Raises
    ValueError (`azgo.engine.board.IllegalMove`) on a move the rules forbid."""
    board = Board(rec.size)
    black, white, empty = rec.setup
    if black or white or empty:
        board.setup(black, white, empty, to_move=rec.moves[0][0] if rec.moves else None)
    first = None
    ours = theirs = 0
    for k, (c, m) in enumerate(rec.moves[:max_moves]):
        board.play(m, c)
        if board.ko_move is not None:
            if first is None:
                first = k
            if c == colour:
                ours += 1
            else:
                theirs += 1
    return first, ours, theirs


def first_ko(rec, max_moves: int | None = None) -> int | None:
    """The number of moves played before the first ko capture of ``rec`` within its first ``max_moves`` moves
    (None: all), or None (no ko there, or a record that cannot be replayed)."""
    try:
        return ko_captures(rec, BLACK, max_moves)[0]
    except ValueError:
        return None


def lead_peak(rec, colour: int, evaluator, max_moves: int | None = None) -> int | None:
    """The number of moves played before the position, ``colour`` to move, where the network's score lead
    for ``colour`` (points; its value in [-1, 1] without a score head) is largest, the first such position
    on a tie. Only the first ``max_moves`` moves are looked at (None: all). None when no position qualifies
    (a record that cannot be replayed, or ``colour`` never to move).

    ``evaluator``: anything with ``evaluate(planes float32[B, NUM_PLANES, N, N], legal bool[B, N*N+1])``
    returning ``value`` and ``score`` for the side to move (`azgo.nets.evaluator.OnnxEvaluator`).
    """
    try:
        game = rec.to_game(0)
    except (SgfError, ValueError):
        return None
    moves = rec.moves
    limit = len(moves) if max_moves is None else min(len(moves), max_moves)
    planes, legal, at = [], [], []
    best: tuple[float, int] | None = None

    def flush() -> None:
        nonlocal best
        if not planes:
            return
        out = evaluator.evaluate(np.stack(planes), np.stack(legal))
        lead = out.score if getattr(out, "score", None) is not None else out.value
        for k, v in zip(at, np.asarray(lead, dtype=np.float64)):
            if best is None or v > best[0]:
                best = (float(v), k)
        planes.clear(), legal.clear(), at.clear()

    for k in range(limit + 1):
        if game.to_move == colour:
            planes.append(features.encode(game.recent_boards(P.HISTORY), game.komi))
            legal.append(game.board.legal_mask())
            at.append(k)
            if len(planes) >= BATCH:
                flush()
        if k == limit:
            break
        c, m = moves[k]
        try:
            game.play(m, c)
        except ValueError:
            break
    flush()
    return None if best is None else best[1]


def lead_peaks(files: Sequence[str], player: str, evaluator, cache: str | None = None, key: str = "",
               max_moves: int | None = None, log: Callable[[str], None] | None = None,
               root: str | None = None) -> dict[str, int]:
    """``{file: lead_peak}`` for the games of ``files`` that ``player`` lost (others, and those without a
    peak, are left out). ``cache``: a JSON file of earlier answers, valid for ``key`` (e.g. the network's
    SHA-256) and each file's size; rewritten atomically when something new was computed. With ``root`` the
    cache names each file by its path relative to ``root`` (a cache committed in a repository is valid in
    any clone of it), else by its absolute path."""
    old: dict = {}
    if cache and os.path.exists(cache):
        try:
            with open(cache) as f:
                data = json.load(f)
            if data.get("key") == key:
                old = data.get("peaks", {})
        except (OSError, ValueError):
            old = {}
    out: dict[str, int] = {}
    fresh: dict[str, int | None] = {}
    for path in files:
        name = os.path.relpath(os.path.abspath(path), root) if root else os.path.abspath(path)
        tag = f"{name}|{os.path.getsize(path)}|{max_moves}"
        if tag in old:
            if old[tag] is not None:
                out[path] = int(old[tag])
            fresh[tag] = old[tag]
            continue
        try:
            rec = load_sgf(path)
        except (SgfError, ValueError, OSError):
            continue
        colour = loser_colour(rec, player)
        peak = lead_peak(rec, colour, evaluator, max_moves) if colour is not None else None
        fresh[tag] = peak
        if peak is not None:
            out[path] = peak
    if cache and fresh != old:
        os.makedirs(os.path.dirname(os.path.abspath(cache)), exist_ok=True)
        atomic_write(cache, json.dumps({"key": key, "peaks": fresh}, indent=0, sort_keys=True))
    if log and out:
        q = np.percentile(list(out.values()), [25, 50, 75])
        log(f"fork peaks: {len(out)} games lost by {player}, the loser's largest lead at moves "
            f"{q[0]:.0f}/{q[1]:.0f}/{q[2]:.0f} (quartiles)")
    return out


def peak_openings(sequences: Iterable[tuple], before: int, after: int, min_moves: int = 1,
                  ) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]]:
    """Forked starts around each game's peak: ``sequences`` holds ``(moves, peak)`` or ``(moves, peak, winner)``
    tuples (a game's moves from the empty board, the number of them played at its peak, and the colour that won
    it). Each opening is the game's moves up to ``peak + after`` and its shortest prefix ``peak - before`` (at
    least ``min_moves`` and at most the opening's length), so that a fork starts anywhere within ``before`` moves
    before and ``after`` after the peak. Returns ``(openings, lows, winners)`` for ``SelfPlayConfig.openings``,
    ``opening_lows`` and ``opening_winners`` (0 where no winner was given); duplicates of the same opening and
    low are kept once, with the first one's winner."""
    seen: dict[tuple[tuple[int, ...], int], int] = {}
    for item in sequences:
        moves, peak = item[0], item[1]
        winner = item[2] if len(item) > 2 else 0
        seq = tuple(moves[:max(1, peak + after)])
        if not seq:
            continue
        low = min(max(min_moves, peak - before, 1), len(seq))
        seen.setdefault((seq, low), winner)
    return tuple(s for s, _ in seen), tuple(lo for _, lo in seen), tuple(seen.values())
