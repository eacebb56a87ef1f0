"""The match stages of a recipe's generation: the gate (a threshold or Wald's SPRT) and the anchor lines, each
played in parallel sub-lines, resumed from its SGF files, and kept as a strength record."""

from __future__ import annotations

import math
import os
import shlex
import sys

from .recipe import RecipeError
from .recipe_util import relative_paths


def sprt_llr(scores: list[float], elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of ``elo1`` against ``elo0`` for a list of game scores (1, 0.5, 0), by the
    normal approximation of the score (GSPRT); the variance has one win and one loss of prior weight, so a
    few games never decide alone."""
    n = len(scores)
    if n == 0:
        return 0.0
    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    total = sum(scores)
    mean = (total + 1.0) / (n + 2)
    var = (sum((x - mean) ** 2 for x in scores) + (1 - mean) ** 2 + mean ** 2) / (n + 2)
    return (s1 - s0) * (total - n * (s0 + s1) / 2) / max(var, 1e-6)

def out_of_reach(summary, games: int, bar: float) -> bool:
    """Whether a line of ``games`` games whose games so far are ``summary`` can no longer score ``bar``
    points (wins + draws / 2), even by winning every game left."""
    points = summary.a_wins + 0.5 * summary.draws
    return points + max(0, games - summary.games) < bar - 1e-9


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper) LLR bounds of Wald's test: reject below, accept above."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


class LinesMixin:
    """Stages 5-6 of `azgo.training.recipe_run.RecipeRun`."""

    def _azgo(self, net: str, m) -> str:
        precision = "int8" if self.r.quantize.enabled else "fp32"
        limit = f"--visits {m.visits}" if m.visits else f"--seconds {m.seconds:g}"
        if m.visits == 0 and m.same_clock and m.opponent != "best":
            limit = "--lag 0.1"  # the clock (byo-yomi of `seconds` a move) sets azgo's time, as the opponent's
        early = f" --early-stop {m.early_stop}" if m.early_stop else ""
        return (f"{shlex.quote(sys.executable)} -m azgo.gtp.cli gtp --net {shlex.quote(net)} --threads {m.threads} "
                f"--precision {precision} --device cpu {limit}{early}")

    def _opponent(self, m) -> str:
        if m.opponent == "best":
            return self._azgo(self.best_net(m.net_size or m.size), m)
        from azgo.gtp.opponents import OpponentMissing, gnugo_command, pachi_command
        try:
            if m.opponent == "gnugo":
                return gnugo_command(m.level)
            if m.opponent == "pachi":
                return pachi_command(m.threads, build=True)  # built once (PyPI source, make) if missing
        except OpponentMissing as e:
            raise RecipeError(f"{m.name}: {e}") from None
        return m.opponent

    def _time_settings(self, m):
        from azgo.engine.timecontrol import TimeSettings
        if m.visits or not m.same_clock or m.opponent == "best":
            return None
        return TimeSettings("byoyomi", 0.0, float(m.seconds), 3)

    def _line(self, g: int, m, folder: str, should_stop=None):
        """Play line ``m`` for generation g in ``folder`` (with ``parallel`` sub-lines ``folder/part<k>`` at
        once, each with its share of the games); games already written count (resumed). Returns the
        combined summary."""
        from azgo.gtp.match import run_match_parts
        name_b = m.opponent if m.opponent in ("best", "gnugo", "pachi") else m.name
        cmd_a, cmd_b, ts = self._azgo(self.cand_net(g, m.net_size or m.size), m), self._opponent(m), self._time_settings(m)
        summary = run_match_parts(cmd_a, cmd_b, m.games, m.parallel, sgf_dir=folder, log=self.log,
                                  should_stop=should_stop, size=m.size, komi=m.komi, time_settings=ts,
                                  name_a=f"gen{g}", name_b=name_b, resume=True, replay_crashes="b",
                                  void_time_losses=True, handicap=m.handicap)
        for line in summary.lines():
            self.log(f"[gen {g}] {m.name}: {line}")
        here = f"{shlex.quote(sys.executable)} -m azgo.gtp.cli"  # shown as the command a user types
        cmd_a, cmd_b = cmd_a.replace(here, "azgo"), cmd_b.replace(here, "azgo")
        summary.meta = {"command": relative_paths(f"azgo match -a {shlex.quote(cmd_a)} -b {shlex.quote(cmd_b)} "
                                                  f"--size {m.size} --komi {m.komi:g}"
                                                  + (f" --handicap {m.handicap}" if m.handicap else ""),
                                                  self.r.root, self.dir),
                        "games_folder": self.rel(folder)}
        return summary

    def line_folders(self, g: int) -> dict[str, str]:
        """Where generation g's strength lines write their games in the run folder: {line name: folder}, the
        gate's and each anchor's (whether or not the anchor plays this generation)."""
        out = {self.r.gate.name: os.path.join(self.gen_dir(g), "gate")}
        for a in self.r.anchors:
            out[a.name] = os.path.join(self.gen_dir(g), "anchors", a.name)
        return out

    def stage_gate(self, g: int) -> None:
        gate = self.r.gate
        folder = self.line_folders(g)[gate.name]
        lo, hi = sprt_bounds(gate.alpha, gate.beta)

        def decided(summary) -> bool:
            if gate.rule != "sprt":
                return False
            llr = sprt_llr(summary.scores, gate.elo0, gate.elo1)
            return llr <= lo or llr >= hi
        s = self._line(g, gate, folder, should_stop=decided)
        score = (s.a_wins + 0.5 * s.draws) / s.games if s.games else 0.0
        if gate.rule == "sprt":
            llr = sprt_llr(s.scores, gate.elo0, gate.elo1)
            passed = llr >= hi
            verdict = f"SPRT LLR {llr:.2f} in ({lo:.2f}, {hi:.2f}): {'accepted' if passed else 'rejected'}"
        else:
            passed = score >= gate.threshold
            verdict = f"score {score:.3f} against the threshold {gate.threshold:g}: {'passed' if passed else 'failed'}"
        self.log(f"[gen {g}] gate: {verdict}")
        info = self.state["generations"].setdefault(str(g), {})
        info["gate"] = self._record(gate, s) | {"passed": passed, "verdict": verdict}

    def stage_anchors(self, g: int) -> None:
        """Every anchor line due this generation. With ``promotion.stop_early``, a line of ``promotion.lines``
        is played only while it can decide packaging (see `Promotion`): skipped when none of the registry files it
        decides is open (a file is open unless an earlier such line already held it back or the gate did not
        promote the candidate and the file is not one of ``by_lines_alone``), and ended once it can no longer
        score any open file's card points (``stopped`` in its record), unless it is ``played_out``."""
        info = self.state["generations"].setdefault(str(g), {})
        p = self.r.promotion
        deciding = set(p.lines) if p.entries and p.stop_early else set()
        promoted = bool(info.get("gate", {}).get("passed"))
        lines, held_by = {}, {}  # held_by: registry file -> the line that held it back
        for a in self.r.anchors:
            if g % a.every:
                self.log(f"[gen {g}] {a.name}: not this generation (every {a.every})")
                continue
            bars = {}
            if a.name in deciding:
                files = self.deciding_files(a)
                reachable = [f for f in files if promoted or not p.gated(f)]  # the gate leaves these open
                open_files = [f for f in reachable if f not in held_by]
                if not open_files and (files or not promoted):
                    by = sorted({held_by[f] for f in reachable if f in held_by})
                    why = (f"its {' and '.join(by)} line{'s' if len(by) > 1 else ''} already "
                           f"hold{'' if len(by) > 1 else 's'} packaging back" if by
                           else f"the gate did not promote generation {g}")
                    self.log(f"[gen {g}] {a.name}: not played: {why}, and this line only decides packaging "
                             "(promotion.stop_early)")
                    continue
                if not promoted:
                    self.log(f"[gen {g}] {a.name}: played though the gate did not promote generation {g}: it "
                             f"decides {', '.join(open_files)} (promotion.by_lines_alone)")
                bars = self.packaging_bars(a, open_files)
            # it stops only when it can reach no open file's bar (a file whose card has no such line: never),
            # and a line played out (anchors.played_out) not even then: the decision below is the same
            bar = min(bars.values()) if bars and None not in bars.values() else None
            stop = None if bar is None or a.played_out else (lambda s, a=a, bar=bar: out_of_reach(s, a.games, bar))
            s = self._line(g, a, self.line_folders(g)[a.name], should_stop=stop)
            rec = self._record(a, s)
            for f, b in bars.items():
                if b is not None and out_of_reach(s, a.games, b):
                    held_by[f] = a.name
            if bar is not None and out_of_reach(s, a.games, bar) and s.games < a.games:
                rec["stopped"] = (f"after {s.games} of {a.games} games: it can no longer score the packaged "
                                  f"network's {bar:g} points")
                self.log(f"[gen {g}] {a.name}: stopped {rec['stopped']}")
            lines[a.name] = rec
        info["anchors"] = lines

    @staticmethod
    def _record(m, s) -> dict:
        """A strength line as a record (the card and the ladder take these)."""
        from azgo.gtp.match import elo, wilson
        score = (s.a_wins + 0.5 * s.draws) / s.games if s.games else 0.0
        lo, hi = wilson(s.a_wins + 0.5 * s.draws, s.games) if s.games else (0.0, 1.0)
        meta = getattr(s, "meta", {})
        return {"line": m.name, "opponent": m.opponent, "size": m.size, "komi": m.komi, "handicap": m.handicap,
                "seconds": m.seconds if not m.visits else None, "visits": m.visits or None, "threads": m.threads,
                "games": s.games, "wins": s.a_wins, "losses": s.b_wins, "draws": s.draws, "score": round(score, 4),
                "interval": [round(lo, 4), round(hi, 4)], "elo": round(max(-999.0, min(999.0, elo(score))), 1) + 0.0,
                "seconds_per_move": {"azgo": s.per_move("a"), "opponent": s.per_move("b")},
                "by_colour": {c: list(v) for c, v in getattr(s, "by_colour", {}).items()},  # [score, games] as each
                "command": meta.get("command", ""), "games_folder": meta.get("games_folder", "")}
