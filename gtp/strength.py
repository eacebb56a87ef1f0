"""Measure azgo's strength table: ``azgo match`` lines against GNU Go 3.8 and Pachi 11.99.

Each line is one ``azgo match`` (``--komi``, default 7; colours alternating, Tromp-Taylor adjudication after two passes)
with its SGF files, the engines' stderr and its summary kept in ``OUT/<line>/``; ``OUT/table.md`` is the
Markdown table (raw counts, win rate with the 95% Wilson interval, Elo, and the command of every line).
``--parallel`` games run at a time (default 2: one per core, each engine with one thread, so every
engine has a core to itself while it thinks; with ``--parallel 1`` azgo runs with its default
``--threads auto`` and Pachi with as many threads): with as many lines as that or more, the lines run side by
side; with fewer, each line is split into sub-lines (``azgo match --parallel``, games in
``OUT/<line>/part<k>``). A killed run goes on where it stopped (``azgo match --resume``; with the same ``--parallel``, which decides
the sub-lines: another one is refused before any game). A game in which the
opponent's program died is void and played again (``--replay-crashes b``: GNU Go 3.8 segfaults now and then on
19x19); a crash of azgo loses. Under a clock a game lost on time is void and played again
(``--replay-time-losses``, at most 3 tries, then the flag counts): on a shared machine a flag measures the load.

Lines (names for ``--lines``):

* ``gnugo9``: 9x9 against ``gnugo --level 10`` (GNU Go has no time limit; it takes what level 10 takes).
* ``pachi9``, ``pachi13``, ``pachi19``: against Pachi 11.99 under the same clock as azgo: ``azgo match --time
  "byoyomi 0 S 3"`` sends both engines a byo-yomi of S seconds a move (azgo with ``--lag 0.1``); Pachi spends
  it (at ``-t S`` it stopped after ~S/10). The table shows each engine's measured seconds per move.
* ``gnugo13``: 13x13 against GNU Go level 10.
* ``gnugo19``: 19x19 against GNU Go level 10.
* ``gnugo19h2``: 19x19, azgo White in every game giving GNU Go level 10 two handicap stones, komi 0.5
  (``azgo match --handicap 2 --a-colour white``; ``--games19h`` games).

GNU Go runs with ``--capture-all-dead`` and Pachi with ``pass_all_alive``, so that neither passes with
dead stones on the board: the match scores the final board by area, as it stands.

With ``--card nets/<name>.json`` every line's result goes into that network card's ``strength`` list (the
record of the same games folder replaced), after a check before any game that the network azgo plays is the
card's (same sha256). On a finished line's folder it plays no game and only records (``--resume``).

Usage: azgo strength OUT [--card FILE] [--games 100] [--pachi-games N] [--games13 40] [--games19 40] [--games19h 20]
       [--seconds 1] [--net FILE] [--lines gnugo9,pachi9,gnugo13,gnugo19] [--parallel 2] [--azgo-args "--score-utility 0.3"] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from azgo.gtp.opponents import OpponentMissing, gnugo_command, pachi_binary
from azgo.nets.card import file_sha256



def gnugo_level10() -> str:
    try:
        return gnugo_command(10)
    except OpponentMissing as e:
        sys.exit(str(e))


def pachi() -> str:
    return pachi_binary(build=True)


def lines(args) -> dict[str, dict]:
    azgo = f"azgo gtp --seconds {args.seconds:g} --threads {args.threads}"
    cores = (os.cpu_count() or 1) if args.threads == "auto" else int(args.threads)
    if args.net:
        azgo += f" --net {shlex.quote(args.net)}"
    if args.azgo_args:
        azgo += " " + " ".join(shlex.quote(a) for a in shlex.split(args.azgo_args))
    table = {}
    if "gnugo9" in args.lines:
        table["gnugo9"] = dict(opponent="GNU Go 3.8 level 10", size=9, games=args.games, b=gnugo_level10(), a=azgo)
    for name, size, games in (("pachi9", 9, args.pachi_games or args.games), ("pachi13", 13, args.games13),
                              ("pachi19", 19, args.games19)):
        if name in args.lines:  # one clock for both: a byo-yomi of `seconds` a move (Pachi at -t S spent ~S/10)
            period = max(1, round(args.seconds))  # Pachi reads whole seconds (0.2 fails its assertion)
            table[name] = dict(opponent=f"Pachi 11.99, the same clock ({period} s byo-yomi)", size=size,
                               games=games, b=f"{pachi()} threads={cores},pondering=0,pass_all_alive",
                               a=azgo.replace(f"--seconds {args.seconds:g}", f"--seconds {period}") + " --lag 0.1",
                               time=f"byoyomi 0 {period} 3")
    if "gnugo13" in args.lines:
        table["gnugo13"] = dict(opponent="GNU Go 3.8 level 10", size=13, games=args.games13, b=gnugo_level10(), a=azgo)
    if "gnugo19" in args.lines:
        table["gnugo19"] = dict(opponent="GNU Go 3.8 level 10", size=19, games=args.games19, b=gnugo_level10(), a=azgo)
    if "gnugo19h2" in args.lines:
        table["gnugo19h2"] = dict(opponent="GNU Go 3.8 level 10 taking 2 stones (azgo White, komi 0.5)", size=19,
                                  games=args.games19h, b=gnugo_level10(), a=azgo, komi=0.5, handicap=2,
                                  extra=["--a-colour", "white"])
    return table


def match_command(line: dict, folder: str, komi: float, parts: int = 1) -> list[str]:
    cmd = ["azgo", "match", "-a", line["a"], "-b", line["b"], "-n", str(line["games"]), "--size", str(line["size"]),
           "--komi", f"{line.get('komi', komi):g}", "--sgf-dir", folder, "--name-a", "azgo", "--resume",
           "--replay-crashes", "b"] + (["--parallel", str(parts)] if parts > 1 else [])
    return (cmd + (["--time", line["time"], "--replay-time-losses"] if line.get("time") else [])
            + (["--handicap", str(line["handicap"])] if line.get("handicap") else []) + line.get("extra", []))


def shown_command(cmd: list[str]) -> str:
    """``cmd`` as one shell line for the summary and the table, the user's home folder written ``~`` (a built
    Pachi lives under ``~/.cache/azgo``): the committed records name no machine's paths."""
    home = os.path.expanduser("~").rstrip("/")
    line = shlex.join(cmd)
    return line.replace(home + "/", "~/") if home else line


def parts_per_line(parallel: int, lines: int) -> int:
    """Sub-lines of each line so that ``parallel`` games run at once: 1 when the lines alone fill them."""
    return max(1, parallel // max(1, lines))


def layout_problem(folder: str, parts: int) -> str | None:
    """Why a line's folder cannot be resumed with ``parts`` sub-lines (None: it can): a line played as sub-lines
    keeps its games in ``part<k>/``, one played whole in the folder itself, and ``--parallel`` decides which."""
    if not os.path.isdir(folder):
        return None
    whole = any(re.fullmatch(r"game\d+\.sgf", f) for f in os.listdir(folder))
    split = sorted(f for f in os.listdir(folder) if re.fullmatch(r"part\d+", f))
    if parts == 1 and split:
        return f"{folder} was played as {len(split)} sub-lines ({', '.join(split)}): resume it with --parallel {len(split)}"
    if parts > 1 and whole:
        return f"{folder} holds a line played whole (game*.sgf): resume it with --parallel 1"
    if parts > 1 and split and len(split) != parts:
        return f"{folder} was played as {len(split)} sub-lines: resume it with --parallel {len(split)}"
    return None


def run_line(name: str, line: dict, out: str, komi: float, parts: int = 1) -> dict:
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    cmd = match_command(line, folder, komi, parts)
    t = time.time()
    with open(os.path.join(folder, "match.log"), "a") as log:
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{name}: azgo match failed (see {folder}/match.log)")
    summary = res.stdout.strip()
    with open(os.path.join(folder, "summary.txt"), "w") as f:
        f.write(shown_command(cmd) + "\n" + summary + "\n")
    m = re.search(r"(\d+) games, azgo won ([\d.]+), .* won ([\d.]+), draws (\d+)", summary)
    rate = re.search(r"win rate of azgo: ([\d.]+)% \(95% interval ([\d.]+)% - ([\d.]+)%\)", summary)
    el = re.search(r"Elo difference: (\S+) \(95% interval (\S+) \.\. (\S+)\)", summary)
    spm = re.search(r"seconds per move: azgo ([\d.]+) .*?, .* ([\d.]+) \(\d+ moves\)$", summary, re.M)
    colours = re.search(r"as Black ([\d.]+)-([\d.]+), as White ([\d.]+)-([\d.]+)", summary)
    print(f"{name}: {summary.splitlines()[0]} ({time.time() - t:.0f} s)", file=sys.stderr, flush=True)
    return dict(line, name=name, cmd=shown_command(cmd), folder=folder, games=int(m[1]), wins=m[2], losses=m[3],
                draws=int(m[4]), rate=rate[1], lo=rate[2], hi=rate[3], elo=el[1], elo_lo=el[2], elo_hi=el[3],
                spm=f"{spm[1]} / {spm[2]}" if spm else "-",
                seconds_per_move={"azgo": float(spm[1]), "opponent": float(spm[2])} if spm else {},
                by_colour={"black": [float(colours[1]), float(colours[1]) + float(colours[2])],
                           "white": [float(colours[3]), float(colours[3]) + float(colours[4])]} if colours else {})


def line_network(args, line: dict) -> Path:
    """The network file azgo plays in ``line``: ``--net``, else the packaged one of the line's board size."""
    from azgo.nets.registry import default_net_path, resolve_net
    return resolve_net(args.net) if args.net else default_net_path(line["size"])


def check_card(card_file: str, networks: dict[str, Path]) -> dict:
    """The card at ``card_file``, after checking that every line (name -> the network file azgo plays there)
    measures the card's network (the same sha256; azgo may run its int8 copy). Exits with the reason if not."""
    try:
        card = json.loads(Path(card_file).read_text())
    except (OSError, ValueError) as e:
        sys.exit(f"azgo strength: --card {card_file}: not a readable card ({e})")
    if not isinstance(card, dict) or not isinstance(card.get("sha256"), str):
        sys.exit(f"azgo strength: --card {card_file}: not a network card (no sha256)")
    digests: dict[Path, str] = {}  # lines of one board size play one file: hash it once
    for name, net in networks.items():
        if net not in digests:
            digests[net] = file_sha256(net)
        digest = digests[net]
        if digest != card["sha256"]:
            sys.exit(f"azgo strength: line {name} plays {net} (sha256 {digest[:12]}), not the network of "
                     f"{card_file} (sha256 {card['sha256'][:12]}): nothing played")
    return card


def card_record(row: dict, args, komi: float, card_file: str) -> dict:
    """One line's result as a card's strength record (`azgo.nets.card.StrengthLine`), its games folder relative
    to the folder above the card's (the repository root for ``nets/<name>.json``)."""
    from azgo.gtp.match import elo, wilson
    wins, losses, draws, games = float(row["wins"]), float(row["losses"]), row["draws"], row["games"]
    score = (wins + 0.5 * draws) / games if games else 0.0
    lo, hi = wilson(wins + 0.5 * draws, games)
    root = Path(card_file).resolve().parent.parent
    seconds = float(row["time"].split()[2]) if row.get("time") else args.seconds
    folder = os.path.relpath(Path(row["folder"]).resolve(), root)  # no machine's path in a committed card
    return dict(
        line=row["name"], opponent=row["opponent"], size=row["size"], games=games, wins=wins, losses=losses,
        draws=draws, interval=[round(lo, 4), round(hi, 4)], elo=round(elo(score), 1) if 0 < score < 1 else None,
        command=row["cmd"].replace(row["folder"], folder) if os.path.isabs(row["folder"]) else row["cmd"],
        games_folder=folder,
        threads=(os.cpu_count() or 1) if args.threads == "auto" else int(args.threads), seconds=seconds,
        komi=row.get("komi", komi), handicap=row.get("handicap", 0),
        seconds_per_move=row["seconds_per_move"], by_colour=row["by_colour"], score=round(score, 4))


def record_in_card(card_file: str, record: dict) -> None:
    """Put ``record`` into the card at ``card_file`` (replacing the record of the same games folder), atomically."""
    from azgo.engine.atomic import atomic_write
    from azgo.nets.card import validate_card, with_strength_line
    card = with_strength_line(json.loads(Path(card_file).read_text()), record)
    problems = validate_card(card)
    if problems:
        sys.exit(f"azgo strength: the card would not validate, left as it was: {'; '.join(problems)}")
    atomic_write(card_file, json.dumps(card, indent=2) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="azgo strength", description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--games", type=int, default=100, help="games of each 9x9 line")
    ap.add_argument("--pachi-games", type=int, help="games of the Pachi line (default: --games)")
    ap.add_argument("--games13", type=int, default=40, help="games of the 13x13 line")
    ap.add_argument("--games19", type=int, default=40, help="games of the 19x19 line")
    ap.add_argument("--games19h", type=int, default=20, help="games of the 19x19 handicap line (gnugo19h2)")
    ap.add_argument("--seconds", type=float, default=1.0, help="azgo's seconds per move (and Pachi's)")
    ap.add_argument("--net", help="network (default: the packaged one)")
    ap.add_argument("--lines", default="gnugo9,pachi9,gnugo13,gnugo19",
                    help="of gnugo9, pachi9, gnugo13, pachi13, gnugo19, pachi19, gnugo19h2")
    ap.add_argument("--komi", type=float, default=7.0, help="komi of every line (7: the campaign's lines)")
    ap.add_argument("--azgo-args", default="", help="more azgo gtp options, e.g. \"--score-utility 0.3\"")
    ap.add_argument("--parallel", type=int, default=2, help="games at once: lines side by side, or a line split "
                    "into sub-lines when there are fewer lines")
    ap.add_argument("--threads", default=None, help="azgo's --threads (and Pachi's threads): default 1 when games "
                    "run in parallel (a core per game), else auto (every core: azgo's default)")
    ap.add_argument("--card", help="record every line in this network card's strength list (e.g. nets/large19.json; "
                    "refused unless the network played is the card's): a line played again or on replaces its record")
    ap.add_argument("--quick", action="store_true", help="2 games per line, 0.2 s per move (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.games, args.pachi_games, args.games13, args.games19, args.seconds = 2, 2, 1, 1, 0.2
        args.games19h = 1
    args.lines = args.lines.split(",")
    unknown = set(args.lines) - {"gnugo9", "pachi9", "gnugo13", "pachi13", "gnugo19", "pachi19", "gnugo19h2"}
    if unknown:
        ap.error(f"unknown lines: {', '.join(sorted(unknown))}")
    if args.threads is None:
        args.threads = "1" if args.parallel > 1 else "auto"
    os.makedirs(args.out, exist_ok=True)
    table = lines(args)
    parts = parts_per_line(args.parallel, len(table))
    for name in table:  # before any game: another --parallel would start the line again beside its games
        problem = layout_problem(os.path.join(args.out, name), parts)
        if problem:
            sys.exit(f"azgo strength: {problem} (nothing played)")
    if args.card:
        check_card(args.card, {name: line_network(args, line) for name, line in table.items()})
    with ThreadPoolExecutor(max(1, min(args.parallel, len(table)))) as pool:
        rows = list(pool.map(lambda kv: run_line(kv[0], kv[1], args.out, args.komi, parts), table.items()))
    md = ["| opponent | board | azgo per move | games | azgo won | lost | draws | win rate (95% interval) | Elo (95% interval) "
          "| s/move azgo / opponent |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per = f"{r['time'].split()[2]} s clock" if r.get("time") else f"{args.seconds:g} s"
        md.append(f"| {r['opponent']} | {r['size']}x{r['size']} | {per}, {'default threads' if args.threads == 'auto' else args.threads + ' thread' + ('s' if args.threads != '1' else '')} | {r['games']} | "
                  f"{r['wins']} | {r['losses']} | {r['draws']} | {r['rate']}% ({r['lo']}-{r['hi']}%) | "
                  f"{r['elo']} ({r['elo_lo']} .. {r['elo_hi']}) | {r['spm']} |")
    md.append("")
    md += [f"- `{r['name']}`: `{r['cmd']}`" for r in rows]
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    if args.card:
        for r in rows:
            record_in_card(args.card, card_record(r, args, args.komi, args.card))
        print(f"recorded {len(rows)} line(s) in {args.card}", file=sys.stderr)
    for r in rows:
        print(f"RESULT winrate_{r['name']} {float(r['rate']) / 100:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
