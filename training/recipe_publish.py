"""The last stages of a recipe's generation: promotion (the registry entries and their cards), the ladder, and
the publication of the lineage's resume state into the repository."""

from __future__ import annotations

import csv
import glob
import gzip
import io
import json
import os
import re
from pathlib import Path

from azgo.engine.atomic import atomic_copy, atomic_target, atomic_write

from .portable import write_portable_checkpoint
from .recipe import RecipeError
from .recipe_util import LADDER_FIELDS, LINEAGE_FILE, STAGES, TRAINING_CHECKPOINT, relative_paths, sha256


SEARCH_LOG_SOURCE = "engines.stderr.log"
SEARCH_LOG_KEPT = "engines.stderr.log.gz"
SEARCH_LINE = re.compile(r"azgo: \S+ winrate ")


def keep_search_log(src: Path, dst: Path) -> bool:
    """Write ``dst`` (gzip) with azgo's search lines (``azgo: MOVE winrate ..., lead ...``) of the engines' stderr
    log ``src``, the lines `benchmarks/lost_leads.py --from-log` reads; the opponent's lines (Pachi writes
    megabytes) are left out. Written again only when ``src`` is newer; the gzip header carries no time, so an
    unchanged log gives the same bytes. True when written."""
    if dst.exists() and dst.stat().st_mtime >= src.stat().st_mtime:
        return False
    with open(src, "rt", encoding="utf-8", errors="replace") as fh:
        kept = "".join(line for line in fh if SEARCH_LINE.match(line))
    if not kept and not dst.exists():
        return False
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(kept.encode("utf-8"))
    dst.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(dst, buf.getvalue())
    return True


class PublishMixin:
    """Stages 7-8 and the ladder of `azgo.training.recipe_run.RecipeRun`."""

    # ------------------------------------------------------------------ 7. promotion
    def stage_promote(self, g: int) -> None:
        info = self.state["generations"].setdefault(str(g), {})
        passed = bool(info.get("gate", {}).get("passed"))
        trained = os.path.join(self.gen_dir(g), "train", "checkpoint.pt")
        if os.path.exists(trained):  # where training.init = "latest" starts the next generation
            self.state["latest"] = {"generation": g, "checkpoint": trained}
        hours = self.state.get("core_hours", 0.0)
        ratings = self.state.setdefault("ratings", {"0": 0.0})
        for name, rec in [("gate", info.get("gate"))] + list(info.get("anchors", {}).items()):
            if not rec:
                continue
            smoothed = _elo_of((rec["wins"] + 0.5 * rec["draws"] + 0.5) / (rec["games"] + 1))
            if name == "gate" and rec["opponent"] == "best":  # the ladder chains head-to-head steps
                ratings[str(g)] = round(ratings.get(str(self.state["best"]["generation"]), 0.0) + smoothed, 1)
                self._add_ladder(g, dict(rec, elo=ratings[str(g)]), passed, hours)
            else:  # against a fixed opponent: Elo of the (half-a-win smoothed) score
                self._add_ladder(g, dict(rec, elo=round(smoothed, 1)), passed, hours)
        if not passed:
            info["promoted"] = False
            self.log(f"[gen {g}] not promoted: generation {self.state['best']['generation']} stays the best")
            files = self.packaging_without_gate(info)
            if files:
                info["packaged_files"] = files
                info["packaged_without_gate"] = True
                self._promote_registry(g, info, files)
            return
        nets = {str(n): self.cand_net(g, n) for n in self.r.export.bn_sizes}
        self.state["best"] = {"generation": g, "checkpoint": os.path.join(self.gen_dir(g), "train", "checkpoint.pt"),
                              "nets": nets}
        info["promoted"] = True
        if self.r.promotion.entries:
            decision = self.packaging_decision(info)
            files = [f for f, why in decision.items() if not why]
            held = [why for whys in decision.values() for why in whys]
            info["packaged"] = not held  # every registry file replaced
            info["packaged_files"] = files
            if held:
                info["packaging"] = held
                for why in held:
                    self.log(f"[gen {g}] not packaged: {why}")
            if files:
                self._promote_registry(g, info, files)
        self.log(f"[gen {g}] promoted: generation {g} is the best network")

    def registry_ranges(self, promotion=None) -> dict[str, tuple[int, int]]:
        """{registry file: the board sizes it serves} from the promotion registry's ``registry.json`` (empty
        where there is none); ``promotion``: a generation's ``[promotion]`` other than the current one's."""
        path = os.path.join(self.path((promotion or self.r.promotion).registry), "registry.json")
        try:
            entries = json.loads(Path(path).read_text()).get("networks", []) if os.path.exists(path) else []
        except ValueError:
            entries = []
        return {e["file"]: (int(e["sizes"][0]), int(e["sizes"][1])) for e in entries
                if isinstance(e, dict) and isinstance(e.get("file"), str) and len(e.get("sizes") or ()) == 2}

    def registry_sizes(self, n: int, fname: str, promotion=None) -> tuple[int, int]:
        """The board sizes registry file ``fname`` serves (its ``registry.json`` range; a file not yet there:
        size ``n``, the entry it will get)."""
        return self.registry_ranges(promotion).get(fname, (n, n))

    def deciding_files(self, m, promotion=None) -> list[str]:
        """The registry files of ``promotion.entries`` that anchor ``m`` decides: those its network (exported
        for ``m.net_size or m.size``) goes into and whose board sizes include ``m.size``. ``promotion``: the
        ``[promotion]`` of another generation than the one running (``--plan`` of the next one)."""
        promotion = promotion or self.r.promotion
        net, ranges = m.net_size or m.size, self.registry_ranges(promotion)
        return [f for n, f in promotion.files()
                if n == net and ranges.get(f, (n, n))[0] <= m.size <= ranges.get(f, (n, n))[1]]

    def packaged_lines(self, m, files=None) -> list[tuple[str, dict]]:
        """For anchor ``m``: (registry file, record) of the best record on ``m``'s terms in the card of each
        packaged network ``m`` decides (`deciding_files`; or of ``files``) that has one (see `same_terms`)."""
        reg = self.path(self.r.promotion.registry)
        out = []
        for fname in (self.deciding_files(m) if files is None else files):
            card_path = Path(reg, fname).with_suffix(".json")
            try:
                card = json.loads(card_path.read_text()) if card_path.exists() else {}
            except ValueError:
                card = {}
            theirs = [rec for rec in (card.get("strength") or []) if isinstance(rec, dict) and same_terms(m, rec)]
            if theirs:
                out.append((fname, max(theirs, key=line_score)))
        return out

    def packaging_bars(self, m, files=None) -> dict[str, float | None]:
        """{registry file: the points (wins + draws / 2) of ``m.games`` that anchor ``m`` must score to hold that
        file's card line on its terms, None where its card records none} for the files ``m`` decides (or
        ``files``)."""
        files = self.deciding_files(m) if files is None else files
        found = dict(self.packaged_lines(m, files))
        margin = self.r.promotion.margin(m.name)
        return {f: (line_score(found[f]) * m.games - margin if f in found else None) for f in files}

    def packaging_bar(self, m) -> float | None:
        """The points of ``m.games`` that anchor ``m`` must score to hold every card line on its terms of the
        files it decides; None where no card records one."""
        bars = [b for b in self.packaging_bars(m).values() if b is not None]
        return max(bars) if bars else None

    def packaging_decision(self, info: dict) -> dict[str, list[str]]:
        """{registry file of ``promotion.entries``: why a generation its gate promoted does not replace it (empty:
        it does)}: for each of ``promotion.lines`` that decides the file (`deciding_files`), the line's record
        scored below the line on the same terms in the file's card, or it was not played in full (stopped early,
        or not played after earlier lines held its files back)."""
        anchors = {a.name: a for a in self.r.anchors}
        decision = {fname: [] for _, fname in self.r.promotion.files()}
        for name in self.r.promotion.lines:
            files = self.deciding_files(anchors[name])
            if not files:
                self.log(f"[promote] {name} decides no registry file of promotion.entries (board {anchors[name].size})")
                continue
            mine = info.get("anchors", {}).get(name)
            if not mine or not mine.get("games"):
                for fname in files:
                    decision[fname].append(f"its {name} line has no games (a line in promotion.lines decides "
                                           f"packaging): {fname} stays")
                continue
            found = self.packaged_lines(anchors[name], files)
            if not found:
                self.log(f"[promote] no packaged card has a {name} line on these terms: nothing to hold it back")
            margin = self.r.promotion.margin(name)
            for fname, best in found:
                if line_score(mine) < line_score(best) - margin / anchors[name].games - 1e-9 or mine.get("stopped"):
                    decision[fname].append(
                        f"{name} {mine['wins']:g}-{mine['losses']:g}-{mine['draws']:g} of {mine['games']} "
                        + (f"(stopped {mine['stopped']}) " if mine.get("stopped") else "")
                        + f"against the packaged {fname}'s {best['wins']:g}-{best['losses']:g}-"
                        f"{best['draws']:g} of {best['games']} on the same terms ({best.get('games_folder', '')})"
                        + (f", less a margin of {margin:g} points (promotion.margins)" if margin else "")
                        + f": {fname} stays")
        return decision

    def packaging_without_gate(self, info: dict) -> list[str]:
        """The registry files of ``promotion.by_lines_alone`` that a generation its gate did not promote replaces:
        each line of ``promotion.lines`` that decides the file scored at least the file's card on its terms, and at
        least one of them was compared with such a card line (a file no played line measured stays)."""
        p = self.r.promotion
        if not (p.entries and p.by_lines_alone):
            return []
        decision = self.packaging_decision(info)
        anchors = {a.name: a for a in self.r.anchors}
        played = info.get("anchors", {})
        out = []
        for _, fname in p.files():
            if p.gated(fname) or decision.get(fname):
                continue
            measured = [name for name in p.lines if name in anchors and fname in self.deciding_files(anchors[name])
                        and (played.get(name) or {}).get("games") and self.packaged_lines(anchors[name], [fname])]
            if measured:
                self.log(f"[promote] {fname}: its {', '.join(measured)} line{'s' if len(measured) > 1 else ''} "
                         "hold its card, without the gate (promotion.by_lines_alone)")
                out.append(fname)
            else:
                self.log(f"[promote] {fname}: no line compared with its card: it stays (promotion.by_lines_alone)")
        return out

    def packaging_held_back(self, info: dict) -> list[str]:
        """Why a generation its gate promoted does not replace every registry file (empty: it does); see
        `packaging_decision`."""
        return [why for whys in self.packaging_decision(info).values() for why in whys]

    def promote_by_hand(self, g: int, reason: str) -> None:
        """Make finished generation ``g``, which its gate did not promote, the best network on a decision taken
        outside the recipe's rule (games played by hand under a rule written before them): the same promotion as
        a passed gate (best, registry entries and cards), recorded with ``reason`` and the date in the state, the
        card and the ladder, then published. The generation in progress goes on from its stage; its self-play
        from now on is by the new best (what it played before is recorded as by the old one)."""
        import datetime
        if self.state is None:
            raise RecipeError(f"{self.dir} holds no run to promote in")
        pid = self.running_loop()
        if pid is not None:  # it would write its own state over this one
            raise RecipeError(f"a loop (pid {pid}) is running in {self.dir}: stop it first (kill {pid}), promote, "
                              "then start it again")
        reason = " ".join(reason.split())
        if not reason:
            raise RecipeError("--promote needs a --reason: why, and where the games that decided it are")
        info = self.state["generations"].get(str(g))
        current = self.state["generation"]
        if info is None or g >= current or "promoted" not in info:
            raise RecipeError(f"generation {g} is not a finished generation of this run (generation {current} is in "
                              f"progress at stage {self.state['stage']})")
        old = self.state["best"]["generation"]
        if info["promoted"] or old == g:
            raise RecipeError(f"generation {g} is already promoted (the best is generation {old})")
        checkpoint = os.path.join(self.gen_dir(g), "train", "checkpoint.pt")
        missing = [p for p in [checkpoint] + [self.cand_net(g, n) for n in self.r.export.bn_sizes] if not os.path.exists(p)]
        if missing:
            raise RecipeError(f"generation {g}'s {self.rel(missing[0])} is not in this run folder: promote in the "
                              "run folder that played it")
        by_hand = {"reason": reason, "replaces_generation": old,
                   "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
        progress = self.state["generations"].setdefault(str(current), {})
        if self.state["stage"] == "selfplay":  # its games so far were played by the old best
            done = {str(n): len(glob.glob(os.path.join(self.gen_dir(current), "selfplay", str(n), "*.sgf")))
                    for n in self.r.sizes}
            progress.setdefault("best_changed_during_selfplay", []).append(
                {"from": old, "to": g, "games_before": done, "date": by_hand["date"]})
        elif STAGES.index(self.state["stage"]) > STAGES.index("train"):
            self.log(f"[promote] generation {current} is past training (at {self.state['stage']}): its gate plays "
                     f"generation {g} from now on")
        info["promoted"] = True
        info["promoted_by_hand"] = by_hand
        self.state["best"] = {"generation": g, "checkpoint": checkpoint,
                              "nets": {str(n): self.cand_net(g, n) for n in self.r.export.bn_sizes}}
        for row in self.state["ladder"]:
            if int(row["generation"]) == g and row["line"] == "gate":
                row["promoted"] = 1
        if self.r.promotion.entries:
            self._promote_registry(g, info)
        self.save()
        self.write_ladder(self.dir)
        self.log(f"[gen {g}] promoted by hand (was generation {old}): {reason}")
        self.publish()

    def package_by_hand(self, g: int, reason: str) -> list[str]:
        """Apply the recipe's packaging rule as it stands now (`packaging_decision`) to generation ``g``, the best
        network, on its recorded lines, and replace the registry files it passes that do not hold it yet: after
        ``[promotion]`` changed (e.g. a registry file split by board size), on a decision ``reason`` records with
        the games outside the loop that took part in it. Recorded with the reason and the date in the state, the
        cards and the lineage, then published; returns the files replaced."""
        import datetime
        if self.state is None:
            raise RecipeError(f"{self.dir} holds no run to package from")
        pid = self.running_loop()
        if pid is not None:
            raise RecipeError(f"a loop (pid {pid}) is running in {self.dir}: stop it first (kill {pid}), package, "
                              "then start it again")
        reason = " ".join(reason.split())
        if not reason:
            raise RecipeError("--package needs a --reason: why now, and where the games that decided it are")
        if not self.r.promotion.entries:
            raise RecipeError(f"{self.r.path}: [promotion] names no registry entries to package into")
        info = self.state["generations"].get(str(g))
        best = self.state["best"]["generation"]
        if info is None or not info.get("promoted") or best != g:
            raise RecipeError(f"generation {g} is not the best network of this run (generation {best} is): only "
                              "the best is packaged")
        decision = self.packaging_decision(info)
        reg = self.path(self.r.promotion.registry)
        mine = {n: sha256(self.cand_net(g, n)) for n, _ in self.r.promotion.files() if os.path.exists(self.cand_net(g, n))}
        holding = {f for n, f in self.r.promotion.files()
                   if os.path.exists(os.path.join(reg, f)) and sha256(os.path.join(reg, f)) == mine.get(n)}
        files = [f for f, why in decision.items() if not why and f not in holding]
        if not files:
            whys = "; ".join([f"{f} already holds it" for f in sorted(holding)]
                             + [why for whys in decision.values() for why in whys])
            raise RecipeError(f"the packaging rule replaces no registry file with generation {g}: {whys}")
        missing = [self.cand_net(g, n) for n, f in self.r.promotion.files() if f in files and n not in mine]
        if missing:
            raise RecipeError(f"generation {g}'s {self.rel(missing[0])} is not in this run folder: package in the "
                              "run folder that played it")
        info["packaged_by_hand"] = {"reason": reason, "files": files,
                                    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
        info["packaged_files"] = sorted(set(info.get("packaged_files") or []) | set(files) | holding)
        held = [why for f, whys in decision.items() if f not in info["packaged_files"] for why in whys]
        info["packaged"] = not held
        info["packaging"] = held
        self._promote_registry(g, info, files)
        self.save()
        self.log(f"[gen {g}] packaged by hand into {', '.join(files)}: {reason}")
        self.publish()
        return files

    def _promote_registry(self, g: int, info: dict, files=None) -> None:
        """Generation g's exported networks into the registry files of ``promotion.entries`` (only ``files``
        where given), each with its card."""
        from azgo.nets.quantize import copy_int8_copies
        reg = self.path(self.r.promotion.registry)
        os.makedirs(reg, exist_ok=True)
        registry_path = os.path.join(reg, "registry.json")
        registry = json.load(open(registry_path)) if os.path.exists(registry_path) else {"networks": []}
        for n, fname in self.r.promotion.files():
            if files is not None and fname not in files:
                continue
            src = self.cand_net(g, n)
            dst = os.path.join(reg, fname)
            copy_int8_copies(src, dst)  # first: a player reloads when the fp32 file changes
            atomic_copy(src, dst)
            card = self.card(g, n, info, dst)
            old_card = Path(dst).with_suffix(".json")
            if old_card.exists():  # what it replaces, by hash (the old card's history stays in git)
                try:
                    old = json.loads(old_card.read_text())
                    card["previous"] = {"sha256": old.get("sha256"), "name": old.get("name"),
                                        "recipe_generation": (old.get("recipe") or {}).get("generation")}
                except ValueError:
                    pass
            atomic_write(old_card, json.dumps(card, indent=2) + "\n")
            entry = next((e for e in registry["networks"] if e["file"] == fname), None)
            if entry is None:
                registry["networks"].append({"file": fname, "sizes": [n, n], "card": Path(fname).with_suffix(".json").name})
            self.log(f"[gen {g}] registry: {fname} <- generation {g} ({sha256(dst)[:12]})")
        atomic_write(registry_path, json.dumps(registry, indent=2) + "\n")

    def card(self, g: int, n: int, info: dict, dst: str) -> dict:
        """The card of generation g's size-n network as promoted (relative paths only)."""
        from azgo.nets.quantize import int8_path_for, int8_vnni_path_for
        src_card = Path(self.cand_net(g, n)).with_suffix(".json")
        base = json.loads(src_card.read_text()) if src_card.exists() else {}
        base["name"] = Path(dst).stem
        base["file"] = os.path.basename(dst)
        base["sha256"] = sha256(dst)
        if int8_path_for(dst).exists():
            base["int8"] = {"file": int8_path_for(dst).name, "sha256": sha256(int8_path_for(dst)),
                            **{k: v for k, v in info.get("quantize", {}).get(str(n), {}).items() if k != "vnni"}}
        base.pop("int8_vnni", None)
        if int8_vnni_path_for(dst).exists():
            base["int8_vnni"] = {"file": int8_vnni_path_for(dst).name, "sha256": sha256(int8_vnni_path_for(dst)),
                                 **info.get("quantize", {}).get(str(n), {}).get("vnni", {})}
        gens = self.state["generations"]
        base["recipe"] = {"name": self.r.name, "file": os.path.relpath(self.r.path, self.r.root),
                          "sha256": self.r.sha256, "generation": g,
                          "parent_generation": self._parent(g),
                          "core_hours": self.state.get("core_hours", 0.0),
                          "hours_this_generation": round(sum(gens[str(g)].get("seconds", {}).values()) / 3600, 3),
                          "selfplay": [{"size": s["size"], "games": s["games"]} for s in info.get("selfplay", [])],
                          "train": info.get("train", {})}
        if info.get("promoted_by_hand"):  # promoted on games outside the gate's rule: why, and where they are
            base["recipe"]["promoted_by_hand"] = info["promoted_by_hand"]
        if info.get("packaged_without_gate"):  # its gate did not promote it: its lines on this size decided
            base["recipe"]["packaged_without_gate"] = True
        if info.get("packaged_by_hand"):  # packaged after its generation, on the rule as it stands then: why
            base["recipe"]["packaged_by_hand"] = info["packaged_by_hand"]
        base["strength"] = [self._kept_games(g, rec) for rec in [info.get("gate")] + list(info.get("anchors", {}).values())
                            if rec]
        return relative_paths(base, self.r.root, self.dir)

    def _kept_games(self, g: int, rec: dict) -> dict:
        """A strength record whose SGF files (in the run folder, which a clone lacks) are copied into the
        lineage folder, ``games/genNNNN-<line>/``, with ``games_folder`` pointing there."""
        folder = rec.get("games_folder", "")
        if not folder or not self.r.lineage.dir or not folder.startswith("<run>/"):
            return rec
        src = Path(self.path(folder))
        dst = Path(self.path(self.r.lineage.dir)) / "games" / f"gen{g:04d}-{rec.get('line', 'line')}"
        for f in sorted(src.rglob("*.sgf")):
            target = dst / f.relative_to(src)
            if not target.exists() or target.stat().st_size != f.stat().st_size:
                atomic_copy(str(f), str(target))
        for f in sorted(src.rglob(SEARCH_LOG_SOURCE)):
            keep_search_log(f, dst / f.parent.relative_to(src) / SEARCH_LOG_KEPT)
        if not dst.is_dir():  # neither here nor kept: said in the record (a card points only to games that exist)
            if src.is_dir():
                return rec
            lost = f"games lost: {folder} was not in the run folder that published this (played in one since lost)"
            note = rec.get("note", "")
            return {**rec, "note": note if lost in note else "; ".join(x for x in (note, lost) if x)}
        return {**rec, "games_folder": self.rel(str(dst))}

    def _keep_started_lines(self, g: int, info: dict) -> dict:
        """The games so far of generation g's strength lines that are not yet recorded in ``info`` (its gate or
        anchors stage stopped part way, e.g. at the end of a session), kept in the lineage folder where the
        finished line's games will be: {line name: that folder}. A new run folder copies them back
        (``_take_up_started_lines``), so that the line resumes from them instead of playing them again."""
        recorded = set(info.get("anchors", {})) | ({self.r.gate.name} if info.get("gate") else set())
        kept = {}
        for name, folder in self.line_folders(g).items():
            if name in recorded or not glob.glob(os.path.join(folder, "**", "*.sgf"), recursive=True):
                continue
            rec = self._kept_games(g, {"line": name, "games_folder": self.rel(folder)})
            if rec["games_folder"] != self.rel(folder):
                kept[name] = rec["games_folder"]
        return kept

    def _with_kept_games(self, g: int, info: dict) -> dict:
        """Generation g's record with its gate's and anchors' games kept in the lineage folder (promoted
        or not: the ladder's rows stand on them)."""
        out = dict(info)
        if info.get("gate"):
            out["gate"] = self._kept_games(g, info["gate"])
        if info.get("anchors"):
            out["anchors"] = {name: self._kept_games(g, rec) for name, rec in info["anchors"].items()}
        return out

    def _parent(self, g: int) -> int | None:
        rows = [r for r in self.state["ladder"] if r.get("promoted") in ("1", 1, True) and int(r["generation"]) < g]
        return int(rows[-1]["generation"]) if rows else None

    # ------------------------------------------------------------------ ladder
    def _ladder_row(self, g, line, opponent, size, games, rec, promoted, hours) -> dict:
        rec = rec or {}
        return {"generation": g, "line": line, "opponent": opponent, "size": size,
                "seconds": rec.get("seconds") or "", "games": games, "wins": rec.get("wins", ""),
                "losses": rec.get("losses", ""), "draws": rec.get("draws", ""), "score": rec.get("score", ""),
                "elo": rec.get("elo", ""), "promoted": int(bool(promoted)), "core_hours": round(hours, 3)}

    def _add_ladder(self, g: int, rec: dict, promoted: bool, hours: float) -> None:
        ladder = [r for r in self.state["ladder"] if not (int(r["generation"]) == g and r["line"] == rec["line"])]
        ladder.append(self._ladder_row(g, rec["line"], rec["opponent"], rec["size"], rec["games"], rec, promoted, hours))
        self.state["ladder"] = ladder

    def write_ladder(self, folder: str) -> None:
        """``ladder.csv`` and ``ladder.png`` (the score of every line by generation) into ``folder``."""
        import io
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=LADDER_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(self.state["ladder"])
        atomic_write(os.path.join(folder, "ladder.csv"), buf.getvalue())
        plot_ladder(self.state["ladder"], os.path.join(folder, "ladder.png"), self.r.name)

    # ------------------------------------------------------------------ 8. publish
    def stage_publish(self, g: int) -> None:
        self.write_ladder(self.dir)
        if not self.r.lineage.dir:
            self._keep_selfplay(g, [])
            return
        published = self._pack_selfplay(g)
        self._keep_selfplay(g, published)
        self.publish(done=g)

    def _pack_selfplay(self, g: int) -> list[dict]:
        """Generation g's self-play (as far as it got) packed into ``lineage.data``; returns the folders."""
        from .shards import pack
        out = []
        if not self.r.lineage.data:
            return out
        for n in sorted(self.r.sizes):
            src = os.path.join(self.gen_dir(g), "selfplay", str(n))
            if not os.path.isdir(src):
                continue
            rel = os.path.join(self.r.lineage.data, f"{self.r.name}-g{g:04d}-{n}")
            pack(src, self.path(rel), per_shard=1500)
            out.append({"generation": g, "size": n, "data": rel,
                        "games": len(glob.glob(os.path.join(src, "*.sgf")))})
        return out

    def publish(self, done: int | None = None) -> str | None:
        """Write the lineage's resume state into ``lineage.dir``: the best checkpoint and networks (the registry's
        files when they are the promoted ones), with ``training.init = "latest"`` the latest trained checkpoint
        when it is not the best's (``latest.pt``), ``lineage.json``, the ladder; with ``done`` = g, generation g is
        finished; else the generation in progress goes with it (its self-play so far packed as shards, its
        trained checkpoint, the stage to resume; in its train stage the training's last checkpoint, ``training.pt``;
        in its gate or anchors the games those lines have played), so that a new run folder (a fresh clone)
        continues it.
        Returns the lineage file (None without ``lineage.dir``)."""
        if not self.r.lineage.dir or self.state is None:
            return None
        from azgo.nets.quantize import copy_int8_copies, int8_path_for, int8_vnni_path_for
        lin = self.path(self.r.lineage.dir)
        os.makedirs(lin, exist_ok=True)
        best = self.state["best"]
        ckpt_dst = os.path.join(lin, "best.pt")
        write_portable_checkpoint(best["checkpoint"], ckpt_dst, self.r.root, self.dir)   # no machine path in it
        nets = {}
        registry = self.path(self.r.promotion.registry)
        for n, path in best["nets"].items():
            digest = sha256(path)
            holding = [f for m, f in self.r.promotion.files() if m == int(n)
                       and os.path.exists(os.path.join(registry, f)) and sha256(os.path.join(registry, f)) == digest]
            entry = holding[0] if holding else None  # the first registry file that holds this network
            promoted = entry is not None and not self.r.promotion.registry.startswith("<run>/")  # a run's registry goes with it
            if promoted:
                nets[n] = self.rel(os.path.join(registry, entry))
                here = os.path.join(lin, f"best{n}.onnx")
                for stale in (here, str(int8_path_for(here)), str(int8_vnni_path_for(here))):
                    if os.path.exists(stale):
                        os.remove(stale)
            else:
                dst = os.path.join(lin, f"best{n}.onnx")
                if not os.path.exists(dst) or sha256(dst) != sha256(path):
                    atomic_copy(path, dst)
                copy_int8_copies(path, dst)
                nets[n] = self.rel(dst)
        finished = done if done is not None else self.state["generation"] - 1
        path = os.path.join(lin, LINEAGE_FILE)
        earlier = {}  # generations published before this run folder began (a fresh clone's state has none of them)
        if os.path.exists(path):
            try:
                earlier = json.loads(Path(path).read_text()).get("generations", {})
            except ValueError:
                earlier = {}
        pub = {"recipe": self.r.name, "recipe_sha256": self.r.sha256, "generation": finished,
               "best": {"generation": best["generation"], "checkpoint": "best.pt",
                        "checkpoint_sha256": sha256(ckpt_dst), "nets": nets,
                        "nets_sha256": {n: sha256(p) for n, p in best["nets"].items()}},
               "selfplay": [{k: s[k] for k in ("generation", "size", "data")} for s in self.state["selfplay"]
                            if s.get("data") and s["generation"] <= finished],
               "ladder": self.state["ladder"], "core_hours": self.state.get("core_hours", 0.0),
               "generations": {**{k: v for k, v in earlier.items() if int(k) <= finished},
                               **relative_paths({k: {kk: vv for kk, vv in self._with_kept_games(int(k), v).items()
                                                     if kk != "selfplay"}
                                                 for k, v in self.state["generations"].items() if int(k) <= finished},
                                                self.r.root, self.dir)}}
        latest = self.latest_trained(finished + 1) if self.r.training.init == "latest" else None
        latest_dst = os.path.join(lin, "latest.pt")
        if latest and latest["generation"] > best["generation"]:
            write_portable_checkpoint(latest["checkpoint"], latest_dst, self.r.root, self.dir)
            pub["latest"] = {"generation": latest["generation"], "checkpoint": "latest.pt",
                             "checkpoint_sha256": sha256(latest_dst)}
        elif os.path.exists(latest_dst):
            os.remove(latest_dst)
        cand = os.path.join(lin, "candidate.pt")
        if done is None:
            g = self.state["generation"]
            info = self._with_kept_games(g, self.state["generations"].get(str(g), {}))  # lines done: games kept
            progress = {"generation": g, "stage": self.state["stage"], "selfplay": self._pack_selfplay(g),
                        "info": relative_paths({k: v for k, v in info.items() if k != "selfplay"},
                                               self.r.root, self.dir)}
            started = self._keep_started_lines(g, info)
            if started:
                progress["lines_started"] = started
            trained = os.path.join(self.gen_dir(g), "train", "checkpoint.pt")
            if STAGES.index(self.state["stage"]) > STAGES.index("train") and os.path.exists(trained):
                write_portable_checkpoint(trained, cand, self.r.root, self.dir)
                progress["candidate_checkpoint_sha256"] = sha256(cand)
            elif os.path.exists(cand):
                os.remove(cand)
            training = os.path.join(lin, TRAINING_CHECKPOINT)  # a training stopped part way: where it got to
            if self.state["stage"] == "train" and os.path.exists(trained):
                write_portable_checkpoint(trained, training, self.r.root, self.dir)
                progress["training_checkpoint_sha256"] = sha256(training)
            elif os.path.exists(training):
                os.remove(training)
            past_quantize = STAGES.index(self.state["stage"]) > STAGES.index("quantize")
            nets = self._publish_candidate_nets(g if past_quantize else None, lin)
            if nets:
                progress["candidate_nets_sha256"] = nets
            pub["in_progress"] = progress
        else:
            self._publish_candidate_nets(None, lin)
            for stale in (cand, os.path.join(lin, TRAINING_CHECKPOINT)):
                if os.path.exists(stale):
                    os.remove(stale)
        atomic_write(path, json.dumps(pub, indent=1) + "\n")
        self.write_ladder(lin)
        what = f"generation {finished} done" + (f", generation {self.state['generation']} at stage "
                                                 f"{self.state['stage']}" if done is None else "")
        self.log(f"[publish] {self.rel(lin)}: {what}, best {best['generation']}")
        return path

    def _publish_candidate_nets(self, g: int | None, lin: str) -> dict:
        """Generation ``g``'s exported networks, their int8 copies and cards as ``candidate<N>.onnx`` (``.json``) in the
        lineage folder (past its quantize stage, its gate and anchors play them, and a promotion copies them: a fresh
        clone resumes with the very files); None: remove those files. Returns {size: sha256} of the networks written."""
        from azgo.nets.quantize import copy_int8_copies, int8_path_for, int8_vnni_path_for
        written = {}
        for n in self.r.export.bn_sizes:
            dst = os.path.join(lin, f"candidate{n}.onnx")
            src = self.cand_net(g, n) if g is not None else None
            if src is not None and os.path.exists(src):
                atomic_copy(src, dst)
                copy_int8_copies(src, dst)
                card = Path(src).with_suffix(".json")
                if card.exists():  # committed: its run paths as <run>/..., none of this machine's
                    atomic_write(Path(dst).with_suffix(".json"), json.dumps(
                        relative_paths(json.loads(card.read_text()), self.r.root, self.dir), indent=2) + "\n")
                written[str(n)] = sha256(dst)
            else:
                for f in (Path(dst), int8_path_for(dst), int8_vnni_path_for(dst), Path(dst).with_suffix(".json")):
                    if f.exists():
                        f.unlink()
        return written

    def _keep_selfplay(self, g: int, published: list[dict]) -> None:
        """Add generation g's self-play to the lineage's list (with its shard folder when published)."""
        data = {(p["generation"], p["size"]): p["data"] for p in published}
        keep = [s for s in self.state.get("selfplay", []) if s["generation"] != g]
        for s in self.state["generations"].get(str(g), {}).get("selfplay", []):
            keep.append({"generation": g, "size": s["size"], "path": s["path"],
                         **({"data": data[(g, s["size"])]} if (g, s["size"]) in data else {})})
        w = self.r.window  # the most generations any size trains on
        newest = sorted({s["generation"] for s in keep}, reverse=True)[: max([w.generations,
                                                                              *w.size_generations.values()])]
        self.state["selfplay"] = [s for s in keep if s["generation"] in newest]


def line_score(rec: dict) -> float:
    """A strength record's score: (wins + draws / 2) / games."""
    return (rec["wins"] + 0.5 * rec.get("draws", 0)) / rec["games"] if rec.get("games") else 0.0


def same_terms(m, rec: dict) -> bool:
    """Whether strength record ``rec`` (a card's: from the loop, whose opponent reads "gnugo", or from ``azgo
    strength``, "GNU Go 3.8 level 10") was played on anchor ``m``'s terms: opponent (GNU Go's level too),
    board, komi, handicap, seconds (or visits), threads and number of games."""
    def kind(name: str) -> str:
        low = str(name).lower()
        return "gnugo" if "gnu" in low else "pachi" if "pachi" in low else low
    if kind(rec.get("opponent", "")) != kind(m.opponent):
        return False
    if kind(m.opponent) == "gnugo":
        said = f"{rec.get('command', '')} {rec.get('opponent', '')}"
        if not re.search(rf"level {int(m.level)}\b", said):
            return False
    want_seconds = None if m.visits else float(m.seconds)
    return (rec.get("size") == m.size and float(rec.get("komi", 7.5)) == float(m.komi)
            and int(rec.get("handicap") or 0) == int(m.handicap) and int(rec.get("threads") or 1) == int(m.threads)
            and rec.get("games") == m.games
            and (rec.get("visits") or None) == (m.visits or None)
            and (None if rec.get("seconds") is None else float(rec["seconds"])) == want_seconds)


def _elo_of(score: float) -> float:
    from azgo.gtp.match import elo
    return elo(score)


def plot_ladder(rows: list[dict], png: str, title: str) -> bool:
    """Each line's Elo against the lineage's core-hours (promoted generations in green; the gate line chains
    the head-to-head steps from generation 0, the anchor lines are against their fixed opponent, each
    score smoothed by half a win on each side); needs matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    lines: dict[str, list] = {}
    for r in rows:
        if r.get("elo") in ("", None):
            continue
        lines.setdefault(r["line"], []).append((float(r.get("core_hours") or 0.0), float(r["elo"]),
                                                str(r["promoted"]) == "1", int(r["generation"])))
    if not lines:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, pts in sorted(lines.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        ax.plot([p[0] for p in pts if p[2]], [p[1] for p in pts if p[2]], "o", color="green")
        for x, y, _, gen in pts:
            ax.annotate(str(gen), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
    ax.set_xlabel("core-hours of the lineage (labels: generation)")
    ax.set_ylabel("Elo (gate: chained head to head; anchors: against them)")
    ax.set_title(f"{title}: ladder (green: promoted)")
    ax.set_xlim(left=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    with atomic_target(png, keep_suffix=True) as tmp:
        fig.savefig(tmp, dpi=90, bbox_inches="tight")
    plt.close(fig)
    return True
