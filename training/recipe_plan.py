"""``azgo loop --recipe --plan``: what the next generation will do, and from which state."""

from __future__ import annotations

import glob
import os

from .recipe_stop import still_generations
from .recipe_util import STAGES, TRAINING_CHECKPOINT


class PlanMixin:
    """`plan` of `azgo.training.recipe_run.RecipeRun`."""

    def plan(self) -> str:
        """What the next generation will do, and from which state (nothing is run or written)."""
        r = self.r
        lines = [f"recipe {r.name} ({os.path.relpath(r.path)}, sha256 {r.sha256[:12]}), run folder {self.dir}"]
        if self.state is not None:
            g, stage = self.state["generation"], self.state["stage"]
            best = self.state["best"]
            lines.append(f"state: the run folder, generation {g} at stage {stage}; best is generation "
                         f"{best['generation']} ({os.path.relpath(best['checkpoint'])})")
        else:
            stage = "selfplay"
            pub = self.published()
            if pub is not None:
                g = pub["generation"] + 1
                lines.append(f"state: the published lineage {os.path.relpath(self.lineage_file())}: generation "
                             f"{pub['generation']} done, best is generation {pub['best']['generation']} "
                             f"(checkpoint {pub['best']['checkpoint_sha256'][:12]}, networks "
                             + ", ".join(f"{n}x{n} {p}" for n, p in pub["best"]["nets"].items()) + ")")
                todo = pub.get("in_progress")
                if todo and todo["generation"] == g:
                    lines.append(f"       generation {g} in progress at stage {todo['stage']}: "
                                 + (", ".join(f"{s['games']} {s['size']}x{s['size']} self-play games in {s['data']}"
                                              for s in todo.get("selfplay", [])) or "no self-play yet")
                                 + " (taken up, not played again)")
                    stage = todo["stage"]
                    if STAGES.index(stage) > STAGES.index("train") and "candidate_checkpoint_sha256" not in todo:
                        stage = "train"  # as the run resumes it: no trained checkpoint was published
                    if stage == "train" and "training_checkpoint_sha256" in todo:
                        lines.append(f"       its training goes on from {TRAINING_CHECKPOINT} (published part way)")
                    for name, folder in sorted(todo.get("lines_started", {}).items()):
                        if STAGES.index(stage) > STAGES.index("quantize"):
                            games = glob.glob(os.path.join(self.path(folder), "**", "game*.sgf"), recursive=True)
                            played = [f for f in games if os.sep + "void" + os.sep not in f]
                            lines.append(f"       its {name} line resumes from its {len(played)} games in {folder}")
            else:
                g = 1
                st = r.start
                lines.append("state: nothing run or published yet; generation 0 is "
                             + (f"the checkpoint {st.checkpoint}" if st.checkpoint else f"a random {st.net} network")
                             + (", networks " + ", ".join(f"{n}x{n} {p}" for n, p in st.nets.items()) if st.nets else ""))
        r = self.recipe.at_generation(g)
        sp = r.selfplay
        lines.append(f"next: generation {g}, from stage {stage}")
        for n, changes in r.schedule:
            lines.append(f"  from generation {n}: " + ", ".join(f"[{k}]" for k in changes)
                         + (" (applies to this generation)" if n <= g else " (not yet)"))
        per = r.games_per_size()
        lines.append("  selfplay: " + ", ".join(f"{c} {n}x{n} games" for n, c in sorted(per.items()))
                     + f" at {sp.full_visits} visits ({sp.full_prob:g} of moves; else {sp.cheap_visits}), {sp.precision}, "
                     + f"{self.workers} workers"
                     + (f", Gumbel root over {sp.gumbel_m} moves" if sp.gumbel_m else "")
                     + (", played by the packaged networks (selfplay.nets)" if sp.nets == "packaged" else ""))
        lines.append("            komi " + ", ".join(f"{n}x{n} {sp.komi.fair[n]:g}" for n in sorted(per))
                     + f" +- {sp.komi.stdev:g} (normal), {sp.komi.wide_fraction:g} of games uniform in "
                     + f"[{sp.komi.range[0]:g}, {sp.komi.range[1]:g}]; {sp.handicap.fraction:g} handicap games of "
                     + f"{sp.handicap.stones[0]}-{sp.handicap.stones[1]} stones at komi {sp.handicap.komi:g}"
                     + ("" if sp.handicap.resign else ", played out"))
        lines.append(f"            resignation below winrate {sp.resign_threshold:g}; {sp.no_resign_fraction:g} of games "
                     "played out (komi_augment moves the komi of their positions only)")
        o = sp.opponent
        if o.fraction or o.fork_fraction > 0:
            who = {"gnugo": f"GNU Go level {o.level}",
                   "pachi": f"Pachi at {o.playouts} playouts a move"}.get(o.engine, repr(o.engine))
            forked = ""
            if o.fork_fraction >= 0 or o.fork_side == "winner":
                share = o.fork_fraction if o.fork_fraction >= 0 else o.fraction
                forked = (f"; of forked games {share:g}" if o.fork_fraction >= 0 else "; forked games alike") + (
                    ", it taking the side that won the game forked from" if o.fork_side == "winner" else "")
            lines.append(f"            {o.fraction:g} of games against {who} (its moves not trained on){forked}")
        if sp.openings.fraction:
            lines.append(f"            forked starts: {sp.openings.fraction:g} of even games from the first "
                         f"{sp.openings.min_moves}-{sp.openings.max_moves} moves of the games in "
                         f"{', '.join(sp.openings.sources)}"
                         + (f" lost by {sp.openings.lost_by}" if sp.openings.lost_by else "")
                         + (f", forked {sp.openings.around_peak[0]} moves before to {sp.openings.around_peak[1]} after "
                            f"the loser's largest lead by the best network" if sp.openings.around_peak else "")
                         + (f", forked {sp.openings.around_ko[0]} moves before to {sp.openings.around_ko[1]} after "
                            f"the first ko capture (games without one left out)" if sp.openings.around_ko else ""))
        for n, other in sorted(r.selfplay_by_size.items()):
            lines.append(f"            {n}x{n} games differ ([selfplay.by_size.{n}]): " + ", ".join(
                f"{k} {v}" for k, v in _differences(sp, other)))
        w = r.window
        known = self.state.get("selfplay", []) if self.state else (self.published() or {}).get("selfplay", [])
        gens = sorted({s["generation"] for s in known} | {g}, reverse=True)[: w.generations]
        lines.append(f"  window: the lineage's generations {', '.join(map(str, sorted(gens)))} "
                     f"(share {w.selfplay_share:g} of their sizes' draws, recency {w.recency:g})"
                     + "".join(f"; {n}x{n} games of the newest {k} only" if k < w.generations else
                               f"; {n}x{n} games of the newest {k}" for n, k in sorted(w.size_generations.items()))
                     + "".join(f"; {s.path} share {s.share:g}" + (f" ({s.size}x{s.size})" if s.size else "")
                               for s in w.sources))
        t = r.training
        if self.state:
            init = self.init_checkpoint(g)
            start = (f"from generation {init['generation']}'s checkpoint ("
                     + ("the best)" if init["generation"] == self.state["best"]["generation"] else "the latest trained)"))
        else:
            pub = self.published()
            if t.init == "latest" and pub and pub.get("latest"):
                start = f"from generation {pub['latest']['generation']}'s checkpoint (the latest trained)"
            elif pub:
                start = f"from generation {pub['best']['generation']}'s checkpoint (the best)"
            else:
                start = "from generation 0's checkpoint"
        if t.net:
            start += f" grown into a {t.net} network (new blocks start as identities)"
        lines.append(f"  train: {start}, {t.steps} steps of {t.batch_size}, lr {t.lr:g}"
                     + (f" x{t.lr_decay:g} at {', '.join(map(str, t.lr_steps))}" if t.lr_steps else "")
                     + ", loss weights " + ", ".join(f"{k} {v:g}" for k, v in t.loss_weights.items())
                     + (", size mix " + ", ".join(f"{n}x{n} {v:g}" for n, v in sorted(t.size_mix.items())) if t.size_mix else "")
                     + (f", komi augmentation {t.komi_augment:g}" if t.komi_augment else "")
                     + (f", handicap games x{t.handicap_weight:g}" if t.handicap_weight != 1.0 else "")
                     + (", komi inputs (score = margin on the board + komi)" if t.komi_inputs else ""))
        lines.append("  export: " + ", ".join(f"{n}x{n} (batch norm of {n}x{n} positions)" for n in r.export.bn_sizes))
        q = r.quantize
        lines.append(f"  quantize: int8, value MAE <= {q.max_value_mae:g} on {q.calibration_positions} positions, "
                     f"fp32 fallbacks {list(q.keep_fp32) or 'none'}"
                     + (f", activation ranges at percentile {q.percentile:g}" if q.percentile else "")
                     + (", keeps the closest of " + " / ".join(f"percentile {p:g}" if p else "MinMax" for p in q.percentiles)
                        + " (median score-lead error on held-out positions)" if q.percentiles else "")
                     + ("; an 8-bit copy for VNNI CPUs (" + " / ".join(f"percentile {p:g}" if p else "MinMax"
                                                                    for p in q.vnni_percentiles)
                        + (f", fp32 also {list(q.vnni_keep_fp32)}" if q.vnni_keep_fp32 else "")
                        + "), kept if closer" if q.vnni_percentiles else "")
                     if q.enabled else "  quantize: off")
        for m in [r.gate, *r.anchors]:
            how = f"{m.visits} visits" if m.visits else f"{m.seconds:g} s a move" + (" (both engines' clock)" if m.same_clock and m.opponent != "best" else "")
            rule = ""
            if m is r.gate:
                rule = (f"; SPRT elo {r.gate.elo0:g} vs {r.gate.elo1:g}, alpha {r.gate.alpha:g}, beta {r.gate.beta:g}"
                        if r.gate.rule == "sprt" else f"; passes at a score >= {r.gate.threshold:g}")
            lines.append(f"  {m.name}: {m.games} games against {m.opponent} on {m.size}x{m.size}, komi {m.komi:g}"
                         + (f" (the {m.net_size}x{m.net_size} network)" if m.net_size and m.net_size != m.size else "")
                         + (f", {m.handicap} handicap stones" if m.handicap else "") + f", {how}"
                         + (f", --early-stop {m.early_stop}" if m.early_stop else "") + rule
                         + (", played out (not stopped once out of reach)" if m.played_out else "")
                         + (f" ({m.parallel} at once)" if m.parallel > 1 else "")
                         + (f"; every {m.every} generations" + ("" if g % m.every else ", this one")
                            if m is not r.gate and m.every > 1 else ""))
        p = r.promotion
        anchors = {a.name: a for a in r.anchors}

        def target(n, f):
            lo, hi = self.registry_sizes(n, f, p)
            decided = [x for x in p.lines if x in anchors and f in self.deciding_files(anchors[x], p)]
            return (f"{n}x{n} -> {p.registry}/{f} ({lo}x{lo}-{hi}x{hi}"
                    + (f"; decided by {', '.join(decided)}" if p.lines else "")
                    + ("" if p.gated(f) else ", with or without the gate") + ")")
        lines.append("  promote: " + (", ".join(target(n, f) for n, f in p.files())
                                      if p.entries else "best network of the run only (no registry entry)")
                     + ("; each file packaged only if the lines that decide it score at least its card on the same"
                        " terms" + ("".join(f" ({x}: less {m:g} points)" for x, m in p.margins.items()))
                        + ("; those lines are played only while they can decide it (not after a failed"
                                    " gate" + (", but for the files decided with or without it," if p.by_lines_alone
                                               else "") + " or once the lines before them held their files back, and"
                                    " stopped once out of reach)" if p.stop_early else "") if p.lines else ""))
        lines.append("  publish: " + (f"{r.lineage.dir} (best.pt, lineage.json, ladder)" if r.lineage.dir else "nothing")
                     + (f", self-play shards under {r.lineage.data}/" if r.lineage.data else ""))
        if r.stop.patience:
            held = self.state or self.published() or {}
            still = still_generations(g - 1, held.get("generations") or {}, held.get("ladder") or [], r.stop.lines)
            lines.append(f"  stop: after {r.stop.patience} generations in a row that replace no registry file"
                         + (f" and set no new best on {', '.join(r.stop.lines)}" if r.stop.lines else "")
                         + f" (so far {still} before generation {g})")
        return "\n".join(lines)


def _differences(a, b, prefix: str = "") -> list[tuple[str, str]]:
    """``(field, value in b)`` for each field (dotted, through nested dataclasses) where ``b`` differs from ``a``."""
    from dataclasses import fields, is_dataclass
    out = []
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if x == y:
            continue
        if is_dataclass(x):
            out += _differences(x, y, prefix + f.name + ".")
        else:
            out.append((prefix + f.name, f"{y:g}" if isinstance(y, float) else
                        (str(list(y)) if isinstance(y, tuple) else str(y))))
    return out
