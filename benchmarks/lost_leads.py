"""Games azgo lost from positions it counted as won: its own score lead along each lost game.

For every game of the given folders that azgo played (``PB``/``PW`` contains ``--player``) and lost, the
position before every ``--every``-th move is searched with the packaged network of the board size (int8,
``--visits`` visits, as ``azgo analysis`` would) and azgo's score lead (points, from its side) is kept. A lost
game whose largest lead reached ``--lead`` points or more is a game lost from a won position: the network
counted groups alive (or territory safe) that the opponent then took. Prints every lost game's largest lead
and the move where it was reached.

RESULT lines: ``lost_games``, ``lost_after_lead`` (how many of them passed a lead of ``--lead`` or more) and
``lost_after_lead_share``; with ``--won`` also ``won_games`` and ``won_with_lead_share`` (the same for the games
azgo won: how often its lead passes the mark at all, the base rate to read the first share against).

With ``--referee`` GNU Go 3.8 (``estimate_score`` on the position of azgo's largest lead, loaded with ``loadsgf``,
so handicap stones count) says whether that lead was real: ``referee_agreed`` counts the games lost after a lead
where GNU Go also put azgo ahead there (a won position given away afterwards), ``referee_agreed_share`` is their
share (the rest were misjudged: the network counted as won what GNU Go did not).

With ``--from-log`` nothing is searched: each game's curve is the lead azgo itself reported at every move it
played (the ``azgo: MOVE winrate ..., lead ...`` lines of the ``engines.stderr.log`` beside the SGF files that
``azgo match`` and ``azgo strength`` write; the real komi's lead, also under dynamic komi), matched to the game by
its moves. Instant, and the lead is the one the game's own search acted on.

With ``--calibration`` (and ``--from-log``) every decided game of the folders counts, won or lost: azgo's own
reported winrate at each of its moves is binned by tenths, per colour, against how the game ended (the share of
those positions in games azgo won; positions, then games in brackets). A calibrated value wins about as often as it
says. RESULT lines ``won_from_70_black`` / ``won_from_70_white``: of the positions where azgo, as that colour,
counted its winrate at 70% or more, the share in games it won (``_positions`` beside each: how many).

With ``--deeper 200,800,3200`` (GNU Go needed) each game lost after a lead is asked whether more search would
have seen the loss coming: GNU Go's ``estimate_score`` every 6 moves from the largest lead on finds the
collapse (the last position where GNU Go still gives azgo ``--collapse-high`` points or more before its estimate
falls below 0; where GNU Go never gave azgo that lead, the position of azgo's largest lead), and that position is
searched at each visit count (fresh tree, one thread). RESULT lines
``deeper_games``, ``deeper_lead_<visits>`` (the median of azgo's lead there at that many visits) and
``deeper_lead_drop`` (median of lead at the fewest visits minus lead at the most): a drop near 0 says the
network, not the search, missed it; a drop as large as the lead says time would have saved those games.

Usage: python3 benchmarks/lost_leads.py FOLDER... [--player azgo] [--lead 15] [--every 10] [--visits 100] [--won]
       [--referee] [--from-log] [--calibration] [--deeper V1,V2,...] [--quick]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import os
import re
import subprocess
import sys
import time

from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import move_to_gtp
from azgo.engine.mcts import SearchConfig
from azgo.engine.search import Limits, Searcher
from azgo.engine.sgf import SgfError, load_sgf
from azgo.gtp.opponents import OpponentMissing, gnugo_binary
from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
from azgo.nets.registry import default_net_path


def azgo_colour(rec, player: str) -> int | None:
    p = player.lower()
    if p in (rec.black or "").lower():
        return BLACK
    if p in (rec.white or "").lower():
        return WHITE
    return None


def lead_curve(rec, colour: int, evaluator, every: int, visits: int) -> list[tuple[int, float]]:
    """(move number, azgo's score lead) before every ``every``-th move of the game."""
    out = []
    searcher = Searcher(evaluator, SearchConfig(), seed=1)
    for k in range(every, len(rec.moves), every):
        lead = searched_lead(searcher, rec.to_game(k), colour, visits)
        if lead is not None:
            out.append((k, lead))
    return out


def searched_lead(searcher, game, colour: int, visits: int) -> float | None:
    """``colour``'s score lead (points) in ``game`` by a fresh search of ``visits`` visits; None without a
    score head."""
    r = searcher.search(game, Limits(visits=visits), reuse=False)
    if r.score_lead is None:
        return None
    return r.score_lead if game.to_move == colour else -r.score_lead


def decided_games(folders, player: str):
    """(path, record, azgo's colour, whether azgo won) of every readable SGF file under ``folders`` (sorted) that
    ``player`` played and that has a winner."""
    files = sorted(f for d in folders for f in glob.glob(os.path.join(d, "**", "*.sgf"), recursive=True))
    for f in files:
        try:
            rec = load_sgf(f)
        except SgfError:
            continue
        colour = azgo_colour(rec, player)
        winner = rec.result[:1].upper()
        if colour is None or winner not in ("B", "W"):
            continue
        yield f, rec, colour, (winner == "B") == (colour == BLACK)


LOG_LINE = re.compile(r"azgo: (\S+) winrate ([\d.]+)%, lead ([+-]?\d+(?:\.\d+)?)")


def logged_leads(folder: str) -> list[tuple[str, float, float]]:
    """(move in GTP, azgo's reported lead in points, its reported winrate in [0, 1]; both from azgo's side) of every
    search line in ``folder``'s engines.stderr.log(.gz), in order."""
    for name, opener in (("engines.stderr.log", open), ("engines.stderr.log.gz", gzip.open)):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with opener(path, "rt", errors="replace") as fh:
                return [(m.group(1), float(m.group(3)), float(m.group(2)) / 100.0) for m in map(LOG_LINE.match, fh) if m]
    return []


def logged_curve(rec, colour: int, lines: list[tuple], start: int, field: int = 1) -> tuple[list[tuple[int, float]], int]:
    """(curve, next start): the game's azgo moves found as one run of ``lines`` at or after ``start`` (a game
    replayed after a crash leaves an earlier partial run); the curve is (move number before azgo's move, the
    line's ``field``: 1 the lead, 2 the winrate). An empty curve and ``start`` unchanged when the game is not in
    the log."""
    ks = [k for k, (c, _) in enumerate(rec.moves) if c == colour]
    want = [move_to_gtp(rec.moves[k][1], rec.size) for k in ks]
    n = len(want)
    if n == 0:
        return [], start
    for j in range(start, len(lines) - n + 1):
        if lines[j][0] == want[0] and [line[0] for line in lines[j:j + n]] == want:
            return [(k, line[field]) for k, line in zip(ks, lines[j:j + n])], j + n
    return [], start


def calibration(samples: list[tuple[int, float, bool, str]], bins: int = 10) -> dict[int, list[tuple[int, int, int]]]:
    """Per colour, per winrate bin (tenths; 1.0 falls in the last): (positions, of them in games azgo won, games).
    ``samples`` holds (azgo's colour, its reported winrate in [0, 1], whether it won that game, game id)."""
    out: dict[int, list[list]] = {}
    for colour, wr, won, game in samples:
        row = out.setdefault(colour, [[0, 0, set()] for _ in range(bins)])
        b = row[min(int(wr * bins), bins - 1)]
        b[0] += 1
        b[1] += bool(won)
        b[2].add(game)
    return {c: [(n, w, len(g)) for n, w, g in row] for c, row in out.items()}


def won_from(table: list[tuple[int, int, int]], lowest_bin: int) -> tuple[int, float]:
    """(positions, share of them in won games) of the bins from ``lowest_bin`` up."""
    n = sum(r[0] for r in table[lowest_bin:])
    return n, (sum(r[1] for r in table[lowest_bin:]) / n if n else 0.0)


def parse_estimate(reply: str) -> float | None:
    """Black's lead in points from GNU Go's ``estimate_score`` reply ("W+16.3 (upper bound: ...)"; "0" = even)."""
    m = re.match(r"\s*=?\s*([BW])\+(\d+(?:\.\d+)?)", reply)
    if m:
        return float(m.group(2)) * (1 if m.group(1) == "B" else -1)
    return 0.0 if re.match(r"\s*=?\s*0(\.0+)?\s*$", reply) else None


def referee_curve(path: str, moves: list[int], colour: int, exe: str, timeout: float = 1200) -> list[tuple[int, float]]:
    """(move number, GNU Go's estimate of ``colour``'s lead) before each of ``moves`` of the SGF file ``path``,
    from one GNU Go process; positions whose estimate cannot be read are left out."""
    cmds = "".join(f"loadsgf {path} {k + 1}\nestimate_score\n" for k in moves) + "quit\n"
    out = subprocess.run([exe, "--mode", "gtp", "--chinese-rules", "--level", "10"], input=cmds,
                         capture_output=True, text=True, timeout=timeout).stdout
    replies = [r.strip() for r in out.split("\n\n") if r.strip()]
    curve = []
    for i, k in enumerate(moves):
        if 2 * i + 1 >= len(replies):
            break
        load, est = replies[2 * i], replies[2 * i + 1]
        if not (load.startswith("=") and est.startswith("=")):
            continue
        black = parse_estimate(est)
        if black is not None:
            curve.append((k, black if colour == BLACK else -black))
    return curve


def referee_lead(path: str, moves: int, colour: int, exe: str) -> float | None:
    """GNU Go's estimate of ``colour``'s lead after ``moves`` moves of the SGF file ``path``."""
    curve = referee_curve(path, [moves], colour, exe, timeout=600)
    return curve[0][1] if curve else None


def collapse_point(ref: list[tuple[int, float]], high: float = 10.0) -> int | None:
    """The move number of the last position of the referee curve ``ref`` ((move, azgo's lead by GNU Go), in order)
    where azgo still led by ``high`` or more before the first later position where it trails (lead < 0); None when
    the curve never falls from such a lead below 0."""
    last_high = None
    for k, lead in ref:
        if lead >= high:
            last_high = k
        elif lead < 0 and last_high is not None:
            return last_high
    return None


def deeper_leads(rec, k: int, colour: int, evaluator, visits: list[int]) -> list[float]:
    """azgo's score lead (points, ``colour``'s side) before move ``k`` of ``rec``, searched afresh at each of
    ``visits`` (one thread, a new tree each)."""
    game = rec.to_game(k)
    return [searched_lead(Searcher(evaluator, SearchConfig(), seed=1), game, colour, v) or 0.0 for v in visits]


def median(xs: list[float]) -> float:
    ys = sorted(xs)
    n = len(ys)
    return (ys[n // 2] if n % 2 else (ys[n // 2 - 1] + ys[n // 2]) / 2) if n else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--player", default="azgo")
    ap.add_argument("--lead", type=float, default=15.0)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="at most 3 lost games, every 30 moves")
    ap.add_argument("--won", action="store_true", help="also the games azgo won (the base rate)")
    ap.add_argument("--referee", action="store_true", help="GNU Go's estimate_score at the largest lead")
    ap.add_argument("--from-log", action="store_true",
                    help="azgo's own leads from the games' engines.stderr.log, nothing searched")
    ap.add_argument("--calibration", action="store_true",
                    help="with --from-log: azgo's reported winrate against the games' ends, by colour")
    ap.add_argument("--deeper", default="",
                    help="visit counts, e.g. 200,800,3200: search each lost game's collapse point at each")
    ap.add_argument("--collapse-high", type=float, default=10.0,
                    help="--deeper: GNU Go's lead for azgo that the collapse falls from (points)")
    args = ap.parse_args()
    try:
        deeper = [int(v) for v in args.deeper.split(",") if v.strip()]
    except ValueError:
        ap.error(f"--deeper: visit counts separated by commas, not {args.deeper!r}")
    if any(v < 1 for v in deeper):
        ap.error("--deeper: visit counts must be >= 1")
    if args.calibration and not args.from_log:
        ap.error("--calibration reads azgo's reported winrates: it needs --from-log")
    samples: list[tuple[int, float, bool, str]] = []
    deep_rows: list[list[float]] = []
    evaluators: dict[int, OnnxEvaluator] = {}
    lost = passed = won = won_hit = agreed = refereed = 0
    exe = None
    if args.referee or deeper:
        try:
            exe = gnugo_binary()
        except OpponentMissing as e:
            ap.error(f"--referee/--deeper: {e}")
    t0 = time.perf_counter()
    every = 30 if args.quick else args.every
    logs: dict[str, list] = {}
    at: dict[str, int] = {}
    missing = 0
    for f, rec, colour, won_game in decided_games(args.folders, args.player):
        if args.from_log:  # every game is matched, won or not, so that the log is read in order
            d = os.path.dirname(f)
            if d not in logs:
                logs[d], at[d] = logged_leads(d), 0
            start = at[d]
            curve, at[d] = logged_curve(rec, colour, logs[d], start)
            missing += not curve
            if args.calibration and curve:
                samples += [(colour, wr, won_game, f) for _, wr in logged_curve(rec, colour, logs[d], start, 2)[0]]
        if won_game and not args.won:
            continue
        if args.quick and lost >= 3:
            break
        n = rec.size
        if not args.from_log:
            if n not in evaluators:
                evaluators[n] = OnnxEvaluator(default_net_path(n), EvalConfig(threads=1, precision="auto"))
            curve = lead_curve(rec, colour, evaluators[n], every, args.visits)
        if won_game:
            won += 1
            won_hit += bool(curve) and max(v for _, v in curve) >= args.lead
            continue
        lost += 1
        if not curve:
            continue
        k, best = max(curve, key=lambda x: x[1])
        hit = best >= args.lead
        passed += hit
        ref = ""
        if hit and deeper:
            picks = list(range(k, len(rec.moves), 6))
            at_k = collapse_point(referee_curve(f, picks, colour, exe), args.collapse_high)
            where = f"collapse after move {at_k}"
            if at_k is None:  # GNU Go never gave azgo such a lead: the misjudgement is at the peak itself
                at_k, where = k, f"no collapse from a GNU Go lead of {args.collapse_high:g}+, at the peak (move {k})"
            if n not in evaluators:
                evaluators[n] = OnnxEvaluator(default_net_path(n), EvalConfig(threads=1, precision="auto"))
            leads = deeper_leads(rec, at_k, colour, evaluators[n], deeper)
            deep_rows.append(leads)
            ref += f"; {where}: azgo's lead there " + ", ".join(
                f"{lv:+.1f} at {v} visits" for v, lv in zip(deeper, leads))
        if hit and args.referee:
            gl = referee_lead(f, k, colour, exe)
            if gl is not None:
                refereed += 1
                agreed += gl > 0
                ref = f"; GNU Go there: {gl:+.1f} ({'a lead given away' if gl > 0 else 'misjudged'})"
        print(f"{os.path.relpath(f)}: {rec.result}, {len(rec.moves)} moves; azgo's largest lead {best:+.1f} at move {k}"
              + (f"  <- lost after leading by {args.lead:g}+" if hit else "") + ref, flush=True)
    how = (f"azgo's own leads from the engines' logs, {missing} games not found there" if args.from_log
           else f"{args.visits} visits every {every} moves")
    print(f"# {lost} lost games, {passed} of them after a lead of {args.lead:g} points or more "
          f"({how}; {time.perf_counter() - t0:.0f} s)")
    print(f"RESULT lost_games {lost}")
    print(f"RESULT lost_after_lead {passed}")
    print(f"RESULT lost_after_lead_share {passed / lost if lost else 0:.3f}")
    if deeper:
        print(f"RESULT deeper_games {len(deep_rows)}")
        for i, v in enumerate(deeper):
            print(f"RESULT deeper_lead_{v} {median([row[i] for row in deep_rows]):.1f}")
        print(f"RESULT deeper_lead_drop {median([row[0] - row[-1] for row in deep_rows]):.1f}")
    if args.referee:
        print(f"RESULT referee_agreed {agreed}")
        print(f"RESULT referee_agreed_share {agreed / refereed if refereed else 0:.3f}")
    if args.calibration:
        table = calibration(samples)
        for colour, name in ((BLACK, "black"), (WHITE, "white")):
            if colour not in table:
                continue
            print(f"# azgo as {name}, its winrate -> share of those positions in games it won: " + ", ".join(
                f"{10 * i}-{10 * i + 10}% {w / n:.2f} ({n}, {g})" for i, (n, w, g) in enumerate(table[colour]) if n))
        for colour, name in ((BLACK, "black"), (WHITE, "white")):
            n, share = won_from(table.get(colour, [(0, 0, 0)] * 10), 7)
            print(f"RESULT won_from_70_{name} {share:.3f}")
            print(f"RESULT won_from_70_{name}_positions {n}")
    if args.won:
        print(f"RESULT won_games {won}")
        print(f"RESULT won_with_lead_share {won_hit / won if won else 0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
