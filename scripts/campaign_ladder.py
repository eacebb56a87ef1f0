"""The strength campaign's ladder (issue 11): every stage's games, as CSV and PNG, from the SGF files.

The ladder is read from ``docs/runs/campaign/ladder.json``, a list of matches::

    {"stage": 2, "network": "big2", "core_hours": 6.1, "board": 13,
     "opponent": "GNU Go 3.8 level 10", "sgf": "docs/strength/campaign3/gnugo13", "player": "azgo"}

``sgf`` is a folder (relative paths from the repository root); ``core_hours`` is the campaign's compute up to that network (data generation + training, CPU core-hours);
``opponent`` is either an outside anchor (``GNU Go ...``) or ``stage N`` (a head-to-head against an earlier
network of the ladder on that board size). ``chain_elo`` places a network against stage 0 (the packaged
default network = 0) on that board size, through matches back to stage 0; a match against a network with no
such chain gets none. Wins are counted from the SGF files themselves (``RE`` and the ``player`` name in
``PB``/``PW``; draws count half), so the ladder cannot disagree with the archived games.

Written next to the spec: ``ladder.csv`` (one row per match: games, wins, Wilson interval, Elo and its
interval) and ``ladder.png`` (Elo against the anchor per board size, and the head-to-head chain, against
core-hours). A sweep (0 or all games won) has no finite Elo: the CSV leaves ``elo`` empty and the plot
draws the interval's finite end as an arrow.

Usage: python3 scripts/campaign_ladder.py [docs/runs/campaign/ladder.json]
"""

from __future__ import annotations

import csv
import glob
import json
import os
import sys

from sgfmill import sgf

from azgo.engine.atomic import atomic_target
from azgo.engine.sgf import parse_result
from azgo.gtp.match import elo as match_elo, wilson

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # relative "sgf" paths start here
FIELDS = ["stage", "network", "core_hours", "board", "opponent", "games", "wins", "win_rate",
          "win_lo", "win_hi", "elo", "elo_lo", "elo_hi", "chain_elo", "sgf"]


def elo(p: float) -> float | None:
    """Elo difference of a win probability; None for 0 and 1 (no finite value)."""
    return None if p <= 0.0 or p >= 1.0 else match_elo(p)


def count(folder: str, player: str) -> tuple[int, float]:
    """Games and wins (draws half) of ``player`` in the SGF files of ``folder``."""
    games, wins = 0, 0.0
    for path in sorted(glob.glob(os.path.join(folder, "*.sgf"))):
        with open(path, "rb") as f:
            root = sgf.Sgf_game.from_bytes(f.read()).get_root()
        outcome = parse_result(root.get("RE") if root.has_property("RE") else "")
        names = {c: root.get(p) if root.has_property(p) else "" for c, p in (("B", "PB"), ("W", "PW"))}
        if player not in names.values() or outcome is None:
            continue
        games += 1
        if outcome == 0:
            wins += 0.5
        elif names["B" if outcome > 0 else "W"] == player:
            wins += 1
    return games, wins


def build(spec_path: str) -> list[dict]:
    spec = json.load(open(spec_path))
    rows, chain = [], {}
    for m in spec:
        folder = m["sgf"] if os.path.isabs(m["sgf"]) else os.path.join(REPO, m["sgf"])
        n, w = count(folder, m.get("player", "azgo"))
        lo, hi = wilson(w, n)
        e = elo(w / n) if n else None
        row = dict(stage=m["stage"], network=m["network"], core_hours=m["core_hours"], board=m["board"],
                   opponent=m["opponent"], games=n, wins=f"{w:g}", win_rate=f"{w / n:.3f}" if n else "",
                   win_lo=f"{lo:.3f}", win_hi=f"{hi:.3f}", elo="" if e is None else f"{e:.0f}",
                   elo_lo="" if elo(lo) is None else f"{elo(lo):.0f}",
                   elo_hi="" if elo(hi) is None else f"{elo(hi):.0f}", chain_elo="", sgf=m["sgf"])
        if m["opponent"].startswith("stage ") and e is not None:
            opp = int(m["opponent"].split()[1])
            base = 0.0 if opp == 0 else chain.get((m["board"], opp))
            if base is not None:
                chain[(m["board"], int(m["stage"]))] = base + e
                row["chain_elo"] = f"{base + e:.0f}"
        rows.append(row)
    return rows


def plot(rows: list[dict], png: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    anchors = sorted({(r["opponent"], r["board"]) for r in rows if not r["opponent"].startswith("stage ")})
    for k, (opp, board) in enumerate(anchors):
        pts = [r for r in rows if r["opponent"] == opp and r["board"] == board]
        x = [float(r["core_hours"]) + 0.05 * k for r in pts]
        colour = f"C{k}"
        label = f"{board}x{board} vs {opp}"
        for xi, r in zip(x, pts):
            lo = float(r["elo_lo"]) if r["elo_lo"] else None
            hi = float(r["elo_hi"]) if r["elo_hi"] else None
            if r["elo"]:
                a1.errorbar([xi], [float(r["elo"])], yerr=[[float(r["elo"]) - (lo if lo is not None else -800)],
                                                          [(hi if hi is not None else 800) - float(r["elo"])]],
                            fmt="o", color=colour, capsize=3, label=label)
            elif hi is not None:  # no wins: only an upper bound
                a1.annotate("", xy=(xi, hi - 120), xytext=(xi, hi),
                            arrowprops=dict(arrowstyle="->", color=colour))
                a1.plot([xi], [hi], "v", color=colour, label=label)
            elif lo is not None:  # all won: only a lower bound
                a1.annotate("", xy=(xi, lo + 120), xytext=(xi, lo),
                            arrowprops=dict(arrowstyle="->", color=colour))
                a1.plot([xi], [lo], "^", color=colour, label=label)
            label = None
    lo_y, hi_y = a1.get_ylim()
    a1.set_ylim(min(lo_y, -150) - 140, max(hi_y, 150))  # room for the arrows of sweeps
    a1.axhline(0, color="grey", lw=0.8)
    a1.set_xlabel("campaign core-hours")
    a1.set_ylabel("Elo vs the anchor (interval; arrows: sweeps)")
    a1.set_title("azgo vs the outside anchor")
    a1.legend(fontsize=7, loc="best")
    a1.grid(True, alpha=0.3)
    for board in sorted({r["board"] for r in rows if r["chain_elo"]}):
        chain = [r for r in rows if r["chain_elo"] and r["board"] == board]
        a2.plot([0] + [float(r["core_hours"]) for r in chain], [0] + [float(r["chain_elo"]) for r in chain],
                marker="o", label=f"{board}x{board}")
        a2.legend(fontsize=7, loc="best")
        for i, r in enumerate(chain):  # labels alternate above and below, so neighbours at one height stay apart
            a2.annotate(f"{r['network']} ({r['board']}x{r['board']})", (float(r["core_hours"]), float(r["chain_elo"])),
                        fontsize=7, xytext=(3, 3 if i % 2 == 0 else -11), textcoords="offset points")
    a2.set_xlabel("campaign core-hours")
    a2.set_ylabel("Elo vs the default network (stage 0 = 0)")
    a2.set_title("head to head, by board size")
    a2.grid(True, alpha=0.3)
    with atomic_target(png, keep_suffix=True) as tmp:
        fig.savefig(tmp, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return True


def main(argv: list[str]) -> int:
    spec = argv[1] if len(argv) > 1 else os.path.join(REPO, "docs", "runs", "campaign", "ladder.json")
    rows = build(spec)
    out = os.path.join(os.path.dirname(os.path.abspath(spec)), "ladder.csv")
    with atomic_target(out) as tmp, open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    for r in rows:
        print(f"stage {r['stage']} {r['network']:>8} {r['board']}x{r['board']} vs {r['opponent']:<22} "
              f"{r['wins']:>4}/{r['games']:<3} Elo {r['elo'] or 'n/a':>5} ({r['elo_lo'] or '-inf'} .. "
              f"{r['elo_hi'] or '+inf'})" + (f"  chain {r['chain_elo']}" if r["chain_elo"] else ""))
    png = out[:-4] + ".png"
    print(f"wrote {out}" + (f" and {png}" if plot(rows, png) else " (no matplotlib: no PNG)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
